"""Entry module of the wheelset FMU: ``resources/wheelset_slave.py`` inside the FMU.

It defines nothing: the slave class lives in ``resources/wheelset_fmu_slave.py``
(``fmu_wheelset/fmu/slave.py``), which Python imports once per process.

Why the indirection (measured, docs/limits_and_failures.md "Instantiate/free
cycles"): on every fmi2Instantiate, pythonfmu 0.7.0's C++ export library
(``findClass``) reads this file, compiles it and executes it again in a fresh
local namespace to find the Fmi2Slave subclass, and it never releases the
``__mro__`` lists it builds while looking. Every class this file *defines*
therefore stays alive, with its methods and their compiled code, once per
instantiation: with the slave defined here that was 84-88 kB per
instantiate/free cycle. Importing the class instead re-binds the same object.

The same function also releases one reference to this module's globals that it
never took (``Py_DECREF`` of the borrowed ``PyModule_GetDict``). A file that
defines functions compensates by accident (each new function holds the globals);
this one compensates on purpose: every execution hands one reference to
``keep_globals_alive``, so the dictionary is never freed under the module.
"""
from wheelset_fmu_slave import Wheelset, keep_globals_alive  # noqa: F401

keep_globals_alive(globals())
