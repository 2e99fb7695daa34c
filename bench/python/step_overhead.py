"""Overhead of stepping from Python, measured in one run, interleaved (docs/performance.md).

On scene A (cloth-100-2m) it times, round after round and in alternating order:
  python   `for _ in range(frames): solver.step(state)`, each step a call from Python (GIL released
           inside);
  cpp      `solver.run(state, frames)`: the same steps in a C++ loop (the GIL released once);
  bench    pliant.run_benchmark(scene, threads, frames): what `pliant bench` measures, a Solver
           built and stepped entirely in C++ (only Solver::step timed);
each from the scene's initial state, so every round does the same work (the state hashes must
agree). On shared, loaded cores the rounds scatter by a few percent, more than the overhead itself,
so the fixed cost of one call from Python is also measured alone: a one-particle model stepped
`calls` times from Python and in C++ (variants call_python and call_cpp, in us per step); that cost
over scene A's ms per frame is the overhead the scene rows cannot resolve. Then the cost of reading
positions each frame: `state.positions` (a view, no copy) against copying them.

Writes CSV (variant,threads,round,frames,ms_per_frame,state_hash), prints medians and the
overhead of python over cpp and over bench in percent.

Usage: bench/python/step_overhead.py [--rounds 7] [--frames 60] [--threads 1] [--csv FILE]
(with the module importable: PYTHONPATH=build/release/python /usr/bin/python3 ..., README "Python")
"""
import argparse
import statistics
import sys
import time

import numpy as np

import pliant


def python_loop(scene, frames):
    solver, state = scene.solver(), scene.state()
    start = time.perf_counter()
    for _ in range(frames):
        solver.step(state)
    return time.perf_counter() - start, state.hash()


def cpp_loop(scene, frames):
    solver, state = scene.solver(), scene.state()
    start = time.perf_counter()
    solver.run(state, frames)
    return time.perf_counter() - start, state.hash()


def bench_row(scene, frames, threads):
    r = pliant.run_benchmark(scene, threads, frames)
    return r["ms_per_frame"] * frames / 1e3, r["state_hash"]


def call_cost(calls):
    """us per step of a one-particle model: from a Python loop and from Solver.run (a C++ loop)."""
    b = pliant.ModelBuilder()
    b.add_particle((0.0, 0.0, 0.0), 1.0)
    model = b.build()
    settings = pliant.SolverSettings(substeps=1)
    solver, state = pliant.Solver(model, settings), pliant.State(model)
    step = solver.step
    start = time.perf_counter()
    for _ in range(calls):
        step(state)
    python_us = (time.perf_counter() - start) / calls * 1e6
    solver, state = pliant.Solver(model, settings), pliant.State(model)
    start = time.perf_counter()
    solver.run(state, calls)
    cpp_us = (time.perf_counter() - start) / calls * 1e6
    return python_us, cpp_us


def read_cost(state, reads):
    """ns per read of state.positions (a view) and of a copy of them, and whether the view aliases."""
    start = time.perf_counter()
    for _ in range(reads):
        view = state.positions
    view_ns = (time.perf_counter() - start) / reads * 1e9
    start = time.perf_counter()
    for _ in range(reads // 10):
        copy = state.positions.copy()
    copy_ns = (time.perf_counter() - start) / (reads // 10) * 1e9
    return view_ns, copy_ns, np.shares_memory(view, state.positions) and not np.shares_memory(copy, state.positions)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="cloth-100-2m")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()

    pliant.set_thread_count(args.threads)
    scene = pliant.benchmark_scene(args.scene)
    variants = {
        "python": lambda: python_loop(scene, args.frames),
        "cpp": lambda: cpp_loop(scene, args.frames),
        "bench": lambda: bench_row(scene, args.frames, args.threads),
    }
    variants["cpp"]()  # warm up caches and the thread team
    rows, times, hashes = [], {v: [] for v in variants}, set()
    for round_ in range(args.rounds):
        order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        for name in order:
            seconds, state_hash = variants[name]()
            ms = 1e3 * seconds / args.frames
            times[name].append(ms)
            hashes.add(state_hash)
            rows.append(f"{name},{args.threads},{round_},{args.frames},{ms:.6f},{state_hash:016x}")
    calls = {"call_python": [], "call_cpp": []}
    for round_ in range(args.rounds):
        python_us, cpp_us = call_cost(args.calls)
        calls["call_python"].append(python_us)
        calls["call_cpp"].append(cpp_us)
        rows.append(f"call_python,{args.threads},{round_},{args.calls},{python_us / 1e3:.9f},")
        rows.append(f"call_cpp,{args.threads},{round_},{args.calls},{cpp_us / 1e3:.9f},")
    csv = "variant,threads,round,frames,ms_per_frame,state_hash\n" + "\n".join(rows) + "\n"
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(csv)
    else:
        sys.stdout.write(csv)

    median = {v: statistics.median(t) for v, t in times.items()}
    state = scene.state()
    view_ns, copy_ns, aliases = read_cost(state, 200_000)
    print(f"# {args.scene}, {args.threads} thread(s), {args.frames} frames x {args.rounds} rounds, medians:", file=sys.stderr)
    for v in variants:
        print(f"#   {v:6s} {median[v]:8.3f} ms/frame", file=sys.stderr)
    print(f"#   python over cpp:   {100 * (median['python'] / median['cpp'] - 1):+.2f} %", file=sys.stderr)
    print(f"#   python over bench: {100 * (median['python'] / median['bench'] - 1):+.2f} %", file=sys.stderr)
    per_call_us = statistics.median(calls["call_python"]) - statistics.median(calls["call_cpp"])
    print(f"#   one call from Python: {per_call_us:.2f} us more than in the C++ loop (one-particle model: "
          f"{statistics.median(calls['call_python']):.2f} against {statistics.median(calls['call_cpp']):.2f} us "
          f"per step) = {100 * per_call_us / 1e3 / median['cpp']:.3f} % of scene A's frame", file=sys.stderr)
    print(f"#   state.positions: {view_ns:.0f} ns per read (a view: {aliases}); a copy of them: {copy_ns:.0f} ns "
          f"({state.particle_count} particles)", file=sys.stderr)
    if len(hashes) != 1:
        print(f"# state hashes differ between variants: {sorted(hashes)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
