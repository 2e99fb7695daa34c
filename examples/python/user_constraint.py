"""User constraints written in Python.

1. One function per constraint (add_constraint): a bead that slides without friction on a circular
   wire of radius R in the plane z = 0, C = |x - c| - R together with C = z. Each projection calls
   the function: fine for a few constraints, slow for thousands.
2. One numpy function over many constraints (add_vectorized_constraint): a cloth draped over a
   paraboloid bowl, every particle kept above y = k (x^2 + z^2) with C = y - k (x^2 + z^2) >= 0. The
   solver groups the rows so that a group shares no particle and calls the function once per group
   and Gauss-Seidel pass.

Run: python3 examples/python/user_constraint.py   (with the module importable, see the README)
"""
import numpy as np

import pliant

# 1. A bead on a wire: released at rest at angle a from the top of the circle, it slides down
# under gravity; energy conservation gives its speed at the bottom, v = sqrt(2 g R (1 + cos a)).
R, a = 0.5, 0.3
b = pliant.ModelBuilder()
bead = b.add_particle((R * np.sin(a), R * np.cos(a), 0.0), 0.1)


def on_circle(x):
    # C = |x_xy| - R, gradient the radial unit vector (in the wire's plane).
    r = np.hypot(x[0, 0], x[0, 1])
    return r - R, np.array([[x[0, 0] / r, x[0, 1] / r, 0.0]])


def in_plane(x):
    return x[0, 2], np.array([[0.0, 0.0, 1.0]])


b.add_constraint(on_circle, [bead])
b.add_constraint(in_plane, [bead])
model = b.build()
solver = pliant.Solver(model, pliant.SolverSettings.small_steps(40))
state = pliant.State(model)
fastest = 0.0
for _ in range(120):
    solver.step(state)
    fastest = max(fastest, float(np.linalg.norm(state.velocities[bead])))
expected = np.sqrt(2 * 9.81 * R * (1 + np.cos(a)))
print(f"bead: fastest {fastest:.3f} m/s at the bottom, energy conservation says {expected:.3f} m/s")
assert abs(fastest - expected) < 0.05 * expected
assert abs(np.hypot(*state.positions[bead, :2]) - R) < 1e-6

# 2. A cloth over a bowl: the bowl is one vectorised inequality per particle.
k = 1.5
b = pliant.ModelBuilder()
cloth = b.add_cloth_grid(nodes_x=24, nodes_y=24, size_x=1.2, size_y=1.2, origin=(-0.6, 1.2, -0.6),
                         stretch={"compliance": 1e-7}, bending="isometric", bending_params={"compliance": 1.0})


def above_bowl(x, rows):
    # x: (c, 1, 3) positions of c particles; rows: which of them (unused: the bowl is the same for all).
    p = x[:, 0, :]
    c = p[:, 1] - k * (p[:, 0] ** 2 + p[:, 2] ** 2)
    gradient = np.stack([-2 * k * p[:, 0], np.ones(len(p)), -2 * k * p[:, 2]], axis=1)[:, None, :]
    return c, gradient


b.add_vectorized_constraint(above_bowl, cloth.particles[:, None], inequality=True)
model = b.build()
solver = pliant.Solver(model, pliant.SolverSettings.small_steps(10))
state = pliant.State(model)
solver.run(state, 120)
p = state.positions
gap = p[:, 1] - k * (p[:, 0] ** 2 + p[:, 2] ** 2)
touching = int(np.sum(gap < 1e-3))
print(f"cloth: {touching} of {len(p)} particles on the bowl, lowest point {p[:, 1].min():.3f} m, "
      f"deepest penetration {max(0.0, -gap.min()):.2e} m")
# It fell from 1.2 m and lies on the bowl without passing through it.
assert gap.min() > -1e-3 and touching > 0 and p[:, 1].min() < 1.0
