"""Shared fixtures of the Python tests. ctest runs them with PYTHONPATH at the built module and
PLIANT_CLI at the pliant executable (tests/CMakeLists.txt); run by hand with
PYTHONPATH=build/release/python /usr/bin/python3 -m pytest tests/python."""

import os
import pathlib

import numpy as np
import pytest

import pliant

SOURCE_DIR = pathlib.Path(os.environ.get("PLIANT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source_dir():
    return SOURCE_DIR


@pytest.fixture
def cli():
    path = os.environ.get("PLIANT_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("PLIANT_CLI does not name the pliant executable")
    return path


def hanging_cloth(nodes=8, compliance=1e-7, **grid):
    """A square cloth hanging from its two far corners; returns (model, cloth)."""
    b = pliant.ModelBuilder()
    cloth = b.add_cloth_grid(
        nodes_x=nodes,
        nodes_y=nodes,
        origin=(0.0, 1.0, 0.0),
        axis_y=(0.0, -1.0, 0.0),
        stretch=pliant.ConstraintParameters(compliance=compliance),
        **grid,
    )
    b.fix_particle(cloth.first_particle)
    b.fix_particle(cloth.first_particle + nodes - 1)
    return b.build(), cloth


@pytest.fixture
def cloth():
    return hanging_cloth()


def pendulum(length=1.0, mass=1.0, compliance=0.0):
    """A fixed particle at the origin and a free one at (length, 0, 0) joined by a distance constraint."""
    b = pliant.ModelBuilder()
    b.add_particle((0.0, 0.0, 0.0), 0.0)
    b.add_particle((length, 0.0, 0.0), mass)
    b.add_distance(0, 1, pliant.ConstraintParameters(compliance=compliance))
    return b.build()


def step_n(solver, state, n):
    for _ in range(n):
        solver.step(state)
    return state


def assert_close(a, b, tol):
    assert np.max(np.abs(np.asarray(a) - np.asarray(b))) < tol
