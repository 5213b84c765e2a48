# Batch queries to Arrow, pandas, polars and Python values, exactly; explain
# and check; results without a copy.
import datetime
import decimal

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import dipper

ALL_TYPES = """
SET 'execution.runtime-mode' = 'batch';
SELECT CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, 3 AS i, CAST(4 AS BIGINT) AS bi,
       CAST(1.5 AS FLOAT) AS f, CAST(2.25 AS DOUBLE) AS d, CAST('12.34' AS DECIMAL(10, 2)) AS dec,
       'héllo' AS s, TRUE AS b, DATE '2024-01-31' AS dt,
       TIMESTAMP '2024-01-31 12:30:00.500' AS ts,
       CAST(NULL AS INT) AS n
"""


def test_types_to_arrow_exactly(con):
    t = con.sql(ALL_TYPES).arrow()
    assert isinstance(t, pa.Table)
    assert t.schema.names == ["ti", "si", "i", "bi", "f", "d", "dec", "s", "b", "dt", "ts", "n"]
    types = [f.type for f in t.schema]
    assert types == [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(),
                     pa.decimal128(10, 2), pa.string(), pa.bool_(), pa.date32(),
                     pa.timestamp("us"), pa.int32()]
    assert t.to_pylist() == [{
        "ti": 1, "si": 2, "i": 3, "bi": 4, "f": 1.5, "d": 2.25, "dec": decimal.Decimal("12.34"),
        "s": "héllo", "b": True, "dt": datetime.date(2024, 1, 31),
        "ts": datetime.datetime(2024, 1, 31, 12, 30, 0, 500000), "n": None}]


def test_timestamp_ltz_is_utc(con):
    t = con.sql("SELECT CAST(TIMESTAMP '2024-01-31 12:30:00' AS TIMESTAMP_LTZ(3)) AS t").arrow()
    assert t.schema.field("t").type == pa.timestamp("us", tz="UTC")
    assert t.column("t")[0].as_py() == datetime.datetime(2024, 1, 31, 12, 30,
                                                         tzinfo=datetime.timezone.utc)


def test_time_and_intervals(con):
    r = con.sql("SELECT CAST('12:30:01' AS TIME) AS t, INTERVAL '2' DAY AS d, "
                "INTERVAL '3' MONTH AS m, CAST(NULL AS INTERVAL MONTH) AS nm")
    t = r.arrow()
    # Arrow's month interval has no Python class in pyarrow: it comes as
    # int32 months, the field's metadata naming the SQL type
    assert [str(f.type) for f in t.schema] == ["time64[us]", "duration[us]", "int32", "int32"]
    assert t.schema.field("m").metadata[b"dipper.type"] == b"INTERVAL YEAR TO MONTH"
    assert r.fetchall() == [(datetime.time(12, 30, 1), datetime.timedelta(days=2), 3, None)]


def test_month_interval_nested(con):
    t = con.sql("SELECT ARRAY[INTERVAL '1' YEAR, INTERVAL '2' MONTH] AS a").arrow()
    assert t.schema.field("a").type.value_type == pa.int32()
    assert t.column("a").to_pylist() == [[12, 2]]


def test_nested_types(con):
    t = con.sql("SELECT ARRAY[1, 2, 3] AS a, MAP['k', 1] AS m").arrow()
    assert t.schema.field("a").type == pa.list_(pa.field("item", pa.int32(), False))
    assert t.column("a").to_pylist() == [[1, 2, 3]]
    assert t.schema.field("m").type == pa.map_(pa.field("key", pa.string(), False),
                                               pa.field("value", pa.int32(), False))
    assert t.column("m").to_pylist() == [[("k", 1)]]


GROUPED = """
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory');
SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r;
"""


