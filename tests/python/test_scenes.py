"""Scenes from Python against the CLI: the same state hash after the same frames, the same probe
rows, checkpoints that pass between the two, and pickled states, models and scenes that step on
bit-identically in other processes."""

import json
import multiprocessing
import pathlib
import pickle
import subprocess

import numpy as np
import pytest

import pliant
from conftest import hanging_cloth, step_n


def cli_run(cli, scene, out, *args):
    subprocess.run([cli, "run", str(scene), "--out", str(out), "--quiet", *map(str, args)], check=True)
    return json.loads((pathlib.Path(out) / "summary.json").read_text())


def python_run(scene, frames):
    solver, state = scene.solver(), scene.state()
    step_n(solver, state, frames)
    return state


@pytest.mark.parametrize("name", pliant.builtin_scene_names())
def test_every_builtin_scene_gives_the_clis_state_hash(cli, tmp_path, name):
    frames = 3 if name.startswith("cloth-100") else 12
    summary = cli_run(cli, name, tmp_path, "--frames", frames, "--no-frames")
    state = python_run(pliant.builtin_scene(name), frames)
    assert state.hash_hex() == summary["state_hash"]
    assert state.time == pytest.approx(summary["time_s"], rel=1e-12)


@pytest.mark.parametrize("file", ["meshes.json", "full.json", "mesh_collider.json"])
def test_scene_files_give_the_clis_state_hash(cli, tmp_path, source_dir, file):
    path = source_dir / "tests/data/scenes" / file
    summary = cli_run(cli, path, tmp_path, "--frames", 8, "--no-frames")
    scene = pliant.load_scene(path)
    assert scene.source == str(path)
    assert python_run(scene, 8).hash_hex() == summary["state_hash"]


def test_probe_rows_equal_the_clis_probes_csv(cli, tmp_path):
    cli_run(cli, "rope", tmp_path, "--frames", 20, "--no-frames")
    scene = pliant.builtin_scene("rope")
    recorder = pliant.ProbeRecorder(scene)
    solver, state = scene.solver(), scene.state()
    recorder.record(state)
    for _ in range(20):
        solver.step(state)
        recorder.record(state)
    assert recorder.csv() == (tmp_path / "probes.csv").read_text()
    table = recorder.array
    assert table.shape == (21, len(recorder.columns)) and len(recorder) == 21
    assert recorder.columns[:4] == ["time", "tip.x", "tip.y", "tip.z"]
    # As arrays: the tip falls and gains the kinetic energy the rope had as potential energy.
    tip_y = table[:, recorder.columns.index("tip.y")]
    assert tip_y[-1] < tip_y[0] - 0.3
    kinetic = table[:, recorder.columns.index("energy.kinetic")]
    gravitational = table[:, recorder.columns.index("energy.gravitational")]
    assert kinetic[0] == 0.0 and kinetic[-1] > 0.5 * (gravitational[0] - gravitational[-1]) > 0


def test_checkpoints_pass_between_python_and_the_cli(cli, tmp_path):
    cli_run(cli, "cloth", tmp_path / "a", "--frames", 10, "--no-frames", "--checkpoint-at", 6)
    scene = pliant.builtin_scene("cloth")
    state = pliant.load_checkpoint(tmp_path / "a/checkpoints/frame_000006.ckpt", scene.model)
    assert state.step_count == 6
    assert state.hash() == python_run(scene, 6).hash()
    # Saved by Python, resumed by the CLI: the CLI's final hash is Python's.
    state.save(tmp_path / "six.ckpt")
    summary = cli_run(cli, "cloth", tmp_path / "b", "--frames", 10, "--no-frames", "--resume", tmp_path / "six.ckpt")
    step_n(scene.solver(), state, 4)
    assert state.hash_hex() == summary["state_hash"]
    with pytest.raises(pliant.Error, match="saved for a model with"):
        pliant.State.load(tmp_path / "six.ckpt", pliant.builtin_scene("rope").model)
    with pytest.raises(FileNotFoundError):
        pliant.State.load(tmp_path / "missing.ckpt", scene.model)


def test_state_model_and_scene_pickle():
    model, _ = hanging_cloth(nodes=10)
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=2))
    state = step_n(solver, pliant.State(model), 7)
    copy = pickle.loads(pickle.dumps(state))
    assert copy.hash() == state.hash() and copy.step_count == 7
    np.testing.assert_array_equal(copy.previous_positions, state.previous_positions)
    assert copy.last_substep == state.last_substep
    model_copy = pickle.loads(pickle.dumps(model))
    assert model_copy is not model and model_copy.particle_count == model.particle_count
    a, b = state.copy(), copy
    step_n(solver, a, 5)
    step_n(pliant.Solver(model_copy, pliant.SolverSettings(substeps=2)), b, 5)
    assert a.hash() == b.hash()
    # Scenes pickle as their JSON, with changed settings.
    scene = pliant.builtin_scene("rope")
    scene.settings.substeps = 7
    scene.frames = 9
    again = pickle.loads(pickle.dumps(scene))
    assert again.settings.substeps == 7 and again.frames == 9 and again.name == "rope"
    settings = pickle.loads(pickle.dumps(pliant.SolverSettings(mode="pbd", iterations=3)))
    assert settings.mode == "pbd" and settings.iterations == 3
    params = pickle.loads(pickle.dumps(pliant.ConstraintParameters(1e-3, 0.5, 0.25)))
    assert params == pliant.ConstraintParameters(1e-3, 0.5, 0.25)


