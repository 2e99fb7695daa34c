"""The C++ API from Python: every generator, every constraint family with its material,
colliders, attachments and kinematic paths, each checked against the physics it must produce."""

import math

import numpy as np
import pytest

import pliant
from conftest import hanging_cloth, pendulum, step_n


def test_every_generator_builds_what_it_says():
    b = pliant.ModelBuilder()
    grid = b.add_cloth_grid(nodes_x=5, nodes_y=4, size_x=2.0, size_y=1.5, total_mass=2.0, bending="isometric")
    rope = b.add_chain(particles=6, start=(0, 3, 0), end=(1, 3, 0), particle_mass=0.05)
    box = b.add_tet_box(cells_x=2, cells_y=1, cells_z=1, origin=(5, 0, 0), size=(1, 0.5, 0.5), density=500)
    balloon = b.add_balloon(centre=(-3, 1, 0), radius=0.4, rings=4, segments=8, total_mass=0.3, pressure=1.2)
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float) + (0, 0, 8)
    soft = b.add_tet_mesh(vertices, [[0, 1, 2, 3]], density=100)
    sheet = b.add_cloth_mesh(vertices[:3] + (0, 0, 2), [[0, 1, 2]], total_mass=0.5, bending="dihedral")
    loose = b.add_particles(np.zeros((2, 3)) + (9, 9, 9), [1.0, 2.0])
    model = b.build()

    assert (grid.first_particle, grid.particle_count) == (0, 20)
    assert grid.triangles.shape == (2 * 4 * 3, 3)
    assert rope.first_particle == 20 and rope.particle_count == 6
    assert box.tets.shape == (12, 4) and box.particle_count == 12
    assert balloon.triangles.shape[0] > 0
    assert soft.tets.tolist() == [[soft.first_particle + i for i in range(4)]]
    assert sheet.particle_count == 3
    assert loose.tolist() == [model.particle_count - 2, model.particle_count - 1]
    masses = model.masses
    assert masses[grid.particles].sum() == pytest.approx(2.0)
    assert masses[rope.particles].sum() == pytest.approx(0.3)
    assert masses[box.particles].sum() == pytest.approx(500 * 0.25)
    assert masses[balloon.particles].sum() == pytest.approx(0.3)
    assert masses[soft.particles].sum() == pytest.approx(100 / 6)
    assert masses[sheet.particles].sum() == pytest.approx(0.5)
    counts = model.constraint_counts
    assert list(counts) == list(model.families) == list(pliant.Model.families)
    assert counts["isometric-bending"] > 0 and counts["tet-volume"] == 13 and counts["global-volume"] == 1
    assert model.constraint_count("max_distance") == counts["max-distance"] == 0
    # The rope's first particle is fixed; the objects are named.
    assert model.inverse_masses[rope.first_particle] == 0.0
    assert [o["name"] for o in model.objects] == ["cloth", "chain", "beam", "balloon", "softbody", "cloth"]