def test_df_fetchall_pl(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory')")
    con.push("sales", [{"r": "n", "q": 2}, {"r": "s", "q": 5}, {"r": "n", "q": None}])
    res = con.sql("SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r")
    assert res.fetchall() == [("n", 2, 2), ("s", 5, 1)]
    df = res.df()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["r", "total", "n"]
    assert df["r"].tolist() == ["n", "s"] and df["total"].tolist() == [2, 5]
    assert df["n"].tolist() == [2, 1]
    p = res.pl()
    assert isinstance(p, pl.DataFrame)
    assert p.rows() == [("n", 2, 2), ("s", 5, 1)]
    assert res.columns == ["r", "total", "n"]
    assert len(res) == 2


def test_pl_without_polars(con, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(ImportError, match="polars"):
        con.sql("SELECT 1 AS x").pl()


def test_arrow_is_not_a_copy(con):
    # dipper's buffers are imported as foreign memory: pyarrow's pool
    # allocates nothing for a result of 200,000 rows (a copy would take >1.6 MB)
    sql = """SET 'execution.runtime-mode' = 'batch';
    CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
      'fields.id.start' = '1', 'fields.id.end' = '200000');
    SELECT id, id * 2 AS twice FROM g"""
    res = con.sql(sql)
    before = pa.total_allocated_bytes()
    t = res.arrow()
    assert pa.total_allocated_bytes() - before < 100_000
    assert t.num_rows == 200_000
    assert t.column("twice").to_pylist()[-3:] == [399996, 399998, 400000]
    # the memory stays valid after the connection closed
    con.close()
    assert sum(t.column("id").to_pylist()) == 200_000 * 200_001 // 2


def test_record_batch_reader(con):
    reader = con.sql("SELECT * FROM (VALUES (1), (2), (3)) AS t(x)").record_batch_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all().column("x").to_pylist() == [1, 2, 3]


def test_record_batch_reader_outlives_its_result(con):
    import gc
    reader = con.sql("""SET 'dipper.max-batch-rows' = '100';
        CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
          'fields.id.start' = '1', 'fields.id.end' = '1000');
        SELECT id FROM g""").record_batch_reader()
    gc.collect()  # the Result and its Program have no other reference now
    batches = list(reader)
    assert len([b for b in batches if b.num_rows]) == 10
    assert [i for b in batches for i in b.column("id").to_pylist()] == list(range(1, 1001))


def test_result_speaks_the_arrow_stream_protocol(con):
    t = pa.table(con.sql("SELECT 7 AS x"))
    assert t.to_pylist() == [{"x": 7}]
    assert pl.from_arrow(pa.table(con.sql("SELECT 'a' AS s"))).rows() == [("a",)]


def test_sql_runs_inserts_and_ddl_now(con):
    assert con.sql("""SET 'execution.runtime-mode' = 'batch';
        CREATE TABLE out (a BIGINT, b STRING) WITH ('connector' = 'memory');
        INSERT INTO out SELECT a * 2, b FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b)""") is None
    assert con.fetch("out").to_pylist() == [{"a": 2, "b": "x"}, {"a": 4, "b": "y"}]
    # the catalog lives on in the connection
    assert con.sql("DESCRIBE out").fetchall()[0][0] == "a"


def test_execute_runs_everything_and_gives_the_last_rows(con):
    r = con.execute("""SET 'execution.runtime-mode' = 'batch';
        CREATE TABLE out1 (a INT) WITH ('connector' = 'memory');
        CREATE TABLE out2 (a INT) WITH ('connector' = 'memory');
        INSERT INTO out1 VALUES (1), (2);
        SELECT a + 10 AS b FROM (VALUES (5)) AS t(a);
        INSERT INTO out2 VALUES (3);""")
    assert r.fetchall() == [(15,)]
    assert [x["a"] for x in con.fetch("out1").to_pylist()] == [1, 2]
    assert [x["a"] for x in con.fetch("out2").to_pylist()] == [3]
    empty = con.execute("SET 'execution.runtime-mode' = 'batch'")
    assert empty.arrow().num_columns == 0


def test_show_and_describe(con):
    con.sql("CREATE TABLE t1 (a INT, b STRING) WITH ('connector' = 'memory')")
    names = [r[0] for r in con.sql("SHOW TABLES").fetchall()]
    assert "t1" in names
    desc = con.sql("DESCRIBE t1").fetchall()
    assert [r[0] for r in desc] == ["a", "b"]


def test_explain_text_and_json(con):
    con.sql("CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)"
            " WITH ('connector' = 'memory')")
    text = con.explain("SELECT a FROM t WHERE a > 1")
    assert text.splitlines()[:2] == ["Project exprs=[a]", "  schema: (a INT)"]
    assert "Watermark column=ts delay=5 s source=t" in text
    assert con.explain("SELECT a FROM t WHERE a > 1", schema=False, streaming=False) == (
        "Project exprs=[a]\n  Filter cond=(a > 1)\n    Watermark column=ts delay=5 s source=t\n"
        "      Scan table=t connector=memory\n")
    plan = con.explain("SELECT a FROM t WHERE a > 1", json=True)
    assert plan["statements"][0]["streaming"] is True
    root = plan["statements"][0]["roots"][0]
    assert "kind" in root and "schema" in root
    bare = con.explain("SELECT a FROM t", json=True, schema=False)
    assert "schema" not in bare["statements"][0]["roots"][0]


def test_check(con):
    assert con.check("SET 'execution.runtime-mode' = 'batch'; SELECT 1 AS x; SHOW TABLES") == \
        ["session", "query", "result"]
    with pytest.raises(dipper.NameError) as e:
        con.check("SELECT x FROM missing_table")
    assert e.value.line == 1 and e.value.column == 15


def test_check_gives_the_programs_warnings(con):
    # a GROUP BY on a stream whose state grows forever: accepted, with a
    # warning naming the operator and the option (none once a TTL bounds it)
    ddl = ("CREATE TABLE s (k INT) WITH ('connector' = 'memory');\n"
           "CREATE TABLE o (k INT, c BIGINT) WITH ('connector' = 'memory');\n")
    grow = "INSERT INTO o SELECT k, COUNT(*) FROM s GROUP BY k;\n"
    with pytest.warns(dipper.CompileWarning, match="table.exec.state.ttl") as caught:
        kinds = con.check(ddl + grow, filename="grow.sql")
    assert kinds == ["session", "session", "insert"]
    assert len(kinds.warnings) == 1 and len(caught) == 1
    w = kinds.warnings[0]
    assert isinstance(w, dipper.Diagnostic)
    assert w.code == dipper.StreamingError.code and w.line == 3 and w.file == "grow.sql"
    assert "aggregation" in w.message and "table.exec.state.ttl" in w.message
    assert w.rendered.startswith("grow.sql:3:") and ": warning: " in w.rendered
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bounded = con.check("SET 'table.exec.state.ttl' = '1 h';\n" + grow)
    assert bounded == ["session", "insert"] and bounded.warnings == []


def test_gil_released_during_a_long_call(con):
    import threading
    import time
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.1)
    r0 = ticks[0]
    time.sleep(0.2)
    rate = (ticks[0] - r0) / 0.2  # ticks a second with the GIL to itself
    sql = """SET 'execution.runtime-mode' = 'batch';
    CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
      'fields.id.start' = '1', 'fields.id.end' = '10000000');
    SELECT COUNT(*) AS n, SUM(id) AS s FROM g"""
    res = con.sql(sql)
    start_ticks = ticks[0]
    t0 = time.monotonic()
    rows = res.fetchall()
    elapsed = time.monotonic() - t0
    during = ticks[0] - start_ticks
    stop.set()
    t.join()
    assert rows == [(10000000, 10000000 * 10000001 // 2)]
    # another Python thread ran along the C call; with the GIL held it would
    # get one switch interval (5 ms) at most, a few % of the call
    assert during > 0.1 * rate * elapsed, (elapsed, during, rate)
