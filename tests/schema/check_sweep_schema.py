#!/usr/bin/python3
"""docs/sweep.schema.json accepts every good sweep file and refuses every bad one a schema can describe.

Good: sweeps/*.json (the built-in sweeps) and tests/data/sweeps/*.json. Bad: tests/data/sweeps/bad/*.json,
each refused by the schema unless listed in LOADER_ONLY with the reason a schema cannot see it; a listed
file that the schema does refuse fails this test too, so the list stays exact. With the pliant executable
given, every bad file is also refused by `pliant sweep` (exit 2, naming the file) before anything is written.

Usage: check_sweep_schema.py SOURCE_DIR [PLIANT] (Debian's python3-jsonschema, scripts/install-deps.sh).
"""
import pathlib
import subprocess
import sys
import tempfile

from schema_support import load_strict, validator as schema_validator

LOADER_ONLY = {
    "missing_pointer.json": "a pointer must name a field the base scene has",
    "unknown_builtin.json": "the built-in scene names are the library's",
    "zip_lengths.json": "zip needs equal counts across parameters",
    "log_nonpositive.json": "a log range needs positive ends",
    "probe_column.json": "a probe column must be one of the base scene's",
}

source = pathlib.Path(sys.argv[1])
pliant = sys.argv[2] if len(sys.argv) > 2 else None
validator = schema_validator(source / "docs" / "sweep.schema.json")
problems = []

good = sorted((source / "sweeps").glob("*.json")) + sorted((source / "tests/data/sweeps").glob("*.json"))
good = [g for g in good if g.name != "small_cloth.json"]  # the base scene of the test sweeps
for path in good:
    errors = list(validator.iter_errors(load_strict(path)))
    if errors:
        problems.append(f"{path}: refused by the schema: {errors[0].message}")

bad = sorted((source / "tests/data/sweeps/bad").glob("*.json"))
for path in bad:
    refused = any(True for _ in validator.iter_errors(load_strict(path)))
    if path.name in LOADER_ONLY and refused:
        problems.append(f"{path}: listed as loader-only but the schema refuses it; take it off LOADER_ONLY")
    if path.name not in LOADER_ONLY and not refused:
        problems.append(f"{path}: a bad sweep the schema accepts; add a rule or list it in LOADER_ONLY")
    if pliant:
        with tempfile.TemporaryDirectory() as work:
            out = pathlib.Path(work) / "out"
            r = subprocess.run([pliant, "sweep", str(path), "--out", str(out)], capture_output=True, text=True)
            if r.returncode != 2 or path.name not in r.stderr or out.exists():
                problems.append(f"{path}: pliant sweep gave exit {r.returncode} (expected 2, naming the file, "
                                f"nothing written): {r.stderr.strip()}")

print(f"check_sweep_schema: {len(good)} good and {len(bad)} bad sweep files")
if problems:
    print("\n".join(problems))
    sys.exit(1)
