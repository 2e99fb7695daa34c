"""Diagnostics as numbers and arrays: momentum conserved by internal constraints, the force a
hanging pendulum's rod carries equal to the bob's weight, the residual falling with iterations,
energy bookkeeping of a free fall, and a tet mesh read into arrays."""

import numpy as np
import pytest

import pliant
from conftest import step_n


def test_internal_constraints_conserve_linear_momentum():
    # Two free particles joined by a stretched spring, no gravity: PBD's mass-weighted projection
    # moves the centre of mass only with the momentum it had (Mueller et al. 2007, sec. 3.3).
    b = pliant.ModelBuilder()
    b.add_particles(np.array([[0.0, 0.0, 0.0], [1.5, 0.2, 0.0]]), np.array([1.0, 3.0]),
                    velocities=np.array([[0.3, 0.0, 0.1], [0.0, -0.2, 0.0]]))
    b.add_distance(0, 1, pliant.ConstraintParameters(compliance=1e-3), rest_length=1.0)
    model = b.build()
    settings = pliant.SolverSettings(gravity=(0.0, 0.0, 0.0), substeps=4)
    solver, state = pliant.Solver(model, settings), pliant.State(model)
    before = pliant.momentum(model, state)
    step_n(solver, state, 50)
    after = pliant.momentum(model, state)
    assert before["mass"] == after["mass"] == 4.0
    np.testing.assert_allclose(before["linear"], [0.3, -0.6, 0.1], atol=1e-15)
    np.testing.assert_allclose(after["linear"], before["linear"], atol=1e-12)
    # Angular momentum is kept only to the order of the discretisation (v = (x1 - x0)/h is not
    # taken at x1's instant), so only its shape is checked here.
    assert after["angular"].shape == (3,) and after["centre_of_mass"].shape == (3,)
    # The spring moved them: the constraint acted, so conservation is not trivial.
    assert abs(np.linalg.norm(state.positions[1] - state.positions[0]) - np.hypot(1.5, 0.2)) > 0.1
    single = pliant.momentum(model, state, particles=[1])
    assert single["mass"] == 3.0


def test_a_hanging_pendulum_carries_its_weight_and_settles_to_a_small_residual():
    b = pliant.ModelBuilder()
    b.add_particle((0.0, 0.0, 0.0), 0.0)
    b.add_particle((0.0, -1.0, 0.0), 2.0)
    b.add_distance(0, 1, pliant.ConstraintParameters(compliance=1e-6))
    model = b.build()
    settings = pliant.SolverSettings(substeps=10)
    solver, state = pliant.Solver(model, settings), pliant.State(model)
    step_n(solver, state, 60)
    forces = pliant.constraint_forces(model, state, "distance")
    assert forces.shape == (1,)
    assert abs(forces[0]) == pytest.approx(2.0 * 9.81, rel=1e-3)
    particles, vectors = pliant.constraint_force_vectors(model, state, "distance", 0)
    assert list(particles) == [0, 1] and vectors.shape == (2, 3)
    # On the bob: its weight, upwards; on the pivot: the opposite.
    np.testing.assert_allclose(vectors[1], [0.0, 2.0 * 9.81, 0.0], rtol=1e-3, atol=1e-9)
    np.testing.assert_allclose(vectors[0], -vectors[1], atol=1e-12)
    residual = pliant.residual(model, state, settings)
    assert residual["count"] == 1 and residual["worst"] == ("distance", 0)
    assert residual["max"] < 1e-9 and residual["rms"] <= residual["max"]


def test_more_iterations_leave_a_smaller_residual():
    scene = pliant.builtin_scene("rope")
    residuals = []
    for iterations in (1, 16):
        settings = pliant.SolverSettings(mode="pbd", substeps=1, iterations=iterations)
        solver, state = pliant.Solver(scene.model, settings), scene.state()
        step_n(solver, state, 10)
        residuals.append(pliant.residual(scene.model, state, settings)["max"])
    assert residuals[1] < 0.2 * residuals[0]


def test_free_fall_turns_potential_into_kinetic_energy():
    b = pliant.ModelBuilder()
    b.add_particle((0.0, 10.0, 0.0), 0.5)
    model = b.build()
    settings = pliant.SolverSettings(time_step=0.01, substeps=1)
    solver, state = pliant.Solver(model, settings), pliant.State(model)
    e0 = pliant.energy(model, state, settings)
    step_n(solver, state, 100)
    e1 = pliant.energy(model, state, settings)
    assert e0["kinetic"] == 0.0 and e1["elastic"] == 0.0
    assert e1["kinetic"] == pytest.approx(0.5 * 0.5 * 9.81**2, rel=1e-9)  # v = g t after 1 s
    # Symplectic Euler drifts by m g^2 h t / 2 (the position lags the exact parabola).
    assert e1["total"] == pytest.approx(e0["total"], abs=0.5 * 9.81**2 * 0.01)
    assert e1["total"] == pytest.approx(e1["kinetic"] + e1["gravitational"] + e1["elastic"])


def test_tet_meshes_read_into_arrays(source_dir):
    nodes, tets = pliant.read_tet_mesh(source_dir / "tests/data/meshes/cube.node")
    assert nodes.shape == (8, 3) and nodes.dtype == np.float64
    assert tets.shape == (5, 4)
    assert tets.min() == 0 and tets.max() == 7
    volumes = [abs(np.linalg.det(nodes[t[1:]] - nodes[t[0]])) / 6 for t in tets]
    assert sum(volumes) == pytest.approx(1.0)  # the five tets fill the unit cube
    assert pliant.extract_surface(tets).shape == (12, 3)
