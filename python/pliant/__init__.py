"""Pliant: position-based simulation (PBD, XPBD, small-step XPBD) of particles, ropes, cloth and
soft bodies, from Python.

The C++ library's API with numpy arrays: build a Model with ModelBuilder, step a State with a
Solver. State arrays (positions, velocities, lambdas, external forces) are numpy views of the
state's memory; Model arrays are read-only views. Scenes (JSON files and the built-in ones) load
with load_scene / builtin_scene. See the README's "Python" section.
"""

from ._pliant import *  # noqa: F401,F403 - the module is the API
from ._pliant import Error, StepRefused, __version__  # noqa: F401