def test_soft_body_from_a_closed_surface_carries_it_as_a_skin():
    # A unit cube surface, 12 outward triangles (issue 18).
    corners = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=float)
    triangles = [[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
                 [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]]
    b = pliant.ModelBuilder()
    body = b.add_soft_body_from_surface(corners, triangles, name="cube", cell_size=0.3, density=200,
                                        translation=(0, 2, 0), neo_hookean={"youngs_modulus": 1e5, "poisson_ratio": 0.3})
    model = b.build()
    assert body.tets.shape[0] % 6 == 0 and body.tets.shape[0] > 0
    assert body.skin_triangles.tolist() == triangles
    assert model.masses[body.particles].sum() == pytest.approx(200.0)
    state = pliant.State(model)
    assert np.abs(body.skin_points(state.positions) - (corners + (0, 2, 0))).max() < 1e-12
    state.positions[:] += (1.0, 0.0, 0.0)
    assert np.abs(body.skin_points(state.positions) - (corners + (1, 2, 0))).max() < 1e-12
    with pytest.raises(pliant.Error, match="the surface is open"):
        b.add_soft_body_from_surface(corners, triangles[:-1], cell_size=0.3)


def test_every_constraint_family_by_hand_and_its_parameters():
    b = pliant.ModelBuilder()
    p = b.add_particles([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], 1.0)
    soft = pliant.ConstraintParameters(compliance=1e-3, damping=0.1, stiffness=0.5)
    assert b.add_distance(0, 1, soft) == 0
    assert b.add_distance(0, 2, {"compliance": 2e-3}, rest_length=0.5) == 1
    assert b.add_max_distance(1, 2, soft) == 0
    assert b.add_attachment(3, (0, 0, 2), soft, rest_distance=0.25) == 0
    assert b.add_dihedral_bending(0, 1, 2, 4, soft) == 0
    assert b.add_isometric_bending(0, 1, 2, 4, soft) == 0
    assert b.add_tet_volume(0, 1, 2, 3, soft) == 0
    assert b.add_global_volume([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], 1.5, soft) == 0
    assert b.add_distances([[1, 3], [2, 3]], soft).tolist() == [2, 3]
    model = b.build()
    assert model.total_constraint_count == 10
    np.testing.assert_allclose(model.rest_values("distance"), [1.0, 0.5, math.sqrt(2), math.sqrt(2)])
    assert model.rest_values("max-distance")[0] == pytest.approx(math.sqrt(2))
    assert model.rest_values("attachment")[0] == 0.25
    assert model.rest_values("tet-volume")[0] == pytest.approx(1 / 6)
    assert model.rest_values("global-volume")[0] == pytest.approx(1 / 6)
    assert model.rest_values("isometric-bending").shape == (1, 4)
    np.testing.assert_array_equal(model.constraint_parameters("distance")[1], [2e-3, 0.0, 1.0])
    np.testing.assert_array_equal(model.constraint_parameters("tet-volume")[0], [1e-3, 0.1, 0.5])
    np.testing.assert_array_equal(model.attachment_targets, [[0, 0, 2]])
    np.testing.assert_array_equal(model.volume_triangles(0), [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    np.testing.assert_array_equal(model.constraint_particles("attachment"), [[3]])
    assert p.tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("settings", [
    pliant.SolverSettings.xpbd(substeps=8, iterations=4),
    pliant.SolverSettings.small_steps(32),
    pliant.SolverSettings.pbd(substeps=8, iterations=10),
])
def test_a_pendulum_keeps_its_length_and_swings_with_the_right_period(settings):
    # V1-style check: a stiff pendulum released horizontally reaches the bottom after a quarter of
    # its large-amplitude period, T/4 = 1.854 sqrt(L/g) (complete elliptic integral K(1/sqrt(2))).
    model = pendulum(length=1.0)
    solver = pliant.Solver(model, settings)
    assert solver.settings.mode == settings.mode
    state = pliant.State(model)
    quarter = 1.8541 * math.sqrt(1.0 / 9.81)
    lowest_at, lowest = 0.0, 0.0
    while state.time < 0.8:
        solver.step(state)
        assert np.linalg.norm(state.positions[1]) == pytest.approx(1.0, abs=1e-3)
        if state.positions[1][1] < lowest:
            lowest, lowest_at = state.positions[1][1], state.time
    assert lowest == pytest.approx(-1.0, abs=2e-3)
    assert lowest_at == pytest.approx(quarter, abs=2.5 / 60)


def test_kinematic_particles_and_moving_attachments_follow_their_paths():
    b = pliant.ModelBuilder()
    rope = b.add_chain(particles=5, start=(0, 0, 0), end=(1, 0, 0), fix_start=False)
    b.add_kinematic(rope.first_particle, lambda t: (0.0, 0.5 * t, 0.0))
    tip = b.add_particle((3, 0, 0), 1.0)
    b.add_moving_attachment(tip, lambda t: np.array([3.0 + t, 0.0, 0.0]), {"compliance": 0.0})
    model = b.build()
    assert model.kinematic_particles.tolist() == [0]
    assert "kinematic" in model.functions and "attachment" in model.functions
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=4))
    state = pliant.State(model)
    step_n(solver, state, 60)
    np.testing.assert_allclose(state.positions[0], (0, 0.5, 0), atol=1e-12)
    np.testing.assert_allclose(state.attachment_targets[0], (4, 0, 0), atol=1e-12)
    np.testing.assert_allclose(state.positions[tip], (4, 0, 0), atol=1e-9)


def test_colliders_hold_particles_and_report_contacts():
    b = pliant.ModelBuilder()
    ball = b.add_particle((0, 0.5, 0), 1.0)
    on_box = b.add_particle((3, 1.0, 0), 1.0)
    b.set_particle_radius(ball, 0.05, count=2)
    ground = pliant.Collider.plane((0, 0, 0), (0, 1, 0), pliant.ContactMaterial(static_friction=0.5))
    assert ground.shape == "plane" and ground.material.static_friction == 0.5
    b.add_collider(ground)
    b.add_collider(pliant.Collider.box((3, 0.25, 0), (0.5, 0.25, 0.5), rotation=(1, 0, 0, 0)))
    b.add_collider(pliant.Collider.sphere((-3, 0, 0), 0.5))
    b.add_collider(pliant.Collider.capsule((-6, 0, 0), (-6, 1, 0), 0.2))
    model = b.build()
    assert [c.shape for c in model.colliders] == ["plane", "box", "sphere", "capsule"]
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=8))
    state = pliant.State(model)
    step_n(solver, state, 90)
    # Resting on the ground and on the box top, one radius above.
    assert state.positions[ball][1] == pytest.approx(0.05, abs=1e-3)
    assert state.positions[on_box][1] == pytest.approx(0.55, abs=1e-3)
    contacts = solver.last_contacts("collider")
    assert sorted(contacts["collider"].tolist()) == [0, 1]
    assert np.all(contacts["lambda"] > 0)
    assert solver.last_contact_count == 2
    d, normal = model.colliders[2].signed_distance((-3, 1, 0))
    assert d == pytest.approx(0.5) and normal.tolist() == [0, 1, 0]


