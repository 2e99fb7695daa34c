"""The Python examples run to the end (each asserts its own physics) and write what they say."""

import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples" / "python"


def run(script, *args, cwd=None):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args], check=True, capture_output=True, text=True, cwd=cwd,
        env=dict(os.environ),
    ).stdout


def test_cloth_in_ten_lines():
    source = (EXAMPLES / "cloth.py").read_text().splitlines()
    code = [line for line in source if line.strip() and not line.lstrip().startswith(("#", '"""'))]
    assert len(code) <= 10
    assert "lowest point" in run("cloth.py")


def test_user_constraint():
    out = run("user_constraint.py")
    assert "bead:" in out and "cloth:" in out


def test_parameter_study_plots(tmp_path):
    pytest.importorskip("matplotlib")
    out = run("parameter_study.py", "--out", str(tmp_path / "study.png"), "--frames", "30", "--processes", "2")
    assert (tmp_path / "study.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "32 substeps" in out
