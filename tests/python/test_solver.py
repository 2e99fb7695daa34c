"""Solver.step from Python: refused steps raise StepRefused naming the particle and the constraint
and leave the state as it was; step releases the GIL; solvers on several Python threads give the
bits of a sequential run; Pliant's thread count does not change results."""

import os
import sys
import threading
import time

import numpy as np
import pytest

import pliant
from conftest import hanging_cloth, pendulum, step_n


def test_a_non_finite_force_is_refused_in_the_prediction_naming_the_particle():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings())
    state = pliant.State(model)
    state.external_forces[1] = (np.inf, 0, 0)
    before = state.copy()
    with pytest.raises(pliant.StepRefused, match="prediction") as caught:
        solver.step(state)
    e = caught.value
    assert e.status == "non-finite" and e.particle == 1 and e.constraint is None
    assert e.step == 1 and e.time == 0.0
    assert state.hash() == before.hash()
    assert isinstance(e, RuntimeError)


def test_an_excessive_displacement_names_the_particle_and_the_constraint():
    # A distance constraint whose rest length is far from the current one yanks its particle further
    # than the step allows: the replay names the constraint that did it.
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 0.0)
    b.add_particle((1, 0, 0), 1.0)
    b.add_particle((5, 0, 0), 0.0)
    b.add_particle((6, 0, 0), 1.0)
    b.add_distance(0, 1)
    b.add_distance(2, 3, rest_length=500.0)
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(max_displacement_per_step=10.0, gravity=(0, 0, 0)))
    state = pliant.State(model)
    with pytest.raises(pliant.StepRefused) as caught:
        solver.step(state)
    e = caught.value
    assert e.status == "excessive-displacement"
    assert e.particle == 3 and e.constraint == ("distance", 1)
    assert "particle 3" in str(e) and "distance constraint 1" in str(e)
    np.testing.assert_array_equal(state.positions, model.initial_positions)


def test_a_collider_contact_is_named():
    b = pliant.ModelBuilder()
    b.add_particle((0, -2, 0), 1.0)  # deep inside the sphere
    b.add_collider(pliant.Collider.sphere((0, 0, 0), 3.0))
    model = b.build()
    settings = pliant.SolverSettings(max_displacement_per_step=0.01, max_depenetration_velocity=float("inf"))
    solver = pliant.Solver(model, settings)
    with pytest.raises(pliant.StepRefused) as caught:
        solver.step(pliant.State(model))
    assert caught.value.particle == 0 and caught.value.collider == 0 and caught.value.constraint is None


def test_step_releases_the_gil():
    # Another Python thread counts while this one steps. With the switch interval raised, a thread
    # holding the GIL in C++ would never let it run: the count may grow only if step() released it.
    model, _ = hanging_cloth(nodes=40)
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=8, iterations=4))
    state = pliant.State(model)
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)  # blocks for an instant, releasing the GIL

    old = sys.getswitchinterval()
    worker = threading.Thread(target=counter)
    worker.start()
    try:
        sys.setswitchinterval(100.0)
        for method in (lambda: solver.step(state), lambda: solver.run(state, 3)):
            before = count[0]
            for _ in range(200):
                method()
                if count[0] != before:
                    break
            assert count[0] != before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        worker.join()


def test_solvers_on_several_python_threads_match_a_sequential_run():
    models = [hanging_cloth(nodes=12, compliance=c)[0] for c in (1e-7, 1e-6, 1e-5)]
    settings = pliant.SolverSettings(substeps=4, iterations=2)

    def run(model):
        solver = pliant.Solver(model, settings)
        state = pliant.State(model)
        step_n(solver, state, 40)
        return state.hash()

    expected = [run(m) for m in models]
    results = [None] * len(models)

    def worker(i):
        results[i] = run(models[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected


def test_one_solver_refuses_a_second_step_while_stepping():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=2))
    state = pliant.State(model)
    seen = []

    def observer(s):
        with pytest.raises(RuntimeError, match="stepping"):
            solver.step(s)
        with pytest.raises(RuntimeError, match="stepping"):
            solver.fix_particle(1)
        seen.append(s.time)

    solver.substep_observer = observer
    solver.step(state)
    assert seen == pytest.approx([1 / 120, 2 / 120])
    solver.substep_observer = None
    solver.step(state)
    assert len(seen) == 2


