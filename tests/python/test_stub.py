"""The .pyi stub describes the module: every public name, class member and keyword argument the
module has is in the stub and nothing else is, and every public function and class has a
docstring. (Editors and type checkers read the stub, so a missing entry is a missing completion.)"""

import ast
import inspect
import os
import pathlib
import re

import pytest

import pliant
from conftest import SOURCE_DIR

STUB = pathlib.Path(pliant.__file__).with_name("__init__.pyi")
# Aliases the stub defines for its own annotations; not part of the module.
STUB_ONLY = {
    "FloatArray", "IndexArray", "Int64Array", "ArrayLike", "Vec3Like", "QuatLike", "PathLikeStr", "ParametersLike",
    "MaterialLike", "Path", "RotationPath", "ConstraintFunction", "VectorizedConstraintFunction",
}


def stub_tree():
    return ast.parse(STUB.read_text())


def stub_names(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                names[t.id] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
    return names


def class_members(node):
    members = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members[item.name] = item
        elif isinstance(item, ast.AnnAssign):
            members[item.target.id] = item
    return members


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_every_public_name_is_in_the_stub_and_only_those():
    names = stub_names(stub_tree())
    module = public(pliant) - {"annotations"}
    assert module - set(names) == set(), "in the module, missing from the stub"
    dunder = {n for n in names if n.startswith("__")}
    assert all(hasattr(pliant, n) for n in dunder)
    assert set(names) - module - STUB_ONLY - dunder == set(), "in the stub, missing from the module"


def test_every_class_member_is_in_the_stub():
    names = stub_names(stub_tree())
    for name, node in names.items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(pliant, name)
        members = class_members(node)
        own = {m for m in public(cls) if not isinstance(cls, type) or not issubclass(cls, BaseException) or m in vars(cls)}
        if issubclass(cls, BaseException):
            own = {m for m in vars(cls) if not m.startswith("_")}
        assert own - set(members) == set(), f"{name}: in the module, missing from the stub"
        assert set(members) - own - {"__init__", "__len__", "__copy__", "__deepcopy__"} == set(), f"{name}: stub only"


def keyword_names(doc):
    """Keywords a kwargs-taking function documents as `name=default` in its docstring."""
    return set(re.findall(r"\b([a-z_]+)=", doc))


def test_keyword_only_generators_match_their_docstrings():
    members = class_members(stub_names(stub_tree())["ModelBuilder"])
    for name in ["add_cloth_grid", "add_chain", "add_tet_box", "add_tet_mesh", "add_cloth_mesh", "add_balloon",
                 "add_soft_body_from_surface"]:
        stub = {a.arg for a in members[name].args.kwonlyargs}
        doc = keyword_names(getattr(pliant.ModelBuilder, name).__doc__.split("\n\n", 1)[1])
        assert stub == doc, name
        # And the module accepts exactly those: an unknown keyword lists the accepted ones.
        try:
            positional = [[[0, 0, 0]], [[0, 0, 0, 0]]] if "mesh" in name else []
            if "surface" in name:
                positional = [[[0, 0, 0]], [[0, 0, 0]]]
            getattr(pliant.ModelBuilder(), name)(*positional, unknown=1)
        except TypeError as e:
            accepted = set(str(e).split("accepted: ")[1].rstrip(")").split(", "))
            assert accepted == stub, name


def test_settings_keywords_match():
    members = class_members(stub_names(stub_tree())["SolverSettings"])
    stub = {a.arg for a in members["__init__"].args.kwonlyargs}
    assert stub == set(pliant.SolverSettings().as_dict())


def test_every_public_function_and_class_is_documented():
    for name in public(pliant):
        obj = getattr(pliant, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__.strip()) > 10, name
        if inspect.isclass(obj):
            for m in public(obj):
                member = inspect.getattr_static(obj, m)
                if callable(member) or isinstance(member, (staticmethod, property)):
                    doc = getattr(obj, m).__doc__ if not isinstance(member, property) else member.__doc__
                    assert doc, f"{name}.{m}"


def test_examples_type_check_against_the_stub_and_wrong_calls_do_not(tmp_path, monkeypatch):
    # mypy (Debian's python3-mypy) reads the stub as an editor would: the examples pass, and calls
    # with a wrong argument type or an unknown keyword are reported.
    api = pytest.importorskip("mypy.api")
    monkeypatch.setenv("MYPYPATH", str(STUB.parent.parent))
    common = ["--no-incremental", "--cache-dir", os.devnull, "--ignore-missing-imports"]
    examples = sorted(str(p) for p in (SOURCE_DIR / "examples" / "python").glob("*.py"))
    out, err, status = api.run([*common, "--strict-optional", *examples])
    assert status == 0, out + err
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import pliant\n"
        "b = pliant.ModelBuilder()\n"
        "b.add_cloth_grid(nodez_x=3)\n"
        "pliant.State('model')\n"
        "s: str = pliant.SolverSettings().substeps\n"
    )
    out, err, status = api.run([*common, str(wrong)])
    assert status == 1 and out.count("error:") == 3, out
