"""What the schema checks share: the validator of one of docs/*.schema.json, and JSON read as
Pliant's loaders read it."""
import json
import math
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("no jsonschema module for " + sys.executable +
             "; install Debian's python3-jsonschema (scripts/install-deps.sh)")


def validator(schema_path):
    """A Draft 2020-12 validator of the schema at schema_path, the schema itself checked first."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# JSON as the loaders' parser (nlohmann::json) reads it: NaN and Infinity are not JSON, and a
# number past the double range (1e999) is refused, where Python's json module would accept both.


def _refuse_constant(name):
    raise ValueError("not JSON: " + name)


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number " + text + " is out of range")
    return value


def load_strict(path):
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant, parse_float=_finite_float)
