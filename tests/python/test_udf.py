# Python scalar functions (@dipper.udf, con.create_function) on the embedded
# engine: vectorized calls over pyarrow arrays, every query position, batch
# and streaming, the result checks, errors with the Python traceback, the
# lifetime of the registration, and the GIL during long calls.
import datetime
import decimal
import gc
import sys
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dipper

udf_module = sys.modules["dipper.udf"]  # the module (dipper.udf is the decorator)


@pytest.fixture
def bcon(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.register("t", [{"k": "a", "x": 1, "s": "ab"}, {"k": "b", "x": 2, "s": None},
                       {"k": "a", "x": 3, "s": "cd"}, {"k": "b", "x": 4, "s": "e"}])
    return con


def live_functions():
    return {t for t, r in udf_module._functions.items() if r is not None}


def test_decorator_vectorized_over_pyarrow_arrays(bcon):
    calls = []

    @dipper.udf(returns="DOUBLE")
    def half(x: pa.Int64Array):
        calls.append((type(x), len(x)))
        return pc.divide(pc.cast(x, pa.float64()), 2)

    assert isinstance(half, dipper.Function)
    assert (half.name, half.params, half.returns) == ("half", ["BIGINT"], "DOUBLE")
    assert bcon.create_function(half) is half
    assert bcon.sql("SELECT x, half(x) AS h FROM t ORDER BY x").fetchall() == \
        [(1, 0.5), (2, 1.0), (3, 1.5), (4, 2.0)]
    assert calls == [(pa.Int64Array, 4)]  # one call for the whole batch
    # the Function still calls the Python function
    assert half(pa.array([8])).to_pylist() == [4.0]


def test_explicit_form_and_annotations(bcon):
    bcon.create_function("plus", lambda a, b: pc.add(a, b), returns="BIGINT",
                         params=["BIGINT", "BIGINT"])
    bcon.create_function("shout", lambda s: pc.utf8_upper(s), returns=pa.string(),
                         params=[str])

    def tag(s: "STRING", n: pa.Int32Array) -> pa.StringArray:
        return pc.binary_join_element_wise(s, pc.cast(n, pa.string()), "#")
    bcon.create_function(tag)
    rows = bcon.sql("SELECT plus(x, 10), shout(s), tag(k, CAST(x AS INT)) FROM t "
                    "ORDER BY x").fetchall()
    assert rows == [(11, "AB", "a#1"), (12, None, "b#2"), (13, "CD", "a#3"), (14, "E", "b#4")]

    @bcon.udf(returns="BOOLEAN", params=["STRING"])
    def is_short(s):
        return pc.less(pc.utf8_length(s), 2)
    assert bcon.sql("SELECT k FROM t WHERE is_short(s) ORDER BY x").fetchall() == [("b",)]


def test_every_query_position(bcon):
    bcon.create_function("sq", lambda x: pc.multiply(x, x), returns="BIGINT", params=["BIGINT"])
    bcon.create_function("lower1", lambda s: pc.utf8_lower(s), returns="STRING",
                         params=["STRING"])
    # WHERE, GROUP BY key, aggregate argument, HAVING, ORDER BY, OVER
    assert bcon.sql("SELECT lower1(k) AS g, SUM(sq(x)) AS s FROM t WHERE sq(x) > 1 "
                    "GROUP BY lower1(k) HAVING SUM(sq(x)) > 0 ORDER BY sq(MIN(x))").fetchall() == \
        [("b", 20), ("a", 9)]
    assert bcon.sql("SELECT x, SUM(sq(x)) OVER (PARTITION BY k ORDER BY x) AS r FROM t "
                    "ORDER BY x").fetchall() == [(1, 1), (2, 4), (3, 10), (4, 20)]
    # a join's condition and a CASE
    assert bcon.sql("SELECT a.x, b.x FROM t a JOIN t b ON sq(a.x) = sq(b.x) - 5 "
                    "ORDER BY a.x").fetchall() == [(2, 3)]
    assert bcon.sql("SELECT CASE WHEN sq(x) > 4 THEN lower1(k) ELSE 'small' END FROM t "
                    "ORDER BY x").fetchall() == [("small",), ("small",), ("a",), ("b",)]
    # an argument cast to the parameter's type; constants
    assert bcon.sql("SELECT sq(CAST(3 AS INT)), sq(5)").fetchall() == [(9, 25)]
    # a SQL function calling the Python one
    bcon.sql("CREATE FUNCTION sq_plus(a BIGINT) RETURNS BIGINT RETURN sq(a) + 1")
    assert bcon.sql("SELECT sq_plus(x) FROM t ORDER BY x").fetchall() == \
        [(2,), (5,), (10,), (17,)]


def test_nulls_types_and_python_results(bcon):
    # NULLs reach the function; a list is turned into an array of the type
    bcon.create_function("nulls", lambda s: [v is None for v in s.to_pylist()],
                         returns="BOOLEAN", params=["STRING"])
    assert [r[0] for r in bcon.sql("SELECT nulls(s) FROM t ORDER BY x").fetchall()] == \
        [False, True, False, False]
    bcon.register("v", [{"d": decimal.Decimal("1.25"), "ts": datetime.datetime(2024, 1, 31, 12),
                         "day": datetime.date(2024, 2, 29)}])
    seen = {}

    def next_day(ts, d):
        seen["types"] = (ts.type, d.type)
        day = pa.scalar(datetime.timedelta(days=1), pa.duration("us"))
        return pc.cast(pc.add(ts, day), pa.date32())
    bcon.create_function("next_day", next_day, returns="DATE",
                         params=["TIMESTAMP(3)", "DECIMAL(10, 2)"])
    bcon.create_function("cents", lambda d: pc.multiply(d, pa.scalar(decimal.Decimal(100),
                                                                     pa.decimal128(3, 0)))
                         .cast(pa.decimal128(14, 2)),
                         returns="DECIMAL(14, 2)", params=["DECIMAL(10, 2)"])
    bcon.create_function("pair", lambda a: pa.StructArray.from_arrays(
        [a, pc.utf8_upper(a)], names=["lo", "hi"]), returns="ROW<lo STRING, hi STRING>",
        params=["STRING"])
    rows = bcon.sql("SELECT next_day(ts, d), cents(d), pair('x') FROM v").fetchall()
    assert rows == [(datetime.date(2024, 2, 1), decimal.Decimal("125.00"),
                     {"lo": "x", "hi": "X"})]
    assert seen["types"] == (pa.timestamp("us"), pa.decimal128(10, 2))


def test_zero_arguments_and_not_deterministic(bcon):
    n = [0]

    def counter() -> "BIGINT":
        n[0] += 1
        return n[0]
    bcon.create_function("counter", counter, deterministic=False)
    assert bcon.sql("SELECT counter() FROM t").fetchall() == [(1,)] * 4  # one call per batch
    assert n[0] == 1


def test_streaming_micro_batches(con):
    con.sql("CREATE TABLE src (id BIGINT, name STRING) WITH ('connector' = 'memory')")
    con.sql("CREATE TABLE out (id BIGINT, up STRING) WITH ('connector' = 'memory')")
    lengths = []

    @con.udf(returns="STRING")
    def up(s: pa.StringArray):
        lengths.append(len(s))
        return pc.utf8_upper(s)
    q, = con.start("INSERT INTO out SELECT id, up(name) FROM src WHERE up(name) <> 'SKIP'")
    con.push("src", [{"id": 1, "name": "a"}, {"id": 2, "name": "skip"}])
    q.process_all_available()
    con.push("src", [{"id": 3, "name": "c"}])
    q.process_all_available()
    assert sorted(con.fetch("out").to_pylist(), key=lambda r: r["id"]) == \
        [{"id": 1, "up": "A"}, {"id": 3, "up": "C"}]
    assert 2 in lengths and 1 in lengths  # one call per micro-batch (and use)
    q.stop()


def test_streaming_window_aggregate_over_a_udf(con):
    got = []
    con.register_callback("cb", lambda b, i: got.extend(b.to_pylist()))
    con.create_function("bucket", lambda x: pc.divide(x, 10), returns="BIGINT",
                        params=["BIGINT"])
    q, = con.start("""
      CREATE TABLE src (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 1000, 3), WATERMARK FOR ts AS ts)
        WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
              'fields.id.start' = '0', 'fields.id.end' = '39');
      CREATE TABLE o (ws TIMESTAMP(3), b BIGINT, n BIGINT)
        WITH ('connector' = 'callback', 'name' = 'cb');
      INSERT INTO o SELECT window_start, bucket(id), COUNT(*)
        FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '20' SECOND))
        GROUP BY window_start, window_end, bucket(id)""")
    assert q.await_termination(60)
    epoch = datetime.datetime(1970, 1, 1)
    assert sorted((r["ws"], r["b"], r["n"]) for r in got) == \
        [(epoch, 0, 10), (epoch, 1, 10), (epoch + datetime.timedelta(seconds=20), 2, 10),
         (epoch + datetime.timedelta(seconds=20), 3, 10)]


def test_results_pyarrow_array_accepts(bcon):
    import numpy as np
    import pandas as pd
    bcon.create_function("np2", lambda x: x.to_numpy() * 2, returns="BIGINT", params=["BIGINT"])
    bcon.create_function("pd3", lambda x: pd.Series(x.to_pylist()) * 3, returns="BIGINT",
                         params=["BIGINT"])
    bcon.create_function("chunked", lambda x: pa.chunked_array([x[:1], x[1:]]),
                         returns="BIGINT", params=["BIGINT"])
    bcon.create_function("halfnp", lambda x: np.asarray(x) / 2, returns="DOUBLE",
                         params=["BIGINT"])
    assert bcon.sql("SELECT np2(x), pd3(x), chunked(x), halfnp(x) FROM t ORDER BY x")\
        .fetchall() == [(2, 3, 1, 0.5), (4, 6, 2, 1.0), (6, 9, 3, 1.5), (8, 12, 4, 2.0)]


def test_refused_on_spark_at_compile_time():
    # no server needed: the call is refused when the query compiles
    con = dipper.connect("sc://localhost:1")
    con.create_function("inc", lambda x: pc.add(x, 1), returns="BIGINT", params=["BIGINT"])
    with pytest.raises(dipper.UnsupportedError, match="runs only on the embedded engine"):
        con.check("SELECT inc(1) AS v")
    con.close()


def test_wrong_length_and_type_fail_clearly(bcon):
    bcon.create_function("short", lambda x: x[:1], returns="BIGINT", params=["BIGINT"])
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT short(x) FROM t").arrow()
    assert "function short: it returned 1 values for 4 rows" in str(e.value)
    assert e.value.column == 8  # the caret under the call
    bcon.create_function("wide", lambda x: x, returns="INT", params=["BIGINT"])
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT wide(x) FROM t").arrow()
    msg = str(e.value)
    assert "returned an array of int64 but is declared to return INT (int32" in msg
    assert "cast it" in msg and "returns='BIGINT'" in msg
    bcon.create_function("junk", lambda x: object(), returns="INT", params=["BIGINT"])
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT junk(x) FROM t").arrow()
    assert "it returned a object, which is not a int32 array" in str(e.value)
    # the connection goes on working
    assert bcon.sql("SELECT COUNT(*) FROM t").fetchall() == [(4,)]


def test_exception_fails_the_query_with_the_traceback(bcon):
    def explode(x: pa.Int64Array) -> "BIGINT":
        if pc.max(x).as_py() > 2:
            raise ValueError("no %d for me" % pc.max(x).as_py())
        return x
    bcon.create_function(explode)
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT explode(x) FROM t").arrow()
    err = e.value
    assert err.message.startswith("function explode: ValueError: no 4 for me")
    assert "Traceback (most recent call last)" in err.message  # in the C error itself
    assert "in explode" in err.message and "dipper/udf.py" not in err.message
    assert err.traceback is not None and "ValueError: no 4 for me" in err.traceback
    assert "in explode" in err.traceback
    assert "ValueError: no 4 for me" in str(err)


def test_udf_and_callback_failures_read_the_same(con):
    # the same exception from a UDF and from a foreachBatch callback: both
    # fail the query, both errors carry the traceback (.traceback and text)
    def same_failure(*_):
        raise ValueError("the same failure")
    con.register_callback("cb", same_failure)
    con.create_function("fails", same_failure, returns="BIGINT", params=["BIGINT"])
    con.create_function("ok", lambda x: x, returns="BIGINT", params=["BIGINT"])
    errs = []
    for fn in ("fails", "ok"):
        q, = con.start("""
          CREATE TABLE IF NOT EXISTS src (id BIGINT) WITH ('connector' = 'datagen',
            'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10');
          CREATE TABLE IF NOT EXISTS o (v BIGINT) WITH ('connector' = 'callback', 'name' = 'cb');
          INSERT INTO o SELECT %s(id) FROM src""" % fn)
        with pytest.raises(dipper.Error) as e:
            q.await_termination(60)
        errs.append(e.value)
    udf_err, cb_err = errs
    assert isinstance(udf_err, dipper.DataError)
    assert "function fails: ValueError: the same failure" in str(udf_err)
    assert "callback 'cb'" in str(cb_err)
    for err in errs:
        assert "ValueError: the same failure" in err.traceback
        assert "in same_failure" in err.traceback
        assert "in same_failure" in str(err)


def test_udf_exception_as_a_terminated_event(con):
    con.register_callback("cb", lambda b, i: None)
    con.create_function("boom", lambda x: 1 / 0, returns="BIGINT", params=["BIGINT"])
    q, = con.start("""
      CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '10');
      CREATE TABLE o (v BIGINT) WITH ('connector' = 'callback', 'name' = 'cb');
      INSERT INTO o SELECT boom(id) FROM src""")
    term = [e for e in con.listen(timeout=30) if e.kind == "terminated"]
    assert len(term) == 1 and term[0].query is q
    assert "function boom: ZeroDivisionError: division by zero" in term[0].error
    assert "Traceback" in term[0].error


def test_bad_declarations(con):
    with pytest.raises(TypeError, match="a lambda has no name"):
        con.create_function(lambda x: x, returns="INT", params=["INT"])

    def f(x):
        return x
    with pytest.raises(TypeError, match="parameter x has no type"):
        con.create_function(f, returns="INT")
    with pytest.raises(TypeError, match="has no result type"):
        con.create_function("f", f, params=["INT"])
    with pytest.raises(TypeError, match="a list of types"):
        con.create_function("f", f, params="INT", returns="INT")
    with pytest.raises(TypeError, match="Decimal"):
        con.create_function("f", f, params=[decimal.Decimal], returns="INT")

    def g(*xs) -> "INT":
        return xs[0]
    with pytest.raises(TypeError, match="not positional"):
        con.create_function(g)
    with pytest.raises(dipper.TypeError, match="'INTEGRAL' is not a type"):
        con.create_function("f", f, params=["INTEGRAL"], returns="INT")
    before = set(udf_module._functions)
    with pytest.raises(dipper.DuplicateError, match="built-in"):
        con.create_function("upper", f, params=["STRING"], returns="STRING")
    assert set(udf_module._functions) == before  # a failed registration keeps nothing


def test_registry_lifetime_drop_replace_close(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    before = live_functions()

    def register(tag):  # the Python function lives only in the registry
        con.create_function("tagged", lambda s: pc.binary_join_element_wise(
            s, pa.scalar(tag), ""), returns="STRING", params=["STRING"])
    register("1")
    gc.collect()
    assert len(live_functions() - before) == 1
    res = con.sql("SELECT tagged('a')")
    register("2")  # replaced: the first lives on while a program calls it
    gc.collect()
    assert len(live_functions() - before) == 2
    assert res.fetchall() == [("a1",)]
    assert con.sql("SELECT tagged('b')").fetchall() == [("b2",)]
    del res
    gc.collect()
    assert len(live_functions() - before) == 1
    con.drop_function("tagged")
    gc.collect()
    assert live_functions() == before
    with pytest.raises(dipper.NameError):
        con.drop_function("tagged")
    register("3")
    con.close()  # the handle's end releases it
    assert live_functions() == before


def test_connection_garbage_collected_with_functions(run_python):
    code = r"""
import gc, sys, pyarrow.compute as pc, dipper
udf = sys.modules["dipper.udf"]
def make():
    con = dipper.connect()
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.create_function("inc", lambda x: pc.add(x, 1), returns="BIGINT", params=["BIGINT"])
    res = con.sql("SELECT inc(41)")
    return res.fetchall()
print(make())
gc.collect()
print(len(udf._functions))
con = dipper.connect()
con.create_function("inc", lambda x: pc.add(x, 1), returns="BIGINT", params=["BIGINT"])
print("exit")
"""
    p = run_python(code)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out == "[(42,)]\n0\nexit\n", (out, err)
    assert "Exception" not in err and "ERROR" not in err, err


def ticks_during(call):
    """Run call() on this thread while another Python thread ticks; the
    longest gap between ticks during the call and the number of ticks."""
    stamps, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)
    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    stop.set()
    t.join()
    inside = [s for s in stamps if t0 <= s <= t1]
    gaps = [b - a for a, b in zip(inside, inside[1:])]
    return t1 - t0, len(inside), max(gaps) if gaps else t1 - t0


# rows enough for a query of about a second on a fast machine: 1,000,000
# took 0.19 s on a quiet one, too short to tell a released GIL from luck
N = 5000000
LONG = """SET 'execution.runtime-mode' = 'batch';
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '%d');
""" % N


def test_gil_released_during_a_long_query(con):
    con.sql(LONG)
    res = con.sql("SELECT SUM(id * 2) AS s, COUNT(*) AS n FROM g")
    # called on a non-main thread, so that the C call runs on this very
    # thread (not the Ctrl-C worker of the main thread)
    out = {}
    worker = threading.Thread(target=lambda: out.update(
        r=ticks_during(lambda: out.setdefault("rows", res.fetchall()))))
    worker.start()
    worker.join()
    took, ticks, gap = out["r"]
    assert out["rows"] == [(N * (N + 1), N)]
    assert took > 0.2, "the query was too short to tell (%.3f s)" % took
    # the other thread ran all along: no gap near the query's length
    assert ticks >= 20 and gap < took / 4, (took, ticks, gap)


def test_gil_taken_only_for_the_udf_call(con):
    con.sql(LONG)
    calls = [0]

    def inc(x: pa.Int64Array) -> pa.Int64Array:
        calls[0] += 1
        return pc.add(x, 1)
    con.create_function(inc)
    res = con.sql("SELECT SUM(inc(id)) AS s FROM g")
    out = {}
    worker = threading.Thread(target=lambda: out.update(
        r=ticks_during(lambda: out.setdefault("rows", res.fetchall()))))
    worker.start()
    worker.join()
    took, ticks, gap = out["r"]
    assert out["rows"] == [(N * (N + 1) // 2 + N,)]
    assert calls[0] >= 1
    assert ticks >= 20 and gap < took / 4, (took, ticks, gap)
