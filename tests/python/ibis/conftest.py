# Fixtures of the Ibis backend's tests (tests/python/ibis/), after Ibis's
# own backend test conventions: a `TestConf` (ibis.backends.tests.base.
# BackendTest) that connects and loads the test data, and `con` / `backend`
# fixtures built on it.
#
# The tests run the package from python/ as it is (no install), so the
# `ibis.backends` entry point that `pip install ./python` would register is
# registered here from python/pyproject.toml itself: a dist-info folder with
# that entry point, put on sys.path, where importlib.metadata finds it as it
# finds an installed package's.  `ibis.dipper` then loads the backend
# exactly as it does once the package is installed.
import os
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = ROOT / "python" / "pyproject.toml"


def _register_entry_point():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    eps = project["entry-points"]["ibis.backends"]
    where = Path(tempfile.mkdtemp(prefix="dipper-ibis-ep-"))
    info = where / ("dipper_source-%s.dist-info" % project["version"])
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dipper-source\nVersion: %s\n"
                                   % project["version"])
    (info / "entry_points.txt").write_text(
        "[ibis.backends]\n" + "".join("%s = %s\n" % kv for kv in eps.items()))
    sys.path.append(str(where))
    return eps


ENTRY_POINTS = _register_entry_point()

import ibis  # noqa: E402
import pandas as pd  # noqa: E402
from ibis.backends.tests.base import BackendTest  # noqa: E402

SPARK = os.environ.get("DIPPER_SPARK_REMOTE") or \
    "sc://127.0.0.1:%s" % os.environ.get("DIPPER_SPARK_PORT", "15002")
KAFKA = "127.0.0.1:%s" % os.environ.get("DIPPER_KAFKA_PORT", "9092")


def pytest_configure(config):
    config.addinivalue_line("markers", "ibis: the Ibis backend (tests/python/ibis)")
    # Ibis 12 asks pandas 3 about an option pandas deprecates, at every conversion
    config.addinivalue_line("filterwarnings",
                            "ignore:The 'future.infer_string' option is deprecated")


# The request's payments: (seconds after 2024-01-01 00:00, orderId, payAmount, provinceId)
T0 = pd.Timestamp("2024-01-01 00:00:00")
PAYMENTS = [(i * 4 + (i % 3), 1000 + i, float(i % 7) + 0.5, 1 + i % 3) for i in range(40)]


def payments_frame():
    return pd.DataFrame({
        "createTime": [T0 + pd.Timedelta(seconds=s) for s, _, _, _ in PAYMENTS],
        "orderId": [o for _, o, _, _ in PAYMENTS],
        "payAmount": [a for _, _, a, _ in PAYMENTS],
        "provinceId": [p for _, _, _, p in PAYMENTS],
    }).astype({"createTime": "datetime64[ms]", "provinceId": "int32"})


PAYMENTS_SCHEMA = ibis.schema({"createTime": "timestamp(3)", "orderId": "int64",
                               "payAmount": "float64", "provinceId": "int32"})


def expected_hop_sums(rows=PAYMENTS):
    """{(provinceId, window_start): SUM(payAmount)} of 1-minute windows
    sliding every 30 s: a row at s seconds is in the windows starting at
    the two multiples of 30 s at or before s within a minute."""
    sums = {}
    for sec, _, amount, prov in rows:
        last = sec // 30 * 30
        for start in (last - 30, last):
            key = (prov, T0 + pd.Timedelta(seconds=start))
            sums[key] = sums.get(key, 0.0) + amount
    return sums


class TestConf(BackendTest):
    """dipper's backend in Ibis's test conventions: the embedded engine,
    the mode given (batch by default, as Ibis's shared backend tests
    assume), the data of ibis.backends.tests.data plus the payments."""

    force_sort = True
    stateful = False
    supports_map = True
    supports_structs = True
    supports_json = False
    deps = ("pyarrow", "pandas")

    @classmethod
    def name(cls):
        return "dipper"

    @staticmethod
    def connect(*, tmpdir, worker_id, mode="batch", engine=None, **kw):
        return ibis.dipper.connect(engine, mode=mode, **kw)

    def _load_data(self, **_):
        from ibis.backends.tests.data import topk, win

        con = self.connection
        con.create_table("win", win)
        con.create_table("topk", topk)
        con.create_table("payments", payments_frame(), schema=PAYMENTS_SCHEMA,
                         watermark=ibis.watermark("createTime", ibis.interval(seconds=10)))


def _backend(tmp_path_factory, mode, engine=None):
    return TestConf.load_data(Path(tmp_path_factory.getbasetemp()), tmp_path_factory, "master",
                              mode=mode, engine=engine)


@pytest.fixture
def backend(tmp_path_factory):
    with _backend(tmp_path_factory, "batch") as be:
        yield be


@pytest.fixture
def con(backend):
    return backend.connection


@pytest.fixture
def streaming_backend(tmp_path_factory):
    with _backend(tmp_path_factory, "streaming") as be:
        yield be


@pytest.fixture
def scon(streaming_backend):
    return streaming_backend.connection
