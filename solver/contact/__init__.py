"""Wheel-rail contact: the geometry of the contact points (geometry/), the normal
contact (normal/) and the tangential contact (creep/)."""
