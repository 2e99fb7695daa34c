"""numpy views of the State alias its memory (no copies), Model views are read-only, and what is
written through a view is what the solver steps: a moved position moves the particle, a force set
from an array accelerates it."""

import gc

import numpy as np
import pytest

import pliant
from conftest import hanging_cloth, pendulum


def test_state_views_are_float64_views_of_one_memory(cloth):
    model, _ = cloth
    state = pliant.State(model)
    n = model.particle_count
    for name, shape in [
        ("positions", (n, 3)),
        ("velocities", (n, 3)),
        ("previous_positions", (n, 3)),
        ("external_forces", (n, 3)),
        ("lambdas", (model.total_constraint_count,)),
        ("attachment_targets", (0, 3)),
    ]:
        a, b = getattr(state, name), getattr(state, name)
        assert a.dtype == np.float64 and a.shape == shape, name
        assert a.flags.writeable, name
        if a.size:
            # Two reads are two views of the same numbers, not copies.
            assert np.shares_memory(a, b), name
            assert not a.flags.owndata, name
    np.testing.assert_array_equal(state.positions, model.initial_positions)


def test_writing_a_position_moves_the_particle():
    # A pendulum at rest sideways with no gravity: moving the bob through the view changes what the
    # solver steps, and the distance constraint pulls it back to length 1 from where it was put.
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings(gravity=(0, 0, 0)))
    state = pliant.State(model)
    positions = state.positions
    before = state.hash()
    positions[1] = (0.0, 2.0, 0.0)  # straight up, twice the length
    assert state.hash() != before
    np.testing.assert_array_equal(state.positions[1], (0.0, 2.0, 0.0))
    solver.step(state)
    # Projected back onto the unit circle (a hard constraint, one projection), on the side it was
    # moved to.
    np.testing.assert_allclose(positions[1], (0.0, 1.0, 0.0), atol=1e-12)
    # The same view saw the step: it aliases the state the solver wrote.
    np.testing.assert_array_equal(positions, state.positions)


def test_views_keep_the_state_alive_and_setters_copy_into_place(cloth):
    model, _ = cloth
    state = pliant.State(model)
    view = state.positions
    velocities = state.velocities
    state.positions = state.positions + 1.0  # the setter copies into the same memory
    assert np.shares_memory(view, state.positions)
    np.testing.assert_array_equal(view, model.initial_positions + 1.0)
    state.velocities[:, 0] = 2.0
    np.testing.assert_array_equal(velocities[:, 0], 2.0)
    del state
    gc.collect()
    # The views hold the state: still readable, still what was written.
    np.testing.assert_array_equal(view, model.initial_positions + 1.0)
    with pytest.raises(ValueError, match=r"State.positions: expected shape \(64, 3\)"):
        s = pliant.State(model)
        s.positions = np.zeros((3, 3))


def test_external_forces_from_an_array_accelerate_the_particles():
    b = pliant.ModelBuilder()
    b.add_particles(np.zeros((3, 3)), [1.0, 2.0, 4.0])
    model = b.build()
    settings = pliant.SolverSettings(gravity=(0, 0, 0), time_step=0.01)
    solver = pliant.Solver(model, settings)
    state = pliant.State(model)
    forces = np.array([[1.0, 0, 0], [0, 2.0, 0], [0, 0, 4.0]])
    state.external_forces = forces
    for _ in range(10):
        solver.step(state)
    # v = F / m t: each particle reaches 0.1 m/s along its own axis; forces persist across steps.
    np.testing.assert_allclose(state.velocities, np.eye(3) * 0.1, atol=1e-12)
    np.testing.assert_array_equal(state.external_forces, forces)


