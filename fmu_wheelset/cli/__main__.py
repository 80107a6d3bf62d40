"""`python -m fmu_wheelset.cli ...`: the `wheelset-fmu` command."""
import sys

from fmu_wheelset.cli.main import main

sys.exit(main())
