"""Contact geometry: the contact points of a wheelset on its rails.

setup       the wheel and rail tables and the geometry parameters of a pair
distance    the distance function between the profiles of one side
search      the full search (trace line and the multipoint criteria of Ren & Jin 2010)
update      the points of the last full search re-located at a new pose
tracked     the online search that re-locates the last scan's minima
table       the contact table precomputed over the lateral displacement and roll
points      the search from Python (contact points at a pose, static contact)
analysis    rolling radius difference, contact angle and equivalent conicity over y
reference   plain NumPy references for the tests
"""
