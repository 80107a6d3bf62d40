#!/usr/bin/env python3
"""Build the wheelset FMU: `python build_fmu.py [--out dist/Wheelset.fmu]`.

Same as `wheelset-fmu build`; see fmu_wheelset/packaging/build.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fmu_wheelset.packaging.build import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
