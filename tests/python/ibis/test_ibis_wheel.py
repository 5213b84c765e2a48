# The wheel, installed: scripts/python-wheel --library packs this build's
# libdipper.so (scikit-build-core over python/CMakeLists.txt, the same
# package, metadata and entry point as the full build, which compiles the
# library for minutes), pip installs it offline (--no-index --no-deps) into
# a fresh venv whose dependencies come from the test venv's site-packages
# (a .pth file), and a child process with neither PYTHONPATH nor
# DIPPER_LIBRARY finds `ibis.dipper` through the installed dist-info's
# ibis.backends entry point and runs a query on the library inside the
# wheel.
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.ibis

CHILD = r"""
import importlib.metadata as md, json, sys
import ibis
eps = [ep for ep in md.entry_points(group="ibis.backends") if ep.name == "dipper"]
con = ibis.dipper.connect(mode="batch")
t = con.create_table("t", ibis.memtable({"k": [1, 2, 2], "v": [1.5, 2.0, 3.0]}))
df = t.group_by("k").agg(s=t.v.sum()).order_by("k").execute()
import dipper
print(json.dumps({"eps": [(ep.value, ep.dist.name) for ep in eps],
                  "dipper": dipper.__file__, "library": dipper.library_path,
                  "backend": type(con).__module__, "rows": df.values.tolist(),
                  "version": con.version}))
"""


def test_the_wheel_installs_the_ibis_entry_point(tmp_path):
    library = os.environ["DIPPER_LIBRARY"]  # ctest gives the build tree's
    dist = tmp_path / "dist"
    build = subprocess.run([str(ROOT / "scripts" / "python-wheel"), "--library", library,
                            str(dist)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheel, = dist.glob("dipper-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dipper/libdipper.so.0" in names and "dipper/ibis/__init__.py" in names
    info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert zipfile.ZipFile(wheel).read(info).decode().split() == \
        ["[ibis.backends]", "dipper", "=", "dipper.ibis"]

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        text=True).strip())
    # the dependencies (pyarrow, pandas, Ibis) from the test venv, after the
    # fresh venv's own site-packages, where the wheel goes
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    inst = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install",
                           "--disable-pip-version-check", "--no-index", "--no-deps",
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert inst.returncode == 0, inst.stdout + inst.stderr

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DIPPER_LIBRARY")}
    run = subprocess.run([str(py), "-c", CHILD], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    import json
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["eps"] == [["dipper.ibis", "dipper"]]  # the installed wheel's, alone
    assert got["dipper"].startswith(str(site))
    assert got["library"] == str(site / "dipper" / "libdipper.so.0")
    assert got["backend"] == "dipper.ibis"
    assert got["rows"] == [[1, 1.5], [2, 5.0]]
    assert got["version"]