def test_models_holding_functions_refuse_to_pickle_naming_them(source_dir):
    b = pliant.ModelBuilder()
    b.add_particle((0, 0, 0), 1.0)
    b.add_kinematic(0, lambda t: (t, 0, 0))
    with pytest.raises(TypeError, match="cannot pickle this Model: it holds 1 kinematic particle path"):
        pickle.dumps(b.build())
    # A scene whose model has paths (C++ functions from the JSON) still pickles, as its text.
    scene = pliant.load_scene(source_dir / "tests/data/scenes/full.json")
    assert "path" in scene.model.functions
    with pytest.raises(TypeError, match="cannot pickle this Model"):
        pickle.dumps(scene.model)
    again = pickle.loads(pickle.dumps(scene))
    assert python_run(again, 4).hash() == python_run(scene, 4).hash()
    with pytest.raises(TypeError, match="not made from JSON"):
        pickle.dumps(pliant.benchmark_scene("cloth-grid-64"))


def _advance(payload):
    model, state, frames = pickle.loads(payload)
    solver = pliant.Solver(model, pliant.SolverSettings(substeps=2))
    for _ in range(frames):
        solver.step(state)
    return state


def _scene_hash(scene):
    return python_run(scene, 5).hash()


def test_states_and_models_step_identically_in_other_processes():
    model, _ = hanging_cloth(nodes=10)
    states = [pliant.State(model) for _ in range(3)]
    for i, s in enumerate(states):
        s.velocities[:, 2] = 0.1 * i
    expected = [_advance(pickle.dumps((model, s.copy(), 6))).hash() for s in states]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_advance, [pickle.dumps((model, s, 6)) for s in states])
        scene_hashes = pool.map(_scene_hash, [pliant.builtin_scene("rope"), pliant.builtin_scene("cloth")])
    assert [r.hash() for r in results] == expected
    assert scene_hashes == [_scene_hash(pliant.builtin_scene("rope")), _scene_hash(pliant.builtin_scene("cloth"))]


def test_scene_attributes_and_errors(tmp_path, source_dir):
    scene = pliant.builtin_scene("beam")
    assert scene.name == "beam" and scene.model.particle_count > 0
    assert scene.topology.tets.shape[1] == 4 and scene.topology.tets.shape[0] == scene.model.constraint_count("tet-volume")
    assert scene.objects[0]["name"] and "tet-volume" in scene.objects[0]["constraints"]
    assert json.loads(pliant.builtin_scene_text("beam"))["name"] == "beam"
    assert pliant.builtin_scene_names()[0] == "cloth"
    assert "cloth-grid-64" in pliant.benchmark_scene_names()
    with pytest.raises(pliant.Error, match="unknown scene 'nope'"):
        pliant.builtin_scene("nope")
    with pytest.raises(FileNotFoundError):
        pliant.load_scene(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    text = pliant.builtin_scene_text("rope").replace('"particles": 41', '"particles": "many"')
    bad.write_text(text)
    with pytest.raises(pliant.Error, match=r"bad.json.*/objects/0/particles"):
        pliant.load_scene(bad)
    parsed = pliant.parse_scene(pliant.builtin_scene_text("rope"), "mine")
    assert parsed.source == "mine" and parsed.model.particle_count == 41
    assert isinstance(scene.probes, list)


def test_frames_are_written(tmp_path):
    scene = pliant.builtin_scene("cloth")
    state = scene.state()
    for name in ["f.vtu", "f.vtk", "f.obj", "f.ply"]:
        pliant.write_frame(tmp_path / name, state, scene.topology)
        assert (tmp_path / name).stat().st_size > 100
    text = (tmp_path / "f.obj").read_text()
    assert text.count("\nv ") + text.startswith("v ") == scene.model.particle_count


def test_a_scene_too_large_for_the_memory_budget_is_refused_naming_the_field(source_dir):
    # Issue 12 item 5: refused before anything is built, as the CLI's --max-memory does.
    big = source_dir / "tests/data/scenes/limits/cloth_4096.json"
    with pytest.raises(pliant.Error, match=r"cloth_4096.json: /objects/0/grid/nodes: the scene needs an estimated .* "
                       r"above the memory budget of 4.0 GiB"):
        pliant.load_scene(big, max_memory="4G")
    with pytest.raises(pliant.Error, match=r"/objects/0/grid/nodes: .*above the memory budget of 1.0 MiB"):
        pliant.parse_scene(pliant.builtin_scene_text("cloth"), max_memory=1 << 20)
    assert pliant.parse_scene(pliant.builtin_scene_text("cloth"), max_memory="64M").model.particle_count == 48 * 48
    with pytest.raises(pliant.Error, match="memory size 'lots'"):
        pliant.parse_scene(pliant.builtin_scene_text("cloth"), max_memory="lots")
