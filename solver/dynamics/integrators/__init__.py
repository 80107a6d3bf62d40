"""The integrators of one communication step.

stages      what every integrator's stages share (the RHS with the full search or the update)
fixed       fixed-step RK4 and semi-implicit Euler
embedded    adaptive RK23 and RK45
rosenbrock  the adaptive linearly implicit W-method with a kept Jacobian
step        one whole communication step (advance_kernel) and its data
"""
