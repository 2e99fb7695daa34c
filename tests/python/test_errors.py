"""Bad arguments raise TypeError or ValueError (pliant.Error is a ValueError) naming the field,
never a crash: the named cases first, then every builder and solver method fed garbage."""

import itertools
import math

import numpy as np
import pytest

import pliant
from conftest import pendulum


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda b: b.add_particle((0, 0), 1.0), ValueError, r"add_particle: position: expected 3 numbers, got an array of shape \(2,\)"),
        (lambda b: b.add_particle("abc", 1.0), TypeError, "add_particle: position: expected 3 numbers, got str"),
        (lambda b: b.add_particle((0, 0, 0), "heavy"), TypeError, "add_particle: mass: expected a number, got str"),
        (lambda b: b.add_particle((0, 0, 0), -1.0), pliant.Error, "particle 2: mass must be >= 0 kg"),
        (lambda b: b.add_particle((0, math.nan, 0), 1.0), pliant.Error, "particle 2 position: expected finite"),
        (lambda b: b.add_distance(0, 7), pliant.Error, "distance constraint 0: particle index 7 out of range"),
        (lambda b: b.add_distance(0, -1), ValueError, "add_distance: b: particle index -1 out of range"),
        (lambda b: b.add_distance(0, 1.0), TypeError, "add_distance: b: expected an integer particle index, got float"),
        (lambda b: b.add_distance(0, 1, {"compliance": -1.0}), pliant.Error, "compliance must be a finite number >= 0"),
        (lambda b: b.add_distance(0, 1, {"stifness": 1.0}), ValueError, "add_distance: params: unknown key 'stifness'"),
        (lambda b: b.add_distance(0, 1, 5), TypeError, "add_distance: params: expected ConstraintParameters or a dict"),
        (lambda b: b.add_distances([[0, 1, 2]]), ValueError, r"add_distances: pairs: expected an \(m, 2\) array"),
        (lambda b: b.add_distances([[0.5, 1]]), TypeError, "add_distances: pairs: .*indices must be integers"),
        (lambda b: b.add_cloth_grid(nodes_x=1), pliant.Error, "nodesX and nodesY must be >= 2"),
        (lambda b: b.add_cloth_grid(nodes=4), TypeError, "add_cloth_grid: unexpected keyword argument 'nodes'"),
        (lambda b: b.add_cloth_grid(origin=(0, 0)), ValueError, "add_cloth_grid: origin: expected 3 numbers"),
        (lambda b: b.add_cloth_grid(bending="flexible"), ValueError, "add_cloth_grid: bending: unknown bending model 'flexible'"),
        (lambda b: b.add_chain(particles=1), pliant.Error, "needs at least 2 particles"),
        (lambda b: b.add_tet_box(cells_y=0), pliant.Error, "cells must be >= 1"),
        (lambda b: b.add_balloon(rings=1), pliant.Error, "rings >= 2"),
        (lambda b: b.add_tet_mesh([[0, 0, 0]], [[0, 1, 2, 3]]), pliant.Error, "vertex index out of range"),
        (lambda b: b.add_kinematic(0, "not a function"), TypeError, "add_kinematic: path must be callable"),
        (lambda b: b.add_constraint(None, [0]), TypeError, "add_constraint: function must be callable"),
        (lambda b: b.add_vectorized_constraint(lambda x, r: None, [[0, 1]]), None, None),
        (lambda b: b.add_vectorized_constraint(lambda x, r: None, [0, 1]), ValueError, r"particles: expected an \(m, k\) array"),
        (lambda b: b.add_collider("plane"), TypeError, "incompatible function arguments"),
        (lambda b: b.add_object("o", [0, 9]), pliant.Error, "object 'o': particle index 9 out of range"),
        (lambda b: b.set_particle_radius(0, -0.1), pliant.Error, "radius must be a finite number >= 0"),
        (lambda b: b.add_global_volume([]), pliant.Error, "needs at least one triangle"),
        (lambda b: setattr(b, "self_collision", "yes"), TypeError, "self_collision: expected True or False"),
    ],
)
def test_bad_builder_arguments_name_the_field(call, error, message):
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 1.0)
    b.add_particle((1, 0, 0), 1.0)
    if error is None:
        call(b)  # accepted
        return
    with pytest.raises(error, match=message):
        call(b)


