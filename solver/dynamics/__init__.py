"""Wheelset dynamics.

rhs          the equations of motion: the time derivative of the state and the contact results
acceptance   the checks of a step (non-finite state, penetration, derailment, ...)
outputs      the derived outputs and the output record of a state
derailment   the flange-climb and derailment criteria
integrators/ the integrators of one communication step
"""
