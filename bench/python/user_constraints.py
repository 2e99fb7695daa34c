"""What a user constraint written in Python costs (docs/performance.md): the links of a cloth as the
built-in distance family, as one Python function per constraint (ModelBuilder.add_constraint) and as
one numpy function over all of them (add_vectorized_constraint), interleaved in one run.

Writes CSV (variant,round,frames,constraints,ms_per_frame,ns_per_projection), prints medians.
Usage: bench/python/user_constraints.py [--nodes 20] [--frames 30] [--rounds 5] [--csv FILE]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import pliant


def cloth(variant, nodes):
    grid = pliant.ModelBuilder()
    grid.add_cloth_grid(nodes_x=nodes, nodes_y=nodes, origin=(0, 1, 0))
    reference = grid.build()
    pairs = np.asarray(reference.constraint_particles("distance"), dtype=np.int64)
    rest = np.asarray(reference.rest_values("distance"))
    b = pliant.ModelBuilder()
    b.add_particles(reference.initial_positions, reference.masses)
    b.fix_particle(0)
    b.fix_particle(nodes - 1)
    params = pliant.ConstraintParameters(compliance=1e-7)
    if variant == "builtin":
        b.add_distances(pairs, params)
    elif variant == "python":
        for (i, j), r in zip(pairs, rest):

            def link(x, r=r):
                d = x[0] - x[1]
                length = np.sqrt(d @ d)
                g = d / length
                return length - r, np.array([g, -g])

            b.add_constraint(link, (i, j), params=params)
    else:

        def links(x, rows):
            d = x[:, 0] - x[:, 1]
            length = np.sqrt(np.einsum("ij,ij->i", d, d))
            g = d / length[:, None]
            return length - rest[rows], np.stack([g, -g], axis=1)

        b.add_vectorized_constraint(links, pairs, params=params)
    return b.build(), len(pairs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()
    settings = pliant.SolverSettings(substeps=4, iterations=2)
    variants = ["builtin", "python", "vectorized"]
    models = {v: cloth(v, args.nodes) for v in variants}
    rows, times = [], {v: [] for v in variants}
    for round_ in range(args.rounds):
        for v in variants if round_ % 2 == 0 else reversed(variants):
            model, count = models[v]
            solver, state = pliant.Solver(model, settings), pliant.State(model)
            start = time.perf_counter()
            for _ in range(args.frames):
                solver.step(state)
            ms = 1e3 * (time.perf_counter() - start) / args.frames
            projections = count * settings.substeps * settings.iterations
            times[v].append(ms)
            rows.append(f"{v},{round_},{args.frames},{count},{ms:.6f},{1e6 * ms / projections:.1f}")
    csv = "variant,round,frames,constraints,ms_per_frame,ns_per_projection\n" + "\n".join(rows) + "\n"
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(csv)
    else:
        sys.stdout.write(csv)
    count = models["builtin"][1]
    print(f"# {args.nodes} x {args.nodes} cloth, {count} links, {settings.substeps} substeps x {settings.iterations} "
          f"iterations, medians of {args.rounds} rounds:", file=sys.stderr)
    for v in variants:
        ms = statistics.median(times[v])
        ns = 1e6 * ms / (count * settings.substeps * settings.iterations)
        print(f"#   {v:10s} {ms:9.3f} ms/frame  {ns:9.0f} ns per projection", file=sys.stderr)


if __name__ == "__main__":
    main()