def test_bad_colliders_name_the_field():
    with pytest.raises(pliant.Error, match="collider 0: sphere radius must be a finite number > 0"):
        pliant.ModelBuilder().add_collider(pliant.Collider.sphere((0, 0, 0), -1.0))
    with pytest.raises(ValueError, match="Collider.box: rotation: expected a non-zero finite quaternion"):
        pliant.Collider.box((0, 0, 0), (1, 1, 1), rotation=(0, 0, 0, 0))
    with pytest.raises(pliant.Error, match="rotation must be a unit quaternion"):
        pliant.ModelBuilder().add_collider(pliant.Collider.plane((0, 0, 0), (0, 0, 0)))
    with pytest.raises(pliant.Error, match="not closed"):
        pliant.Collider.mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(FileNotFoundError):
        pliant.Collider.mesh_file("/nonexistent/mesh.obj")


def test_bad_solver_and_state_arguments_name_the_field():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings())
    state = pliant.State(model)
    with pytest.raises(TypeError, match="Solver.step: expected a pliant.State, got int"):
        solver.step(3)
    with pytest.raises(pliant.Error, match="state does not match the model"):
        solver.step(pliant.State(pliant.ModelBuilder().build()))
    with pytest.raises(pliant.Error, match="setParticleMass: particle 5 out of range"):
        solver.set_particle_mass(5, 1.0)
    with pytest.raises(pliant.Error, match="no distance constraint 3"):
        solver.set_constraint_parameters("distance", 3, {"compliance": 0.0})
    with pytest.raises(ValueError, match="unknown constraint family 'spring'"):
        solver.set_constraint_parameters("spring", 0, {})
    with pytest.raises(pliant.Error, match="releaseParticle: particle 0 has mass 0"):
        solver.release_particle(0)
    with pytest.raises(TypeError, match="substep_observer: expected a callable"):
        solver.substep_observer = 3
    with pytest.raises(ValueError, match=r"State.velocities: expected shape \(2, 3\), got \(2,\)"):
        state.velocities = [1.0, 2.0]
    with pytest.raises(TypeError, match="Solver: settings must be a SolverSettings"):
        pliant.Solver(model, {"substeps": 2})
    with pytest.raises(TypeError, match="incompatible"):
        pliant.State("model")
    with pytest.raises(ValueError, match="set_thread_count: threads must be >= 1"):
        pliant.set_thread_count(0)
    with pytest.raises(IndexError, match="no distance constraint 9"):
        pliant.constraint_force_vectors(model, state, "distance", 9)
    with pytest.raises(pliant.Error, match="not a Pliant checkpoint"):
        import pickle

        pickle.loads(pickle.dumps(state).replace(b"PLIANTCK", b"PLIANTXX"))


GARBAGE = [None, "x", -1, 2**40, 1.5, math.nan, math.inf, [], [[]], [[1, 2]], (0, 0, 0), np.zeros((2, 2)), object()]


def test_garbage_in_every_builder_method_raises_cleanly():
    # Every method with every garbage value in every position: a clean Python exception or a
    # result, never a crash (which would end this process and fail the test).
    names = [n for n in dir(pliant.ModelBuilder) if n.startswith("add_") or n in ("fix_particle", "set_particle_radius", "position")]
    outcomes = {"ok": 0, "error": 0}
    for name in names:
        for arity in range(0, 4):
            for args in itertools.product(GARBAGE, repeat=arity) if arity < 3 else [tuple(GARBAGE[i % len(GARBAGE)] for i in range(k, k + 3)) for k in range(len(GARBAGE))]:
                b = pliant.ModelBuilder()
                b.add_particles(np.zeros((4, 3)) + np.arange(4)[:, None], 1.0)
                try:
                    getattr(b, name)(*args)
                    b.build()
                    outcomes["ok"] += 1
                except (TypeError, ValueError, IndexError, OverflowError):
                    outcomes["error"] += 1
    assert outcomes["error"] > 1000


def test_garbage_in_solver_and_diagnostics_raises_cleanly():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings())
    state = pliant.State(model)
    calls = [
        lambda a: solver.set_particle_mass(a, a),
        lambda a: solver.fix_particle(a),
        lambda a: solver.set_constraint_parameters(a, a, a),
        lambda a: solver.last_contacts(a),
        lambda a: pliant.constraint_values(model, state, a),
        lambda a: pliant.momentum(model, state, a),
        lambda a: pliant.State.load(a, model),
        lambda a: pliant.load_scene(a),
        lambda a: pliant.builtin_scene(a),
        lambda a: pliant.read_obj(a),
        lambda a: pliant.extract_surface(a),
        lambda a: pliant.count_intersecting_triangle_pairs(a, a),
        lambda a: setattr(state, "positions", a),
        lambda a: setattr(solver, "settings", a),
        lambda a: pliant.SolverSettings(time_step=a),
        lambda a: pliant.Topology(a, a, a),
    ]
    for call in calls:
        for value in GARBAGE:
            try:
                call(value)
            except (TypeError, ValueError, IndexError, OverflowError, OSError):
                pass
