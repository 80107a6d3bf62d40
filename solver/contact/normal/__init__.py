"""Normal contact.

hertz             Hertz's ellipse, force and stiffness of one contact point
load_sharing      the points of one wheel sharing its load (the merged patch)
kik_piotrowski    the approximate non-Hertzian patch by virtual penetration
boundary_element  the exact non-Hertzian solution on a grid (Kalker's method)
contact_plane     non-Hertzian patches in their contact planes
"""
