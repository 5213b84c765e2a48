# Shared fixtures of the Python package's tests (tests/python/).  ctest runs
# them (tests/python/CMakeLists.txt) with the package from python/ on
# PYTHONPATH and $DIPPER_LIBRARY naming the build tree's libdipper.so.
import os
import sys

import pytest

import dipper


@pytest.fixture
def con():
    c = dipper.connect()
    yield c
    c.close()


@pytest.fixture
def run_python():
    """Run a Python snippet in a child process with this process's
    environment (the library, the sanitizer preload)."""
    import subprocess

    def run(code, **kw):
        return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ), **kw)
    return run
