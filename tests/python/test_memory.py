# Memory tables fed from pyarrow, pandas and lists of dicts; memory sinks
# read back as pyarrow.
import datetime
import decimal
import json

import pandas as pd
import pyarrow as pa
import pytest

import dipper

COLUMNS = "(id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(6), d DATE, " \
          "ok BOOLEAN, raw BYTES, x DOUBLE)"
ROWS = [
    {"id": 1, "name": "a", "amount": decimal.Decimal("1.50"),
     "ts": datetime.datetime(2024, 1, 1, 0, 0, 1, 250000), "d": datetime.date(2024, 1, 1),
     "ok": True, "raw": b"\x00\x01\xff", "x": 0.5},
    {"id": 2, "name": None, "amount": None, "ts": None, "d": None, "ok": None, "raw": None,
     "x": None},
]


def roundtrip(con, data):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE src %s WITH ('connector' = 'memory')" % COLUMNS)
    con.push("src", data)
    return con.sql("SELECT * FROM src ORDER BY id").arrow().to_pylist()


def test_from_list_of_dicts(con):
    assert roundtrip(con, ROWS) == ROWS


def test_from_pyarrow(con):
    table = pa.Table.from_pylist(ROWS, schema=pa.schema([
        ("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us")), ("d", pa.date32()), ("ok", pa.bool_()),
        ("raw", pa.binary()), ("x", pa.float64())]))
    assert roundtrip(con, table) == ROWS
    assert roundtrip(dipper.connect(), table.to_batches()[0]) == ROWS


def test_from_pandas(con):
    df = pd.DataFrame({"id": [1, 2], "name": ["a", None], "x": [0.5, float("nan")]})
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE p (id BIGINT, name STRING, x DOUBLE) WITH ('connector' = 'memory')")
    con.push("p", df)
    got = con.sql("SELECT id, name, x FROM p ORDER BY id").fetchall()
    assert got[0] == (1, "a", 0.5)
    assert got[1] == (2, None, None)  # pandas' NaN is a missing value: NULL


