"""A parameter study plotted with matplotlib: how far a hanging cloth sags, and how much its edges
stretch, as its stretch compliance and the number of substeps change.

Every run is independent, so the runs go to a process pool: the scene is pickled to the workers
(a scene pickles as its JSON text, a Model and a State as compact bytes). Writes a PNG.

Run: python3 examples/python/parameter_study.py [--out sag.png] [--frames 90] [--processes 2]
"""
import argparse
import itertools
import multiprocessing

import numpy as np

import pliant

SCENE = """{
  "name": "hanging-cloth",
  "solver": {"mode": "xpbd", "substeps": 4, "iterations": 1},
  "frames": 90,
  "objects": [{
    "type": "cloth", "name": "cloth", "grid": {"nodes": [20, 20], "size": [1.0, 1.0], "origin": [0.0, 1.0, 0.0]},
    "mass": 0.2, "stretch": {"compliance": 1e-6},
    "pins": [{"index": 0}, {"index": 19}]
  }]
}"""


def sag_and_strain(job):
    """One run: the cloth with stretch compliance `alpha` (m/N) and `substeps` substeps."""
    scene, alpha, substeps = job
    model = scene.model
    # Same model, new parameters: set through a Solver (the model itself is immutable).
    scene.settings.substeps = substeps
    solver = scene.solver()
    for i in range(model.constraint_count("distance")):
        solver.set_constraint_parameters("distance", i, {"compliance": alpha})
    state = scene.state()
    solver.run(state, scene.frames)
    pairs = model.constraint_particles("distance").astype(np.int64)
    x = state.positions
    strain = np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1) / model.rest_values("distance") - 1.0
    return 1.0 - x[:, 1].min(), float(np.mean(np.abs(strain)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="parameter_study.png")
    parser.add_argument("--frames", type=int, default=90)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()

    scene = pliant.parse_scene(SCENE, "parameter study")
    scene.frames = args.frames
    compliances = np.logspace(-8, -3, 6)
    substeps = [2, 8, 32]
    jobs = [(scene, a, s) for s, a in itertools.product(substeps, compliances)]
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        results = np.array(pool.map(sag_and_strain, jobs)).reshape(len(substeps), len(compliances), 2)

    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for s, row in zip(substeps, results):
        left.semilogx(compliances, row[:, 0], "o-", label=f"{s} substeps")
        right.loglog(compliances, row[:, 1], "o-", label=f"{s} substeps")
    left.set(xlabel="stretch compliance (m/N)", ylabel="sag below the pins (m)", title="Sag")
    right.set(xlabel="stretch compliance (m/N)", ylabel="mean |edge strain|", title="Edge strain")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"Hanging 20 x 20 cloth after {args.frames} frames (XPBD)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    for s, row in zip(substeps, results):
        print(f"{s:3d} substeps: sag " + " ".join(f"{v:.3f}" for v in row[:, 0]))
    # Softer cloth stretches more, and more substeps make a stiff cloth stiffer.
    assert np.all(np.diff(results[-1, :, 1]) > 0)
    assert results[-1, 0, 1] < results[0, 0, 1]


if __name__ == "__main__":
    main()
