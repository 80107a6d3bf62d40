"""Tangential contact: the creep forces of a contact point.

inputs         checks of the models' inputs
kalker         Kalker's linear theory and his coefficients
saturated      Shen-Hedrick-Elkins and Polach, with a saturating spin moment
fastsim        FASTSIM, Kalker's simplified theory
fastrip        FaStrip (Sichani, Enblom & Berg 2016)
models         the models by name and id, and the one kernel the dynamics calls
exact_rolling  Kalker's exact theory of steady rolling, as a reference
"""