def test_nan_and_infinity_of_python_floats(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE f (i INT, x DOUBLE) WITH ('connector' = 'memory')")
    con.push("f", [{"i": 1, "x": float("nan")}, {"i": 2, "x": float("inf")},
                   {"i": 3, "x": float("-inf")}])
    got = [x for _, x in con.sql("SELECT i, x FROM f ORDER BY i").fetchall()]
    assert got[0] != got[0] and got[1:] == [float("inf"), float("-inf")]


def test_register_declares_the_table(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    df = pd.DataFrame({"k": ["x", "y", "x"], "v": [1, 2, 3]})
    con.register("pdf", df)
    assert con.sql("SELECT k, SUM(v) AS s FROM pdf GROUP BY k ORDER BY k").fetchall() == \
        [("x", 4), ("y", 2)]
    con.register("pat", pa.table({"t": pa.array([datetime.datetime(2024, 5, 1, 12)],
                                                pa.timestamp("ms", tz="UTC"))}))
    desc = dict((r[0], r[1]) for r in con.sql("DESCRIBE pat").fetchall())
    assert desc["t"] == "TIMESTAMP_LTZ(3)"
    assert con.sql("SELECT t FROM pat").arrow().column(0)[0].as_py() == \
        datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc)
    con.register("lod", [{"a": 1, "b": "q"}])
    assert con.sql("SELECT b, a FROM lod").fetchall() == [("q", 1)]


def test_each_push_is_one_micro_batch(con):
    con.sql("CREATE TABLE s (v INT) WITH ('connector' = 'memory', 'bounded' = 'true')")
    con.sql("CREATE TABLE k (v INT) WITH ('connector' = 'callback', 'name' = 'k')")
    seen = []
    con.register_callback("k", lambda b, i: seen.append((i, b.column("v").to_pylist())))
    con.push("s", [{"v": 1}, {"v": 2}])
    con.push("s", [{"v": 3}])
    q, = con.start("INSERT INTO k SELECT v FROM s")
    assert q.await_termination(30)
    # (the last batch of a bounded run may come with no rows)
    assert [(i, rows) for i, rows in seen if rows] == [(0, [1, 2]), (1, [3])]


def test_push_to_a_table_of_another_connector_is_misuse(con):
    con.sql("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen')")
    with pytest.raises(dipper.MisuseError, match="memory"):
        con.push("g", [{"id": 1}])


def test_push_rejects_what_is_not_rows(con):
    con.sql("CREATE TABLE s (v INT) WITH ('connector' = 'memory')")
    with pytest.raises(TypeError):
        con.push("s", {"v": [1]})
    with pytest.raises(TypeError):
        con.push("s", [1, 2])


def test_fetch_of_a_memory_sink(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE o (a INT, b STRING) WITH ('connector' = 'memory')")
    con.sql("INSERT INTO o VALUES (1, 'x'), (2, 'y')")
    t = con.fetch("o")
    assert isinstance(t, pa.Table)
    assert t.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


def test_nested_values_both_ways(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    cols = "(r ROW<a INT, b STRING>, xs ARRAY<BIGINT>, m MAP<STRING, INT>)"
    con.sql("CREATE TABLE n %s WITH ('connector' = 'memory')" % cols)
    con.push("n", [{"r": {"a": 1, "b": "x"}, "xs": [1, 2], "m": {"k": 3}}])
    want = [({"a": 1, "b": "x"}, [1, 2], [("k", 3)])]
    t = con.sql("SELECT * FROM n").arrow()
    assert con.sql("SELECT * FROM n").fetchall() == want
    # a result pushed back as it came (pyarrow's MAP is a list of pairs)
    con.sql("CREATE TABLE n2 %s WITH ('connector' = 'memory')" % cols)
    con.push("n2", t)
    assert con.sql("SELECT * FROM n2").fetchall() == want
    con.register("n3", t)
    assert [r[1] for r in con.sql("DESCRIBE n3").fetchall()] == \
        ["ROW<a INT, b STRING>", "ARRAY<BIGINT>", "MAP<STRING, INT>"]


def test_arrow_pushes_are_encoded_by_column_as_by_row(con):
    # A pyarrow Table (or pandas DataFrame) of flat columns is encoded with
    # pyarrow.compute, column by column; nested columns, and strings with
    # control characters, take the row path.  Both give dipper the same rows.
    from dipper import _memory
    t = pa.table({
        "i": pa.array([1, None, -3], pa.int16()), "u": pa.array([2**32 - 1, 0, None], pa.uint32()),
        "b": [True, None, False], "f": pa.array([0.1, float("nan"), float("-inf")], pa.float32()),
        "d": [1e300, None, float("inf")], "s": ['a"b\\c', "é\nx\t", None],
        "dt": [datetime.date(2024, 1, 2), None, datetime.date(1960, 5, 6)],
        "ns": pa.array([1_001, -1, None], pa.timestamp("ns")),
        "ms": pa.array([1500, -1, None], pa.timestamp("ms")),
        "tz": pa.array([1_700_000_000_000_000, None, -5], pa.timestamp("us", tz="Europe/Paris")),
        "dec": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-0.01")],
                        pa.decimal128(10, 2)),
        'odd "key"': [1, 2, 3],
    })
    by_column = bytes(_memory.json_lines(t))
    by_row = _memory._row_json_lines(_memory._rows_of_arrow(t))
    assert by_column != by_row  # two encoders (the row path writes spaces)
    assert [json.loads(x) for x in by_column.splitlines()] == \
        [json.loads(x) for x in by_row.splitlines()]
    con.register("fast", t, bounded=True)
    con.sql("CREATE TABLE slow (%s) WITH ('connector' = 'memory', 'bounded' = 'true')" %
            ", ".join("`%s` %s" % (f.name.replace("`", "``"), _memory.sql_type(f.type))
                      for f in t.schema))
    rows = t.to_pylist()
    con.push("slow", rows)  # a list of dicts: the row path
    cols = ", ".join("`%s`" % n for n in t.column_names)
    fast = con.sql("SELECT %s FROM fast ORDER BY i NULLS LAST" % cols).arrow()
    slow = con.sql("SELECT %s FROM slow ORDER BY i NULLS LAST" % cols).arrow()
    assert fast.num_rows == 3 and fast.schema == slow.schema
    assert repr(fast.to_pylist()) == repr(slow.to_pylist())  # NaN as NaN
    by_i = {r["i"]: r for r in fast.to_pylist()}
    assert by_i[None]["ns"] == datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)  # floored
    assert by_i[1]["ns"] == datetime.datetime(1970, 1, 1, 0, 0, 0, 1)
    assert by_i[None]["s"] == "é\nx\t" and by_i[1]["s"] == 'a"b\\c'
    assert by_i[1]["f"] == pytest.approx(0.1) and by_i[-3]["d"] == float("inf")
    # a string with another control character takes the row path (\u0001)
    assert _memory.json_lines(pa.table({"s": ["a\x01b"]})) == b'{"s": "a\\u0001b"}\n'