def test_an_observer_exception_is_raised_after_the_step():
    model = pendulum()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=3))
    state = pliant.State(model)
    calls = []

    def observer(s):
        calls.append(1)
        raise KeyError("stop here")

    solver.substep_observer = observer
    with pytest.raises(KeyError, match="stop here"):
        solver.step(state)
    assert state.step_count == 1 and len(calls) == 1  # the step completed; the observer ran once


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_count_does_not_change_the_bits(threads):
    model, _ = hanging_cloth(nodes=48)
    settings = pliant.SolverSettings(substeps=2, iterations=3, parallel_block_size=16)
    saved = pliant.thread_count()
    try:
        pliant.set_thread_count(1)
        reference = step_n(pliant.Solver(model, settings), pliant.State(model), 10).hash()
        pliant.set_thread_count(threads)
        assert pliant.thread_count() == threads
        assert step_n(pliant.Solver(model, settings), pliant.State(model), 10).hash() == reference
    finally:
        pliant.set_thread_count(saved)


def test_run_equals_steps_and_stops_at_a_refusal():
    model, _ = hanging_cloth()
    settings = pliant.SolverSettings(substeps=2)
    a, b = pliant.State(model), pliant.State(model)
    pliant.Solver(model, settings).run(a, 25)
    step_n(pliant.Solver(model, settings), b, 25)
    assert a.hash() == b.hash() and a.step_count == 25
    solver = pliant.Solver(model, settings)
    a.external_forces[5] = (np.nan, 0, 0)
    with pytest.raises(pliant.StepRefused):
        solver.run(a, 10)
    assert a.step_count == 25


def test_settings_validate_and_name_the_field():
    s = pliant.SolverSettings(substeps=4, mode="pbd", gravity=[0, -1, 0])
    assert s.substeps == 4 and s.mode == "pbd" and s.gravity.tolist() == [0, -1, 0]
    with pytest.raises(pliant.Error, match="substeps must be >= 1"):
        pliant.SolverSettings(substeps=0)
    with pytest.raises(TypeError, match="SolverSettings: substeps: expected an integer"):
        pliant.SolverSettings(substeps=2.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'substep'"):
        pliant.SolverSettings(substep=2)
    with pytest.raises(ValueError, match="mode: unknown solver mode 'pdb'"):
        pliant.SolverSettings(mode="pdb")
    s.time_step = -1.0
    with pytest.raises(pliant.Error, match="timeStep"):
        pliant.Solver(pendulum(), s)
    d = pliant.SolverSettings.small_steps(20).as_dict()
    assert d["substeps"] == 20 and d["iterations"] == 1
    assert pliant.SolverSettings(**d).as_dict() == d


def test_stage_times_count_the_pipeline_stages_without_changing_a_bit():
    scene = pliant.builtin_scene("cloth-sphere")
    timed = pliant.Solver(scene.model, scene.settings)
    plain = pliant.Solver(scene.model, scene.settings)
    assert timed.stage_timing is False
    timed.stage_timing = True
    a, b = pliant.State(scene.model), pliant.State(scene.model)
    timed.run(a, 40)
    plain.run(b, 40)
    assert a.hash() == b.hash()
    times = timed.stage_times()
    assert times["steps"] == 40
    stages = [k for k in times if k != "steps"]
    assert set(stages) == {"predict", "collider_contacts", "particle_contacts", "surface_contacts", "body_contacts",
                           "constraints", "contact_projection", "velocities", "step_end"}
    assert all(times[k] >= 0.0 for k in stages)
    assert times["constraints"] > 0.0 and times["collider_contacts"] > 0.0
    assert plain.stage_times()["steps"] == 0
    row = pliant.run_benchmark(scene, 1, 3, stages=True)
    assert row["stages"]["steps"] == 3 and row["stages"]["constraints"] > 0.0
    assert "stages" not in pliant.run_benchmark(scene, 1, 1)


def test_available_cores_counts_the_process_cpus():
    cores = pliant.available_cores()
    assert cores >= 1
    assert cores == len(os.sched_getaffinity(0))
