"""Figures of the solver's results (matplotlib, Agg canvas: no display, no global
backend change): pressure maps of the non-Hertzian normal contact and creep
curves of the creep models. The solver itself draws nothing."""
import math
from dataclasses import replace

import numpy as np

from solver.contact.creep.forces import creep_forces
from solver.errors import CreepError
from solver.contact.normal.boundary_element import ExactNormalResult, label_patches


# pressure maps

def _map_patches(result):
    """(labels, patches, kind) of an ExactNormalResult or KikPiotrowskiResult for drawing."""
    pressure = np.asarray(result.pressure, dtype=float)
    x = np.asarray(result.x, dtype=float)
    y = np.asarray(result.y, dtype=float)
    if isinstance(result, ExactNormalResult):
        kind = f"exact BEM ({result.method}, {pressure.shape[0]}x{pressure.shape[1]} elements)"
        return result.labels, result.patches, kind
    dx = float(x[1] - x[0]) if x.size > 1 else 1.0
    labels, patches = label_patches(pressure, x, y, dx, float(result.dy))
    grid_total = sum(patch.normal_force for patch in patches)
    if grid_total > 0.0:  # report the KP quadrature's forces, not the plotting grid's sums
        scale = result.normal_force / grid_total
        patches = tuple(replace(patch, normal_force=patch.normal_force * scale) for patch in patches)
    return labels, patches, f"Kik-Piotrowski (eps = {result.reduction:g})"


def _draw_map(figure, axes, result, labels, patches, lateral_label):
    """Pressure map of one result on `axes`: lateral across (mm), rolling x up (mm), MPa as colour."""
    pressure = np.asarray(result.pressure, dtype=float)
    x = np.asarray(result.x, dtype=float)
    y = np.asarray(result.y, dtype=float)
    mesh = axes.pcolormesh(y * 1e3, x * 1e3, pressure / 1e6, shading="nearest", cmap="viridis")
    colorbar = figure.colorbar(mesh, ax=axes)
    colorbar.set_label("pressure (MPa)")
    if patches and min(pressure.shape) > 1:
        for patch in patches:
            axes.contour(y * 1e3, x * 1e3, (labels == patch.label).astype(float), levels=[0.5],
                         colors="white", linewidths=1.0)
            axes.annotate(f"{patch.label}: {patch.normal_force / 1e3:.1f} kN\n{patch.peak_pressure / 1e6:.0f} MPa",
                          (patch.centroid_y * 1e3, patch.centroid_x * 1e3), color="white", fontsize=8,
                          ha="center", va="center")
    axes.set_xlabel(lateral_label)
    axes.set_ylabel("rolling x (mm)")
    axes.set_aspect("equal", adjustable="box")


def plot_pressure_map(result, path, *, title=None):
    """Draw the pressure map of an ExactNormalResult or KikPiotrowskiResult to an image file.

    Lateral y across (mm), rolling x up (mm), pressure in MPa as colour, each
    labelled patch outlined and marked with its number, force and peak
    pressure. Uses matplotlib's Agg canvas (no display, no global backend
    change). Returns the path.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels, patches, kind = _map_patches(result)
    figure = Figure(figsize=(8.0, 5.0), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    _draw_map(figure, axes, result, labels, patches, "lateral y (mm)")
    total = getattr(result, "total_force", None)
    if total is None:
        total = result.normal_force
    axes.set_title(title or f"{kind}: N = {total / 1e3:.2f} kN, {len(patches)} patch(es)")
    figure.tight_layout()
    figure.savefig(str(path))
    return path


def plot_plane_pressure_maps(contact, path, *, title=None):
    """Draw the pressure maps of a WheelNormalContact, one panel per contact plane, to an image file.

    Each panel: the in-plane lateral coordinate s across (mm, positive
    towards the field side and up the profile), rolling x up (mm), pressure in
    MPa; its title gives the plane's contact angle, normal force, peak
    pressure and area. Matplotlib's Agg canvas. Returns the path.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    count = len(contact.results)
    figure = Figure(figsize=(6.0 * count + 1.0, 5.0), dpi=110)
    FigureCanvasAgg(figure)
    for k, (grid, result) in enumerate(zip(contact.grids, contact.results)):
        axes = figure.add_subplot(1, count, k + 1)
        labels, patches, _ = _map_patches(result)
        _draw_map(figure, axes, result, labels, patches, "lateral s in the contact plane (mm)")
        axes.set_title(f"plane {k + 1}: {math.degrees(grid.plane.angle):.1f} deg, N = "
                       f"{result.total_force / 1e3:.1f} kN\np_max {result.peak_pressure / 1e6:.0f} MPa, "
                       f"area {result.area * 1e6:.1f} mm^2", fontsize=9)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(str(path))
    return path


# creep curves

def plot_creep_curves(a, b, normal_force, friction, shear_modulus, poisson, speed, path,
                      models=("kalker", "she", "polach", "fastsim"), max_creepage=0.01,
                      points=121, options=None, title=None):
    """Draw creep force / (mu N) against creepage for several models side by side:
    left the longitudinal curve -Fx/(mu N) against xi (eta = phi = 0), right the
    lateral curve -Fy/(mu N) against eta (xi = phi = 0). Saved to `path` (PNG,
    matplotlib Agg backend). options: {model: options dict} for creep_forces.
    Returns the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    options = options or {}
    creep = np.linspace(0.0, float(max_creepage), int(points))
    mu_n = float(friction) * float(normal_force)
    if not mu_n > 0.0:
        raise CreepError("friction * normal_force must be > 0 to normalise the curves")
    fig = Figure(figsize=(11, 4.5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    styles = {"kalker": ":", "she": "--", "polach": "-", "fastsim": "-.", "fastrip": (0, (5, 1, 1, 1))}
    zero = np.zeros_like(creep)
    for model in models:
        opts = options.get(model, {})
        fx, _, _ = creep_forces(model, creep, zero, zero, a, b, normal_force, friction,
                                shear_modulus, poisson, speed, opts)
        _, fy, _ = creep_forces(model, zero, creep, zero, a, b, normal_force, friction,
                                shear_modulus, poisson, speed, opts)
        label = model if not opts else f"{model} {opts}"
        axes[0].plot(creep * 100.0, -fx / mu_n, linestyle=styles.get(model, "-"), label=label)
        axes[1].plot(creep * 100.0, -fy / mu_n, linestyle=styles.get(model, "-"), label=label)
    for ax, name in zip(axes, ("longitudinal creepage xi (%)", "lateral creepage eta (%)")):
        ax.set_xlabel(name)
        ax.set_ylim(0.0, 1.2)
        ax.axhline(1.0, color="0.6", lw=0.8)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("creep force / (mu N)   (-Fx, -Fy: rail on wheel)")
    axes[0].legend(loc="lower right")
    fig.suptitle(title or (f"a = {a*1e3:.2f} mm, b = {b*1e3:.2f} mm, N = {normal_force/1e3:.1f} kN, "
                           f"mu = {friction}, G = {shear_modulus/1e9:.0f} GPa, nu = {poisson}, "
                           f"V = {speed} m/s"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path