def test_lambdas_and_attachment_targets_are_the_solvers():
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 1.0)
    b.add_attachment(0, (0, 0, 0), pliant.ConstraintParameters(compliance=1e-6))
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=10))
    state = pliant.State(model)
    targets = state.attachment_targets
    for _ in range(120):
        solver.step(state)
    # Hanging on a soft spring: lambda / h^2 is the weight, m g = 9.81 N (the force estimate).
    assert abs(pliant.constraint_forces(model, state, "attachment")[0]) == pytest.approx(9.81, rel=1e-3)
    assert state.lambdas[model.lambda_slice("attachment")][0] != 0.0
    # Moving the target through the view moves the particle after it.
    targets[0] = (0.5, 0.0, 0.0)
    for _ in range(120):
        solver.step(state)
    assert state.positions[0][0] == pytest.approx(0.5, abs=1e-6)


def test_model_arrays_are_read_only_views(cloth):
    model, cloth_object = cloth
    for name in ["initial_positions", "initial_velocities", "masses", "inverse_masses", "particle_radii"]:
        a = getattr(model, name)
        assert a.dtype == np.float64 and not a.flags.writeable, name
        with pytest.raises(ValueError):
            a[0] = 1.0
    inv = model.inverse_masses
    assert np.shares_memory(inv, model.inverse_masses)
    assert inv[0] == 0.0 and inv[7] == 0.0 and inv[1] > 0.0
    pairs = model.constraint_particles("distance")
    assert pairs.dtype == np.uint32 and pairs.shape == (model.constraint_count("distance"), 2)
    assert not pairs.flags.writeable
    rest = model.rest_values("distance")
    x = model.initial_positions
    np.testing.assert_allclose(rest, np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1), rtol=1e-15)
    params = model.constraint_parameters("distance")
    assert params.shape == (len(pairs), 3) and np.all(params[:, 0] == 1e-7) and np.all(params[:, 2] == 1.0)
    triangles = cloth_object.triangles
    assert triangles.shape == (2 * 7 * 7, 3) and triangles.max() == 63


def test_tet_and_triangle_index_arrays():
    b = pliant.ModelBuilder()
    box = b.add_tet_box(cells_x=2, cells_y=1, cells_z=1, size=(1.0, 0.5, 0.5))
    model = b.build()
    assert model.tets.shape == (12, 4)
    # The same tets (the generator stores the constraints in its own, parallel-friendly order).
    assert sorted(map(tuple, model.tets.tolist())) == sorted(map(tuple, box.tets.tolist()))
    x = model.initial_positions
    t = model.tets.astype(np.int64)
    volumes = np.einsum("ij,ij->i", x[t[:, 1]] - x[t[:, 0]], np.cross(x[t[:, 2]] - x[t[:, 0]], x[t[:, 3]] - x[t[:, 0]])) / 6
    np.testing.assert_allclose(model.rest_values("tet-volume"), volumes, rtol=1e-12)
    assert volumes.sum() == pytest.approx(0.25)
    surface = pliant.extract_surface(box.tets)
    assert surface.shape == box.triangles.shape


def test_reading_positions_each_frame_copies_nothing(cloth):
    model, _ = cloth
    solver = pliant.Solver(model, pliant.SolverSettings())
    state = pliant.State(model)
    address = state.positions.__array_interface__["data"][0]
    for _ in range(5):
        solver.step(state)
        assert state.positions.__array_interface__["data"][0] == address


def test_views_stay_valid_when_a_step_is_refused():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings())
    state = pliant.State(model)
    positions = state.positions
    address = positions.__array_interface__["data"][0]
    state.external_forces[1] = (np.nan, 0, 0)
    with pytest.raises(pliant.StepRefused):
        solver.step(state)
    assert state.positions.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(positions, model.initial_positions)


def test_assign_copies_in_place_and_refuses_another_model(cloth):
    model, _ = cloth
    state = pliant.State(model)
    view = state.positions
    other = state.copy()
    other.positions[:] = 3.0
    state.assign(other)
    assert np.all(view == 3.0)
    with pytest.raises(ValueError, match="different models"):
        state.assign(pliant.State(pendulum()))
