"""Copies the engine's shared libraries into the package when it is built.

The rest of the metadata is in pyproject.toml.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

_LIBRARIES = ["libtfm_engine.so", "libtfm_cuda_runtime.so"]


def _library_dir():
    library = os.environ.get("TFM_LIBRARY")
    if library:
        return os.path.dirname(os.path.abspath(library))
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("TFM_BUILD_DIR", os.path.join(here, "..", "build"))
    return os.path.join(build, "lib")


class BuildWithEngine(build_py):
    def run(self):
        super().run()
        source = _library_dir()
        missing = [n for n in _LIBRARIES if not os.path.exists(os.path.join(source, n))]
        if missing:
            raise SystemExit(f"tfm: {', '.join(missing)} not found in {source}: build tfm "
                             "first (bash scripts/build.sh), or set TFM_BUILD_DIR or "
                             "TFM_LIBRARY")
        target = os.path.join(self.build_lib, "tfm")
        for name in _LIBRARIES:
            shutil.copy2(os.path.join(source, name), os.path.join(target, name))


setup(cmdclass={"build_py": BuildWithEngine})