def test_a_moving_collider_follows_its_python_path():
    b = pliant.ModelBuilder()
    p = b.add_particle((0, 0.2, 0), 1.0)
    b.add_collider(pliant.Collider.plane((0, 0, 0), (0, 1, 0)), path=lambda t: (0.0, 0.3 * t, 0.0))
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=4))
    state = pliant.State(model)
    step_n(solver, state, 120)  # 2 s: the floor rose to 0.6 m and carried the particle
    assert model.colliders[0].kinematic
    assert state.positions[p][1] == pytest.approx(0.6, abs=2e-3)


def test_mesh_collider_from_arrays_and_file(source_dir):
    vertices, triangles = pliant.read_obj(source_dir / "tests/data/meshes/sdf_cube.obj")
    assert vertices.shape[1] == 3 and triangles.shape[1] == 3 and triangles.dtype == np.uint32
    from_arrays = pliant.Collider.mesh(vertices, triangles, position=(0, -1, 0), max_cells_per_axis=16)
    from_file = pliant.Collider.mesh_file(
        source_dir / "tests/data/meshes/sdf_cube.obj", position=(0, -1, 0), max_cells_per_axis=16
    )
    for c in (from_arrays, from_file):
        assert c.shape == "mesh"
        np.testing.assert_array_equal(c.mesh_vertices, vertices)
    top = vertices[:, 1].max() - 1.0
    b = pliant.ModelBuilder()
    b.add_particle((0.1, top + 0.3, 0.1), 1.0)
    b.add_collider(from_file)
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=8))
    state = pliant.State(model)
    step_n(solver, state, 60)
    assert state.positions[0][1] == pytest.approx(top, abs=0.02)


