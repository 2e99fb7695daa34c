"""User constraints written in Python: one function per constraint (slow, general) and a numpy
function over many constraints at once. Both must reproduce the built-in distance family, and a
function that raises or returns the wrong shape must refuse the step naming the constraint."""

import numpy as np
import pytest

import pliant


def chain(kind, particles=8, compliance=1e-6, order=None):
    """A chain released horizontally, its links built in (in `order`) or written in Python."""
    b = pliant.ModelBuilder()
    rope = b.add_chain(particles=particles, start=(0, 0, 0), end=(1.0, 0.0, 0.3))
    pairs = [(rope.first_particle + i, rope.first_particle + i + 1) for i in range(particles - 1)]
    rest = np.full(len(pairs), 1.0 / (particles - 1) * np.linalg.norm([1.0, 0.0, 0.3]))
    params = pliant.ConstraintParameters(compliance=compliance)
    builder_model = b.build()
    # Rebuild without the generator's links when they are written in Python.
    b = pliant.ModelBuilder()
    b.add_particles(builder_model.initial_positions, builder_model.masses)
    b.fix_particle(0)
    if kind == "builtin":
        b.add_distances([pairs[i] for i in (order if order is not None else range(len(pairs)))], params)
        rows = None
    elif kind == "python":

        def link(x):
            d = x[0] - x[1]
            length = np.sqrt(d @ d)
            g = d / length
            return length - rest[0], np.array([g, -g])

        rows = [b.add_constraint(link, pair, params=params) for pair in pairs]
    else:

        def links(x, which):
            d = x[:, 0, :] - x[:, 1, :]
            length = np.sqrt(np.einsum("ij,ij->i", d, d))
            g = d / length[:, None]
            return length - rest[which], np.stack([g, -g], axis=1)

        rows = b.add_vectorized_constraint(links, pairs, params=params)
    return b.build(), rows


def trajectory(model, steps=60):
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=4, iterations=2))
    state = pliant.State(model)
    out = []
    for _ in range(steps):
        solver.step(state)
        out.append(state.positions.copy())
    return np.array(out), state


def test_python_constraints_follow_the_builtin_distance_family():
    builtin, _ = trajectory(chain("builtin")[0])
    python_model, rows = chain("python")
    assert rows == list(range(7))
    python, state = trajectory(python_model)
    vectorized_model, vrows = chain("vectorized")
    vectorized, _ = trajectory(vectorized_model)
    # Grouped so that no two links of a group share a particle: even links, then odd ones. The
    # built-in family projected in that order is the reference.
    assert vrows.tolist() == [0, 4, 1, 5, 2, 6, 3]
    reordered, _ = trajectory(chain("builtin", order=np.argsort(vrows))[0])
    # The same C and gradient: the same trajectory to round-off, and the chain really swung.
    assert np.max(np.abs(python - builtin)) < 1e-9
    assert np.max(np.abs(vectorized - reordered)) < 1e-9
    assert np.linalg.norm(builtin[-1, -1] - builtin[0, -1]) > 0.3
    # Their multipliers are the generic family's.
    forces = pliant.constraint_forces(python_model, state, "generic")
    assert forces.shape == (7,) and np.all(forces < 0)  # links in tension: lambda < 0
    assert python_model.functions.startswith("7 user constraint function(s)")


def test_vectorized_groups_are_evaluated_once_per_pass_and_rows_name_the_constraints():
    b = pliant.ModelBuilder()
    cloth = b.add_cloth_grid(nodes_x=6, nodes_y=6, origin=(0, 1, 0))
    b.fix_particle(0)
    model_edges = b.build().constraint_particles("distance")
    b = pliant.ModelBuilder()
    b.add_cloth_grid(nodes_x=6, nodes_y=6, origin=(0, 1, 0), stretch={"compliance": 1.0})  # weak built-in links
    b.fix_particle(0)
    x0 = b.build().initial_positions
    edges = np.asarray(model_edges, dtype=np.int64)
    rest = np.linalg.norm(x0[edges[:, 0]] - x0[edges[:, 1]], axis=1)
    calls, seen_rows = [], set()

    def links(x, rows):
        calls.append(len(rows))
        seen_rows.update(rows.tolist())
        d = x[:, 0] - x[:, 1]
        length = np.linalg.norm(d, axis=1)
        g = d / length[:, None]
        return length - rest[rows], np.stack([g, -g], axis=1)

    index = b.add_vectorized_constraint(links, edges, params={"compliance": 1e-7})
    model = b.build()
    assert index.shape == (len(edges),) and len(set(index.tolist())) == len(edges)
    for row, c in enumerate(index):
        np.testing.assert_array_equal(model.generic_particles(int(c)), edges[row])
    solver = pliant.Solver(model, pliant.SolverSettings(iterations=3))
    solver.step(pliant.State(model))
    groups = len(calls) // 3
    assert len(calls) == 3 * groups and 4 <= groups <= 10  # a few colours of a grid, once per pass
    assert sum(calls) == 3 * len(edges) and seen_rows == set(range(len(edges)))
    assert cloth.particle_count == 36


