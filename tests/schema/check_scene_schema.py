#!/usr/bin/python3
"""docs/scene.schema.json is as strict as the scene loader where a schema can be (issue 16).

Every good scene (scenes/, tests/data/scenes, the fuzz seeds) must validate; every file in
tests/data/scenes/bad must fail, unless it is listed in LOADER_ONLY below with the reason a schema
cannot say what is wrong with it. A bad file that passes the schema and is not listed fails this
test, so a new bad file either gets a schema rule or a reason here. A listed file that the schema
does reject fails it too, so the list stays exact.

With the pliant executable given, each rejected file must also be rejected for the loader's reason:
one of the schema's errors is at the JSON path the loader's message names or inside it (or, for the rules that
tie two fields together, listed in ELSEWHERE, at the other field).

Usage: check_scene_schema.py SOURCE_DIR [PLIANT] (Debian's python3-jsonschema, scripts/install-deps.sh).
"""
import pathlib
import re
import subprocess
import sys

from schema_support import load_strict, validator as schema_validator

# Bad scenes whose fault is beyond what JSON Schema can express, and why.
LOADER_ONLY = {
    # Cross-references and uniqueness between array elements.
    "duplicate_name.json": "object names must be unique across the objects array",
    "particle_reference.json": "an index within the named object's particle count",
    "pin_index.json": "a pin index within the object's particle count",
    "probe_index.json": "a probe index within the object's particle count",
    "unknown_object.json": "an object name that no object has",
    "body_duplicate_name.json": "body names must be unique across the bodies array",
    "joint_unknown_body.json": "a body name that no body has",
    "joint_same_body.json": "body_a and body_b name the same body, once by name and once by index",
    "probe_unknown_joint.json": "a joint name that no joint has",
    # Rules between two numbers of one entry.
    "joint_limits_reversed.json": "lower above upper",
    # Geometry, known once the objects are generated.
    "empty_box.json": "a selection box that contains no particle",
    "attachment_target_overflow.json": "a path offset (target - particle position) that overflows a double",
    "surface_contact_thickness_huge.json": "the thickness against the mean edge length of the cloths' triangles",
    "particle_radius_above_links.json": "a particle radius against the mean length of its object's links",
    # The contents of the files a scene names.
    "mesh_collider_missing.json": "the mesh file does not exist",
    "mesh_collider_open.json": "the collider's OBJ mesh is not closed",
    "mesh_empty.json": "the mesh file has no elements",
    "mesh_index.json": "an element of the mesh file indexes past its vertices",
    "mesh_inverted_tet.json": "a tetrahedron of the mesh file is inverted",
    "mesh_missing.json": "the mesh file does not exist",
    "body_mesh_missing.json": "the body's mesh file does not exist",
    "body_hull_flat.json": "the convex hull's points lie in one plane",
    # The memory a scene needs, against the budget of the machine that loads it.
    "softbody_too_large.json": "10^9 particles: the memory estimate, against half of the machine's memory",
}

# Rules between two fields: the loader names one, the schema the other.
ELSEWHERE = {
    "particle_contact_without_radius.json": ("/particle_contact", "/objects"),
    "surface_contact_without_self_collision.json": ("/surface_contact", "/objects"),
    "body_static_velocity.json": ("/bodies/0/velocity", "/bodies/0"),
    "body_dynamic_path.json": ("/bodies/0/path", "/bodies/0"),
}


def loader_path(pliant, path):
    """The JSON path the loader's message names for a bad file ("FILE: /a/b: what"), or None."""
    result = subprocess.run([pliant, "validate", str(path)], capture_output=True, text=True, check=False)
    if result.returncode != 2:
        return f"exit {result.returncode}"
    match = re.search(re.escape(str(path)) + r": (/[^:]*): ", result.stderr)
    return match.group(1) if match else None


def main():
    root = pathlib.Path(sys.argv[1])
    pliant = sys.argv[2] if len(sys.argv) > 2 else None
    validator = schema_validator(root / "docs/scene.schema.json")
    data = root / "tests/data"
    good = sorted((root / "scenes").glob("*.json")) + sorted((data / "scenes").glob("*.json")) + \
        sorted((data / "scenes/limits").glob("*.json")) + sorted((data / "fuzz/scene").glob("seed-*.json"))
    bad = sorted((data / "scenes/bad").glob("*.json"))
    failures = []
    for path in good:
        errors = sorted(validator.iter_errors(load_strict(path)), key=lambda e: list(e.absolute_path))
        for error in errors[:3]:
            failures.append(f"{path.relative_to(root)}: a good scene fails the schema at "
                            f"/{'/'.join(map(str, error.absolute_path))}: {error.message}")
    if len(good) < 20:
        failures.append(f"only {len(good)} good scenes found under {root}")
    rejected = 0
    for path in bad:
        paths = []
        try:
            scene = load_strict(path)
            # Deepest first: the field at fault rather than the object that holds it.
            errors = sorted(validator.iter_errors(scene), key=lambda e: -len(e.absolute_path))
            paths = ["/" + "/".join(map(str, e.absolute_path)) for e in errors]
            why = f"{paths[0]}: {errors[0].message}" if errors else None
        except ValueError as e:  # json.JSONDecodeError is a ValueError
            why = f"not JSON: {e}"
        listed = path.name in LOADER_ONLY
        if why is None and not listed:
            failures.append(f"{path.relative_to(root)}: a bad scene passes the schema; give the schema the rule, "
                            "or list the file in LOADER_ONLY with the reason a schema cannot express it")
        elif why is not None and listed:
            failures.append(f"{path.relative_to(root)}: listed in LOADER_ONLY but the schema rejects it ({why}); "
                            "remove it from the list")
        elif why is not None:
            expected = loader_path(pliant, path) if pliant and paths else None
            if expected is not None:
                loader_at, schema_at = ELSEWHERE.get(path.name, (expected, expected))
                # At the field or inside it (a component of a vector the loader checks as a whole).
                near = any(p == schema_at or p.startswith(schema_at.rstrip("/") + "/") for p in paths)
                if expected != loader_at or not near:
                    failures.append(f"{path.relative_to(root)}: the loader refuses {expected}, the schema "
                                    f"{', '.join(sorted(set(paths)))}")
            rejected += 1
            print(f"rejected {path.name}: {why[:160]}")
    for name in sorted(set(LOADER_ONLY) - {p.name for p in bad}):
        failures.append(f"LOADER_ONLY names {name}, which is not in tests/data/scenes/bad")
    print(f"{len(good)} good scenes valid; {rejected} of {len(bad)} bad scenes rejected by the schema, "
          f"{len(LOADER_ONLY)} listed as beyond a schema")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
