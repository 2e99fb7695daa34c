"""Rigid bodies and joints from Python (issue 17): built with ModelBuilder.add_body/add_joint or read
from a scene file, stepped, and read back from the state (poses, velocities, joint forces)."""

import numpy as np
import pytest

import pliant


def hanging_chain(links):
    """`links` boxes of 0.5 kg hanging straight down on hinges from the world at y = 2."""
    builder = pliant.ModelBuilder()
    above = None
    for k in range(links):
        body = builder.add_body(name=f"link_{k}", shape="box", half_extents=(0.02, 0.1, 0.02), mass=0.5,
                                position=(0.0, 2.0 - 0.1 - 0.2 * k, 0.0))
        builder.add_joint(type="hinge", body_a=above, body_b=body, anchor=(0.0, 2.0 - 0.2 * k, 0.0), axis=(0, 0, 1))
        above = body
    return builder.build()


def test_a_hanging_chains_hinges_carry_the_weight_below():
    model = hanging_chain(5)
    solver = pliant.Solver(model, pliant.SolverSettings.small_steps(20))
    state = pliant.State(model)
    solver.run(state, 30)
    forces = state.joint_forces()
    assert forces.shape == (5, 3)
    for k in range(5):
        assert forces[k, 1] == pytest.approx((5 - k) * 0.5 * 9.81, rel=1e-3)
    assert state.body_positions.shape == (5, 3)
    assert np.allclose(state.body_positions[:, 0], 0.0, atol=1e-6)
    assert np.allclose(np.linalg.norm(state.body_rotations, axis=1), 1.0)
    assert state.joint_torques().shape == (5, 3)


def test_builder_keywords_are_checked():
    builder = pliant.ModelBuilder()
    with pytest.raises(ValueError, match="shape"):
        builder.add_body(shape="cylinder", radius=0.1)
    with pytest.raises(Exception, match="colour"):
        builder.add_body(shape="sphere", radius=0.1, colour="red")
    hull = builder.add_body(shape="convex_hull", points=[(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)])
    assert hull == 0
    with pytest.raises(ValueError, match="type"):
        builder.add_joint(type="ball", body_b=0)


def test_the_hinge_chain_scene_steps_and_its_probes_read_the_bodies():
    scene = pliant.builtin_scene("hinge-chain")
    solver, state = scene.solver(), scene.state()
    start = state.body_positions.copy()
    solver.run(state, 10)
    assert state.body_positions.shape == (10, 3)
    assert state.body_positions[9, 1] < start[9, 1]  # the free end swings down
    kinds = [p["kind"] for p in scene.probes]
    assert "joint-force" in kinds and "body" in kinds


def test_a_state_with_bodies_pickles_bit_identically():
    import pickle

    model = hanging_chain(3)
    solver = pliant.Solver(model, pliant.SolverSettings.small_steps(10))
    state = pliant.State(model)
    state.body_velocities[2] = (0.5, 0.0, 0.0)  # a writable view: kick the lowest link
    solver.run(state, 5)
    copy = pickle.loads(pickle.dumps(state))
    assert copy.hash() == state.hash()
    assert np.array_equal(copy.body_rotations, state.body_rotations)
    assert np.array_equal(copy.joint_forces(), state.joint_forces())
    solver.run(state, 5)
    solver.run(copy, 5)
    assert copy.hash() == state.hash()


def test_a_box_hanging_from_a_fixed_particle_pulls_it_with_its_weight():
    """V16 coupling: at rest the body attachment's force on the particle is the box's weight m g."""
    builder = pliant.ModelBuilder()
    p = builder.add_particle((0.0, 0.0, 0.0), 0.0)
    box = builder.add_body(shape="box", half_extents=(0.1, 0.1, 0.1), mass=2.0, position=(0.0, -0.1, 0.0))
    assert builder.add_body_attachment(p, box) == 0
    with pytest.raises(Exception, match="body"):
        builder.add_body_attachment(p, 5)
    model = builder.build()
    solver = pliant.Solver(model, pliant.SolverSettings.small_steps(10))
    state = pliant.State(model)
    solver.run(state, 30)
    fx, fy, fz = solver.body_attachment_force(0)
    assert abs(-fy - 2.0 * 9.81) < 1e-6 * 2.0 * 9.81
    assert abs(state.body_positions[0, 1] + 0.1) < 1e-9


def test_stack_mass_scaling_rests_a_tall_column_at_few_passes():
    """SolverSettings.body_stack_mass_scaling (1/m): 10 boxes of 0.2 m on the ground at 8 substeps x 8
    passes rest with it (k = 10) and not without (tests/scenario/rigid_contacts_test.cpp measures the
    same column from C++)."""
    material = {"static_friction": 0.6, "dynamic_friction": 0.5}
    builder = pliant.ModelBuilder()
    builder.add_collider(pliant.Collider.plane((0, 0, 0), (0, 1, 0), material))
    for k in range(10):
        builder.add_body(shape="box", half_extents=(0.1, 0.1, 0.1), mass=1.0, position=(0.0, 0.1 + 0.2 * k, 0.0),
                         material=material)
    model = builder.build()
    drifts = {}
    for scaling in (0.0, 10.0):
        settings = pliant.SolverSettings.small_steps(8)
        settings.body_contact_passes = 8
        settings.body_velocity_passes = 1
        settings.sleeping = False
        settings.body_stack_mass_scaling = scaling
        assert settings.as_dict()["body_stack_mass_scaling"] == scaling
        solver = pliant.Solver(model, settings)
        state = pliant.State(model)
        solver.run(state, 60)
        settled = state.body_positions.copy()
        solver.run(state, 120)
        drifts[scaling] = np.abs(state.body_positions - settled).max()
    assert drifts[10.0] < 1e-5
    assert drifts[0.0] > 1e-3
    with pytest.raises(pliant.Error, match="bodyStackMassScaling"):
        pliant.SolverSettings(body_stack_mass_scaling=-1.0)