def test_a_raising_constraint_refuses_the_step_with_its_exception_as_cause():
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 0.0)
    b.add_particle((1, 0, 0), 1.0)
    b.add_distance(0, 1)

    def broken(x):
        raise ZeroDivisionError("no rest length yet")

    index = b.add_constraint(broken, [0, 1])
    model = b.build()
    state = pliant.State(model)
    before = state.hash()
    with pytest.raises(pliant.StepRefused) as caught:
        pliant.Solver(model, pliant.SolverSettings()).step(state)
    e = caught.value
    assert e.constraint == ("generic", index) and e.particle == 1
    assert isinstance(e.__cause__, ZeroDivisionError) and "no rest length yet" in str(e)
    assert state.hash() == before


@pytest.mark.parametrize(
    "result, message",
    [
        (lambda x: 0.0, "expected it to return a tuple"),
        (lambda x: (0.0, np.zeros((3, 3))), r"gradient has shape \(3, 3\), expected \(2, 3\)"),
        (lambda x: ("C", np.zeros((2, 3))), "C: expected a number"),
        (lambda x: (np.nan, np.zeros((2, 3))), None),
    ],
)
def test_bad_results_refuse_the_step_and_say_why(result, message):
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 1.0)
    b.add_particle((1, 0, 0), 1.0)
    b.add_constraint(result, [0, 1])
    model = b.build()
    with pytest.raises(pliant.StepRefused) as caught:
        pliant.Solver(model, pliant.SolverSettings()).step(pliant.State(model))
    assert caught.value.constraint == ("generic", 0)
    if message:
        with pytest.raises(Exception, match=message):
            raise caught.value.__cause__


def test_a_vectorized_function_with_a_wrong_shape_is_named():
    b = pliant.ModelBuilder()
    b.add_particles([[0, 0, 0], [1, 0, 0], [2, 0, 0]], 1.0)
    b.add_vectorized_constraint(lambda x, rows: (np.zeros(len(rows) + 1), np.zeros(x.shape)), [[0, 1], [1, 2]])
    model = b.build()
    with pytest.raises(pliant.StepRefused) as caught:
        pliant.Solver(model, pliant.SolverSettings()).step(pliant.State(model))
    assert "vectorized constraint function: C has shape (2,), expected (1,)" in str(caught.value.__cause__)


def test_an_inequality_only_pushes():
    # A floor at y = 0 written in Python: the particle rests on it with its weight as the force.
    b = pliant.ModelBuilder()
    b.add_particle((0, 0.5, 0), 2.0)
    b.add_constraint(lambda x: (x[0, 1], np.array([[0.0, 1.0, 0.0]])), [0], inequality=True)
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=10))
    state = pliant.State(model)
    for _ in range(90):
        solver.step(state)
        assert state.lambdas[0] >= 0.0
    assert state.positions[0][1] == pytest.approx(0.0, abs=1e-9)
    assert pliant.constraint_forces(model, state, "generic")[0] == pytest.approx(2 * 9.81, rel=1e-6)


def test_diagnostics_call_python_constraints_and_raise_what_they_raise():
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 1.0)
    fail = [False]

    def floor(x):
        if fail[0]:
            raise ArithmeticError("diagnostic failure")
        return x[0, 1] - 1.0, np.array([[0.0, 1.0, 0.0]])

    b.add_constraint(floor, [0], params={"compliance": 1e-3})
    model = b.build()
    state = pliant.State(model)
    assert pliant.constraint_values(model, state, "generic").tolist() == [-1.0]
    assert pliant.energy(model, state, pliant.SolverSettings())["elastic_from_positions"] == pytest.approx(0.5 / 1e-3)
    fail[0] = True
    with pytest.raises(ArithmeticError, match="diagnostic failure"):
        pliant.constraint_values(model, state, "generic")
