"""Closed-form references for the track model: the pinned-pinned frequency of
a rail span (Euler-Bernoulli and Timoshenko) and the Winkler beam under a
point load."""
from __future__ import annotations

import math

import numpy as np

from .parameters import RailSection


def euler_pinned_pinned_frequency(section: RailSection, spacing: float) -> float:
    """(pi/L)^2 sqrt(E I / m) / (2 pi), Hz: the first bending frequency of a
    simply supported Euler-Bernoulli span L (the pinned-pinned frequency)."""
    return (math.pi / spacing) ** 2 * math.sqrt(
        section.youngs_modulus * section.vertical_inertia / section.mass_per_length) / (2 * math.pi)


def timoshenko_pinned_pinned_frequency(section: RailSection, spacing: float) -> float:
    """First bending frequency (Hz) of a simply supported Timoshenko span L with
    rotary inertia: the lower root of
    E I k^4 - rho A w^2 - rho I w^2 k^2 (1 + E / (kappa G)) + rho^2 I w^4 / (kappa G) = 0,
    k = pi / L (Timoshenko 1921; e.g. Han, Benaroya & Wei 1999, JSV 225)."""
    r = section
    rho = r.mass_per_length / r.area
    k = math.pi / spacing
    kg = r.vertical_shear_coefficient * r.shear_modulus
    a = rho * rho * r.vertical_inertia / kg
    b = -(rho * r.area + rho * r.vertical_inertia * k * k * (1.0 + r.youngs_modulus / kg))
    c = r.youngs_modulus * r.vertical_inertia * k ** 4
    w2 = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return math.sqrt(w2) / (2 * math.pi)


def winkler_response(section: RailSection, foundation_modulus: float, load: float, x):
    """Zimmermann / Winkler beam on an elastic foundation (k, N/m^2) under a point
    load P at x = 0: deflection w(x) = P beta / (2 k) e^(-beta|x|) (cos + sin)(beta|x|),
    beta = (k / (4 E I))^(1/4). Returns (w(x), beta); w positive along the load."""
    beta = (foundation_modulus / (4.0 * section.youngs_modulus * section.vertical_inertia)) ** 0.25
    ax = beta * np.abs(np.asarray(x, dtype=float))
    return load * beta / (2.0 * foundation_modulus) * np.exp(-ax) * (np.cos(ax) + np.sin(ax)), beta
