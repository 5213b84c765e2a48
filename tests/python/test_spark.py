# dipper.connect("sc://...") against the real local Spark Connect server
# (ctest's spark_server fixture starts it: tests/python/CMakeLists.txt).
# The server: $DIPPER_SPARK_REMOTE, else sc://127.0.0.1:$DIPPER_SPARK_PORT
# (15002).
import os
import re
import time

import pandas as pd
import pyarrow as pa
import pytest

import dipper

pytestmark = pytest.mark.spark

SPARK = os.environ.get("DIPPER_SPARK_REMOTE") or \
    "sc://127.0.0.1:%s" % os.environ.get("DIPPER_SPARK_PORT", "15002")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture
def spark():
    c = dipper.connect(SPARK)
    yield c
    c.close()


def test_batch_query_to_arrow_and_pandas(spark):
    spark.sql("SET 'execution.runtime-mode' = 'batch'")
    spark.sql("CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory')")
    spark.push("sales", [{"r": "n", "q": 2}, {"r": "s", "q": 5}, {"r": "n", "q": None},
                         {"r": "n", "q": 4}])
    res = spark.sql("SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r")
    t = res.arrow()
    assert isinstance(t, pa.Table)
    assert t.column_names == ["r", "total", "n"]
    assert res.fetchall() == [("n", 6, 3), ("s", 5, 1)]
    df = res.df()
    assert isinstance(df, pd.DataFrame) and df["total"].tolist() == [6, 5]


def test_insert_into_a_memory_sink_through_a_handle(spark):
    spark.sql("SET 'execution.runtime-mode' = 'batch'")
    spark.sql("CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory')")
    spark.sql("CREATE TABLE out (r STRING, total BIGINT) WITH ('connector' = 'memory')")
    spark.push("sales", [{"r": "n", "q": 2}, {"r": "s", "q": 5}, {"r": "n", "q": None},
                         {"r": "n", "q": 4}])
    q, = spark.start("INSERT INTO out SELECT r, SUM(q) FROM sales WHERE q IS NOT NULL GROUP BY r")
    assert q.step() is True  # batch mode on Spark: one run, ended
    p = q.last_progress
    assert (p.name, p.batch_id, p.output_rows, p.finished) == ("out", 0, 2, True)
    assert sorted(spark.fetch("out").to_pylist(), key=lambda r: r["r"]) == \
        [{"r": "n", "total": 6}, {"r": "s", "total": 5}]


def test_spark_error_is_a_remote_error(spark):
    spark.sql("SET 'execution.runtime-mode' = 'batch'")
    spark.sql("CREATE TABLE f (id BIGINT) WITH ('connector' = 'filesystem', "
              "'path' = '/nonexistent/dipper-python-test', 'format' = 'json')")
    with pytest.raises(dipper.RemoteError) as e:
        spark.sql("SELECT id FROM f").arrow()
    assert "Spark: [PATH_NOT_FOUND]" in str(e.value)


def test_explain_and_check_need_no_round_trip(spark):
    assert spark.check("SELECT 1 AS x") == ["query"]
    assert "Project" in spark.explain("SELECT 1 AS x")


def test_streaming_query_handle_on_spark(spark):
    name = "py_rate_%d" % os.getpid()
    q, = spark.start("""
        CREATE TABLE g (r INT) WITH ('connector' = 'datagen', 'rows-per-second' = '50',
          'fields.r.min' = '1', 'fields.r.max' = '6');
        CREATE TABLE %s (r INT) WITH ('connector' = 'memory');
        INSERT INTO %s SELECT r FROM g""" % (name, name))
    assert q.name == name
    assert UUID.match(q.id) and UUID.match(q.run_id)
    assert q.status.active
    # progress arrives with Spark's micro-batches: listen until two reports
    reports = []
    for ev in spark.listen(timeout=120):
        if ev.kind == "progress" and ev.query is q:
            assert ev.id == q.id and ev.json
            reports.append(ev.progress)
            if len(reports) == 2:
                break
    assert len(reports) == 2 and reports[0].batch_id < reports[1].batch_id
    assert q.await_termination(0.5) is False
    deadline = time.monotonic() + 60
    while q.last_progress is None and time.monotonic() < deadline:
        q.step()
        time.sleep(0.5)
    assert isinstance(q.last_progress, dipper.Progress)
    assert q.recent_progress
    q.stop()
    assert q.await_termination(30) is True
    assert not q.status.active


def test_python_callback_on_spark(spark, tmp_path):
    # foreachBatch in Python on Spark: the handoff sink (docs/spark.md) hands
    # each micro-batch to the registered function with Spark's batch id.
    inp, ckpt = tmp_path / "in", tmp_path / "ckpt"
    inp.mkdir()
    got = []

    def on_batch(batch, batch_id):
        assert isinstance(batch, pa.RecordBatch)
        got.append((batch_id, sorted(zip(batch.column("k").to_pylist(),
                                         batch.column("v10").to_pylist()))))

    spark.register_callback("py_rows", on_batch)
    q, = spark.start("""
        SET 'execution.checkpointing.dir' = '%s';
        CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'filesystem',
          'path' = '%s', 'format' = 'json', 'source.monitor-interval' = '1 s');
        CREATE TABLE out (k STRING, v10 BIGINT) WITH ('connector' = 'callback',
          'name' = 'py_rows');
        INSERT INTO out SELECT k, v * 10 FROM src WHERE v > 0""" % (ckpt, inp))

    def land(name, text):
        (tmp_path / name).write_text(text)
        os.rename(tmp_path / name, inp / name)

    def step_until(n):
        deadline = time.monotonic() + 90
        while len(got) < n and time.monotonic() < deadline:
            q.step()

    land("a.json", '{"k":"a","v":1}\n{"k":"b","v":2}\n{"k":"z","v":-1}\n')
    step_until(1)
    land("b.json", '{"k":"c","v":3}\n')
    step_until(2)
    q.stop()
    assert got == [(0, [("a", 10), ("b", 20)]), (1, [("c", 30)])]
