"""pliant.run against `pliant run`: the same C++ run (pliant::runScene), so the same files, byte for
byte, apart from summary.json's timings; a refused step raises StepRefused naming the particle; bad
options are refused, naming the field, before anything is written."""

import json
import pathlib
import subprocess

import pytest

import pliant
from conftest import step_n

TIMINGS = "timings"


def cli_run(cli, args, out):
    subprocess.run([cli, "run", *map(str, args), "--out", str(out), "--quiet"], check=True)


def files_under(folder):
    folder = pathlib.Path(folder)
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def summary_without_timings(folder):
    summary = json.loads((pathlib.Path(folder) / "summary.json").read_text())
    del summary[TIMINGS]
    return summary


@pytest.mark.parametrize(
    "scene, options, cli_args",
    [
        ("rope", dict(frames=20, every=5, checkpoint_at=[10], checkpoint_every=8),
         ["--frames", 20, "--every", 5, "--checkpoint-at", 10, "--checkpoint-every", 8]),
        ("beam", dict(frames=6, format="ply", threads=1), ["--frames", 6, "--format", "ply", "--threads", 1]),
        ("cloth", dict(frames=4, write_frames=False), ["--frames", 4, "--no-frames"]),
    ],
)
def test_run_writes_the_clis_files(cli, tmp_path, scene, options, cli_args):
    cli_run(cli, [scene, *cli_args], tmp_path / "cli")
    report = pliant.run(scene, out=tmp_path / "py", **options)
    assert report["completed"] and report["failure"] == ""
    names = files_under(tmp_path / "cli")
    assert names == files_under(tmp_path / "py")
    assert "summary.json" in names and "final_state.csv" in names
    for name in names:
        if name != "summary.json":
            assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name
    assert summary_without_timings(tmp_path / "cli") == summary_without_timings(tmp_path / "py")
    summary = report["summary"]
    assert summary["state_hash"] == f"{report['state_hash']:016x}" == report["final_state"].hash_hex()
    assert report["last_frame"] == options["frames"] and report["first_frame"] == 0


def test_run_of_a_scene_object_equals_stepping_it_by_hand(tmp_path):
    scene = pliant.builtin_scene("rope")
    scene.settings.substeps = 3  # a parameter study changes the scene, then runs it
    report = pliant.run(scene, tmp_path, frames=15, write_frames=False)
    solver, state = scene.solver(), scene.state()
    step_n(solver, state, 15)
    assert report["final_state"].hash() == state.hash() == report["state_hash"]
    assert report["summary"]["settings"]["substeps"] == 3
    assert report["summary"]["source"] == "builtin:rope"
    assert not (tmp_path / "frames").exists()  # write_frames=False creates no frames/ (docs/reliability.md)


def test_run_resumes_from_a_checkpoint_and_reports_progress(tmp_path):
    pliant.run("rope", tmp_path / "a", frames=12, write_frames=False, checkpoint_at=[5])
    seen = []
    report = pliant.run(
        "rope",
        tmp_path / "b",
        frames=12,
        write_frames=False,
        resume=tmp_path / "a/checkpoints/frame_000005.ckpt",
        progress=lambda frame, first, last: seen.append((frame, first, last)),
    )
    assert report["first_frame"] == 5
    assert seen == [(f, 5, 12) for f in range(5, 13)]
    full = json.loads((tmp_path / "a/summary.json").read_text())
    assert report["summary"]["state_hash"] == full["state_hash"]


def test_an_exception_in_progress_stops_the_run(tmp_path):
    def progress(frame, first, last):
        if frame == 3:
            raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt, match="stop"):
        pliant.run("rope", tmp_path, frames=50, progress=progress)
    assert (tmp_path / "frames/frame_000003.vtu").exists()
    assert not (tmp_path / "frames/frame_000004.vtu").exists()
    # The end-of-run files describe the frames that exist (issue 16).
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["last_frame"] == 3
    assert "frame_000003.vtu" in (tmp_path / "scene.pvd").read_text()


def test_a_refused_step_raises_step_refused_naming_the_particle(tmp_path):
    # Gravity moves the free rope by g dt^2 = 2.7 mm in the first step, far above the 1 um bound
    # (the CLI's test of the same scene exits 1).
    scene = tmp_path / "runaway.json"
    scene.write_text(
        json.dumps(
            {
                "name": "runaway",
                "solver": {"max_displacement": 1e-6},
                "frames": 5,
                "objects": [
                    {"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 5, "mass": 1}
                ],
            }
        )
    )
    with pytest.raises(pliant.StepRefused, match=r"runaway.json: .*displacement above the bound") as refused:
        pliant.run(scene, tmp_path / "out")
    e = refused.value
    assert e.status == "excessive-displacement" and e.step == 1
    assert isinstance(e.particle, int) and 0 <= e.particle < 5
    assert e.report["completed"] is False
    # Every output up to the last good frame (frame 0), the summary saying the run was refused.
    assert (tmp_path / "out/frames/frame_000000.vtu").exists()
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary == e.report["summary"]
    assert summary["status"] == "refused" and summary["last_frame"] == 0
    assert summary["refusal"]["frame"] == 1 and summary["refusal"]["reason"] == "excessive-displacement"
    assert summary["refusal"]["particle"] == e.particle


def test_bad_options_name_the_field_and_write_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="run: every must be >= 1"):
        pliant.run("rope", out, every=0)
    with pytest.raises(ValueError, match="run: format must be 'vtk', 'obj', 'ply' or 'glb'"):
        pliant.run("rope", out, format="stl")
    with pytest.raises(TypeError, match="run: frames"):
        pliant.run("rope", out, frames="ten")
    with pytest.raises(TypeError, match="run: unexpected keyword argument 'frame'"):
        pliant.run("rope", out, frame=3)
    with pytest.raises(TypeError, match="run: progress must be callable"):
        pliant.run("rope", out, progress=3)
    with pytest.raises(pliant.Error, match="unknown scene 'nope'"):
        pliant.run("nope", out)
    with pytest.raises(FileNotFoundError):
        pliant.run(tmp_path / "missing.json", out)
    with pytest.raises(FileNotFoundError):
        pliant.run("rope", out, resume=tmp_path / "missing.ckpt")
    pliant.run("rope", tmp_path / "a", frames=4, write_frames=False, checkpoint_at=[3])
    with pytest.raises(pliant.Error, match="beyond the 2 frames"):
        pliant.run("rope", out, frames=2, resume=tmp_path / "a/checkpoints/frame_000003.ckpt")
    assert not out.exists()