def test_solver_edits_between_steps():
    model, cloth = hanging_cloth(nodes=6)
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=4))
    assert solver.model is model
    state = pliant.State(model)
    step_n(solver, state, 30)
    corner = cloth.first_particle + 5
    held = state.positions[corner].copy()
    solver.release_particle(corner)
    assert solver.model is not model and solver.model.inverse_masses[corner] > 0
    assert model.inverse_masses[corner] == 0.0  # the shared model never changes
    step_n(solver, state, 30)
    assert state.positions[corner][1] < held[1] - 0.05
    solver.fix_particle(3)
    pinned = state.positions[3].copy()
    solver.set_particle_mass(10, 5.0)
    solver.set_constraint_parameters("distance", 0, pliant.ConstraintParameters(compliance=1e-3))
    edited = solver.model
    step_n(solver, state, 10)
    np.testing.assert_array_equal(state.positions[3], pinned)
    assert edited.masses[10] == 5.0 and edited.constraint_parameters("distance")[0][0] == 1e-3
    solver.set_particle_mass(11, 2.0)  # the edited model was handed out: it stays as it was
    assert edited.masses[11] != 2.0 and solver.model.masses[11] == 2.0


def test_tethers_bending_helpers_and_collision_triangles():
    b = pliant.ModelBuilder()
    cloth = b.add_cloth_grid(nodes_x=4, nodes_y=4)
    b.fix_particle(0)
    added = b.add_tethers([0], cloth.first_particle, cloth.particle_count, {"compliance": 0.0}, slack=1.05)
    assert added == 15
    assert b.add_bending_constraints(cloth.triangles, "isometric") > 0
    assert b.add_collision_triangles(cloth.triangles) == 0
    b.surface_thickness = 0.004
    b.surface_contact_material = pliant.ContactMaterial(dynamic_friction=0.2)
    model = b.build()
    assert model.self_collision and model.surface_thickness == 0.004
    assert model.surface_contact_material.dynamic_friction == 0.2
    assert model.collision_triangles.shape == (18, 3)
    np.testing.assert_allclose(
        model.rest_values("max-distance"),
        1.05 * np.linalg.norm(model.initial_positions[1:] - model.initial_positions[0], axis=1),
    )


def test_balloon_pressure_inflates_it():
    b = pliant.ModelBuilder()
    b.add_balloon(radius=0.5, rings=8, segments=16, pressure=1.3, stretch={"compliance": 1e-4})
    model = b.build()
    solver = pliant.Solver(model, pliant.SolverSettings(gravity=(0, 0, 0), substeps=10, iterations=2))
    state = pliant.State(model)
    volume0 = model.rest_values("global-volume")[0]
    step_n(solver, state, 60)
    volume = volume0 + pliant.constraint_values(model, state, "global-volume")[0] + 0.3 * volume0
    assert volume > 1.2 * volume0


def test_neo_hookean_material_from_python():
    # A box with E and nu keeps its rest shape without gravity (V15) and sags under it; Lame
    # parameters give the same model; bad materials are refused with the field named.
    b = pliant.ModelBuilder()
    material = {"youngs_modulus": 1e6, "poisson_ratio": 0.3}
    box = b.add_tet_box(cells_x=2, cells_y=1, cells_z=1, size=(0.4, 0.2, 0.2), neo_hookean=material)
    model = b.build()
    assert model.constraint_count("neo-hookean") == 2 * box.tets.shape[0]
    assert model.constraint_count("tet-volume") == 0 and model.constraint_count("distance") == 0
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=5, gravity=(0, 0, 0)))
    state = step_n(solver, pliant.State(model), 30)
    np.testing.assert_allclose(state.positions, model.initial_positions, atol=1e-9)
    mu = 1e6 / 2.6
    lame = pliant.ModelBuilder()
    lame_material = {"lame_mu": mu, "lame_lambda": 1e6 * 0.3 / (1.3 * 0.4)}
    lame.add_tet_box(cells_x=2, cells_y=1, cells_z=1, size=(0.4, 0.2, 0.2), neo_hookean=lame_material)
    np.testing.assert_allclose(
        lame.build().constraint_parameters("neo-hookean"), model.constraint_parameters("neo-hookean"), rtol=1e-12
    )
    with pytest.raises(pliant.Error, match="Poisson's ratio must be in"):
        pliant.ModelBuilder().add_tet_box(neo_hookean={"youngs_modulus": 1e5, "poisson_ratio": 0.5})
    with pytest.raises(ValueError, match="add_tet_box: neo_hookean: unknown key 'nu'"):
        pliant.ModelBuilder().add_tet_box(neo_hookean={"youngs_modulus": 1e5, "nu": 0.3})
    tet = pliant.ModelBuilder()
    for p in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]:
        tet.add_particle(p, 1.0)
    assert tet.add_neo_hookean_tet(0, 1, 2, 3, {"youngs_modulus": 1e5, "poisson_ratio": 0.2, "damping": 0.01}) == 0


