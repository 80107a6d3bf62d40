"""`wheelset-fmu system vehicle`: the Manchester benchmark vehicle 1 as a
standard co-simulation system, an SSP archive of five FMUs (the vehicle-bodies
FMU and four wheelset FMUs) with libcosim's OspSystemStructure.xml in it
(fmu_wheelset/vehicle_fmu/system.py, docs/vehicle.md)."""
from __future__ import annotations


def register(subparsers):
    from fmu_wheelset.cli.args import fmu_file, output_file
    p = subparsers.add_parser(
        "system", help="write the vehicle as an SSP archive (libcosim, Ecos, any SSP tool)",
        description="Write a co-simulation system as an SSP 1.0 archive: SystemStructure.ssd "
                    "(one .ssd per case), the parameter sets (.ssv) of the cases, the FMUs, and "
                    "libcosim's OspSystemStructure.xml; every file is checked against its "
                    "published schema before the archive is written (docs/vehicle.md runs it in "
                    "libcosim and Ecos). Without --fmu the wheelset FMU is built (about 3 min).")
    p.add_argument("system", choices=["vehicle"],
                   help="vehicle: the Manchester benchmark vehicle 1 over four wheelset FMUs")
    p.add_argument("--out", type=output_file(".ssp"), required=True, help="the .ssp archive to write")
    p.add_argument("--fmu", type=fmu_file,
                   help="Wheelset.fmu to use as it is (default: build one, about 3 min)")
    p.add_argument("--scheme", choices=["gauss-seidel", "jacobi", "explicit"], default="jacobi",
                   help="the exchange of the master that will run it (the bodies FMU's "
                        "coupling.scheme; libcosim and Ecos: jacobi, the default)")
    p.set_defaults(func=run)


def run(args) -> int:
    import tempfile
    from pathlib import Path

    from fmu_wheelset.vehicle_fmu.build import build_vehicle_fmu
    from fmu_wheelset.vehicle_fmu.system import (CASES, SCHEME_NAMES, validate_system,
                                                 write_vehicle_ssp)
    with tempfile.TemporaryDirectory(prefix="wheelset-system-") as tmp:
        wheelset = args.fmu
        if wheelset is None:
            from fmu_wheelset.packaging.build import build_fmu
            wheelset = build_fmu(Path(tmp) / "Wheelset.fmu", quiet=True)
        bodies = build_vehicle_fmu(Path(tmp) / "VehicleBodies.fmu")
        staged = Path(tmp) / "vehicle.ssp"
        write_vehicle_ssp(staged, wheelset, bodies, scheme=SCHEME_NAMES.index(args.scheme))
        checked = validate_system(staged)
        Path(args.out).write_bytes(staged.read_bytes())
    print(f"wrote {args.out}: 5 components (bodies, wheelset1-4), cases {', '.join(CASES)}, "
          f"scheme {args.scheme}; {len(checked)} files valid against the SSP 1.0 and OSP schemas")
    return 0
