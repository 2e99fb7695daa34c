"""Builds the extension module pliant._pliant with the project's CMake (python/CMakeLists.txt) for
the interpreter running this build, then lets setuptools package it with python/pliant/. Used by
`python3 -m pip install --no-build-isolation .` (see pyproject.toml); the C++ tests, benchmarks and
apps are left out of this build."""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            f"-DPLIANT_PYTHON={sys.executable}", "-DPLIANT_BUILD_PYTHON=ON", "-DPLIANT_BUILD_TESTS=OFF",
            "-DPLIANT_BUILD_BENCHMARKS=OFF", "-DPLIANT_BUILD_APPS=OFF",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("PLIANT_BUILD_JOBS", "2")
        subprocess.run(["cmake", "--build", str(build), "--target", "pliant_python", "-j", jobs], check=True)
        built = next((build / "python" / "pliant").glob("_pliant*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[CMakeExtension("pliant._pliant")], cmdclass={"build_ext": CMakeBuild})