def test_shape_matching_clusters_from_python():
    # A hard rigid cluster released from a deformed pose comes back to a rotated copy of its rest
    # shape in one step, with its centre of mass kept (V22); overlapping clusters cover a cloth;
    # models with clusters pickle; bad input names the argument.
    import pickle

    b = pliant.ModelBuilder()
    rest = np.array([(0, 0, 0), (0.3, 0, 0), (0, 0.3, 0), (0, 0, 0.3), (0.3, 0.3, 0.3)], dtype=float)
    particles = [b.add_particle(p, 1.0 + i) for i, p in enumerate(rest)]
    assert b.add_shape_matching_cluster(particles) == 0
    model = b.build()
    assert model.constraint_count("shape-matching") == 1
    np.testing.assert_array_equal(model.cluster_particles(0), particles)
    state = pliant.State(model)
    noise = [[0.02, -0.01, 0.0], [0.0, 0.03, 0.01], [-0.02, 0.0, 0.0], [0.0, 0.0, 0.04], [0.01, 0.0, -0.02]]
    deformed = rest + np.array(noise)
    state.positions[:] = deformed
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=1, gravity=(0, 0, 0)))
    state = step_n(solver, state, 1)
    x = state.positions.copy()

    def distances(p):
        return np.linalg.norm(p[:, None, :] - p[None, :, :], axis=2)

    np.testing.assert_allclose(distances(x), distances(rest), atol=1e-12)
    masses = np.arange(1.0, 6.0)
    np.testing.assert_allclose(masses @ x, masses @ deformed, atol=1e-13)

    cloth = pliant.ModelBuilder()
    sheet = cloth.add_cloth_grid(nodes_x=9, nodes_y=5, size_x=0.8, size_y=0.4)
    first, count = cloth.add_shape_matching_clusters(
        sheet.particles, cluster_size=0.25, mode="linear", beta=0.3, params={"compliance": 1e-4}
    )
    assert (first, count) == (0, 3)
    cloth_model = cloth.build()
    covered = np.unique(np.concatenate([cloth_model.cluster_particles(i) for i in range(count)]))
    np.testing.assert_array_equal(covered, sheet.particles)
    copy = pickle.loads(pickle.dumps(cloth_model))
    assert copy.constraint_count("shape-matching") == 3
    settings = pliant.SolverSettings(substeps=4)
    assert (
        step_n(pliant.Solver(copy, settings), pliant.State(copy), 5).hash()
        == step_n(pliant.Solver(cloth_model, settings), pliant.State(cloth_model), 5).hash()
    )

    with pytest.raises(ValueError, match="add_shape_matching_cluster: mode: expected 'rigid' or 'linear'"):
        b.add_shape_matching_cluster(particles, mode="quadratic")
    with pytest.raises(ValueError, match="add_shape_matching_cluster: beta"):
        b.add_shape_matching_cluster(particles, mode="linear", beta=2.0)
    with pytest.raises(pliant.Error, match="at least 2 particles"):
        b.add_shape_matching_cluster([0])
    with pytest.raises(IndexError, match="no shape matching cluster 5"):
        model.cluster_particles(5)
