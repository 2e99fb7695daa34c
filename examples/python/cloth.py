"""A cloth in ten lines: a 30 x 30 cloth pinned at two corners falls and hangs for 2 s."""
import pliant

builder = pliant.ModelBuilder()
cloth = builder.add_cloth_grid(nodes_x=30, nodes_y=30, origin=(0, 1, 0), stretch={"compliance": 1e-7}, bending="isometric")
builder.fix_particle(cloth.first_particle)                  # corner (0, 0)
builder.fix_particle(cloth.first_particle + 29)             # corner (29, 0)
model = builder.build()
solver = pliant.Solver(model, pliant.SolverSettings.small_steps(10))
state = pliant.State(model)
solver.run(state, 120)                                      # 2 s in a C++ loop
print(f"lowest point {state.positions[:, 1].min():.3f} m, state hash {state.hash_hex()}")
