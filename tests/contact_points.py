"""Test helper: contact point rows (solver.contact.geometry P_*) as they act.

A point's saddle (P_SADDLE) matters only where it lies below the rail (the two
points' patches join); above it a search may stop at any sample >= 0
(geometry._saddle_between). So rows are compared with the saddle clipped at 0
and its position only where the saddle is negative."""
import numpy as np

from solver.layout import P_SADDLE, P_SADDLE_POS


def acting(rows):
    """A copy of point rows (..., N_POINT_FIELDS) with the saddle fields as they act."""
    rows = np.array(rows, dtype=float, copy=True)
    joined = rows[..., P_SADDLE] < 0.0
    rows[..., P_SADDLE] = np.where(joined, rows[..., P_SADDLE], 0.0)
    rows[..., P_SADDLE_POS] = np.where(joined, rows[..., P_SADDLE_POS], 0.0)
    return rows
