"""No leak and no reference cycle over 10^5 steps from Python: reference counts of the objects
involved, the number of objects Python tracks, Python's own allocations and the process's resident
memory stay flat while a model with Python callbacks steps and its positions are read every step."""

import gc
import os
import sys
import tracemalloc

import numpy as np

import pliant

STEPS = 100_000


def resident_kib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize() // 1024


def test_no_leak_or_cycle_over_1e5_steps():
    b = pliant.ModelBuilder()
    rope = b.add_chain(particles=4, start=(0, 0, 0), end=(0.3, 0, 0), stretch={"compliance": 1e-6})
    b.add_kinematic(rope.first_particle, lambda t: (0.0, 0.01 * np.sin(t), 0.0))
    b.add_constraint(lambda x: (x[0, 1] + 1.0, np.array([[0.0, 1.0, 0.0]])), [rope.first_particle + 3], inequality=True)
    b.add_vectorized_constraint(
        lambda x, rows: (x[:, 0, 1] + 1.0, np.tile([0.0, 1.0, 0.0], (len(rows), 1, 1))), [[1], [2]], inequality=True
    )
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=2))
    state = pliant.State(model)
    observed = [0]

    def observer(s):
        observed[0] += 1

    solver.substep_observer = observer
    total = 0.0

    def run(n):
        nonlocal total
        for _ in range(n):
            solver.step(state)
            total += state.positions[3, 1]  # a view each step
            state.external_forces[2, 0] = 0.0

    run(2_000)  # warm up: caches, first allocations
    gc.collect()
    refs = [sys.getrefcount(o) for o in (model, solver, state, observer)]
    objects = len(gc.get_objects())
    tracemalloc.start()
    python_before = tracemalloc.get_traced_memory()[0]
    rss_before = resident_kib()

    run(STEPS)

    gc.collect()
    python_after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    rss_after = resident_kib()
    assert state.step_count == STEPS + 2_000 and observed[0] == 2 * state.step_count
    assert np.isfinite(total)
    assert [sys.getrefcount(o) for o in (model, solver, state, observer)] == refs
    assert abs(len(gc.get_objects()) - objects) < 50
    # A leak of even one small object per step would add megabytes here.
    assert python_after - python_before < 64 * 1024
    if not os.environ.get("PLIANT_SANITIZE"):  # ASan's quarantine keeps freed memory resident
        assert rss_after - rss_before < 4 * 1024


def test_an_observer_referring_to_its_solver_is_collected():
    # solver -> observer -> solver: a cycle through C++ that the Solver lets the collector see.
    model = pliant.ModelBuilder().build()
    collected = []

    class Marker:
        def __del__(self):
            collected.append(True)

    def make():
        solver = pliant.Solver(model, pliant.SolverSettings())
        marker = Marker()
        solver.substep_observer = lambda s: (solver, marker)
        state = pliant.State(model)
        solver.step(state)

    make()
    gc.collect()
    assert collected == [True]


def test_no_cycle_is_left_behind_by_steps_views_and_refusals():
    gc.collect()
    gc.disable()
    try:
        b = pliant.ModelBuilder()
        b.add_particle((0, 0, 0), 1.0)
        model = b.build()
        solver = pliant.Solver(model, pliant.SolverSettings())
        state = pliant.State(model)
        for i in range(1000):
            solver.step(state)
            _ = state.positions, state.velocities, model.inverse_masses, state.copy()
            if i % 100 == 0:
                state.external_forces[0] = (np.nan, 0, 0)
                try:
                    solver.step(state)
                except pliant.StepRefused:
                    pass
                state.external_forces[0] = (0, 0, 0)
        del solver, state, model, b
        # Everything above was freed by reference counting alone: nothing for the collector.
        assert gc.collect() == 0
    finally:
        gc.enable()
