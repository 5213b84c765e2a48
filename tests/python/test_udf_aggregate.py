# Python aggregate functions (@dipper.udaf, con.create_aggregate_function)
# over the C aggregate API: update per group of a batch with pyarrow slices,
# combine (session windows merging), finalize; GROUP BY, global, FILTER,
# DISTINCT, OVER; a state restored from a checkpoint; errors.
import datetime
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dipper

udf_module = sys.modules["dipper.udf"]
updates = []


@dipper.udaf(returns="DOUBLE", state={"total": "DOUBLE", "n": "BIGINT"})
class mean:
    def update(self, state, x: pa.DoubleArray):
        assert isinstance(x, pa.DoubleArray)
        updates.append(len(x))
        return {"total": state["total"] + (pc.sum(x).as_py() or 0.0),
                "n": state["n"] + pc.count(x).as_py()}

    def combine(self, a, b):
        return {"total": a["total"] + b["total"], "n": a["n"] + b["n"]}

    def finalize(self, state):
        return state["total"] / state["n"] if state["n"] else None


@pytest.fixture
def bcon(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.register("t", [{"k": "a", "x": 1.0}, {"k": "b", "x": 2.0}, {"k": "a", "x": 3.0},
                       {"k": "b", "x": None}, {"k": "c", "x": 5.0}, {"k": "a", "x": 3.0}])
    con.create_function(mean)
    return con


def test_group_by_global_filter_distinct(bcon):
    assert repr(mean) == "<dipper.Aggregate mean(DOUBLE) RETURNS DOUBLE>"
    updates.clear()
    assert bcon.sql("SELECT k, mean(x) AS m, AVG(x) AS a FROM t GROUP BY k ORDER BY k")\
        .fetchall() == [("a", 7 / 3, 7 / 3), ("b", 2.0, 2.0), ("c", 5.0, 5.0)]
    assert sorted(updates) == [1, 2, 3]  # one update per group of the batch, its rows sliced
    assert bcon.sql("SELECT mean(x) FROM t").fetchall() == [(14 / 5,)]
    assert bcon.sql("SELECT k, mean(x) FILTER (WHERE x > 1) AS m FROM t GROUP BY k ORDER BY k")\
        .fetchall() == [("a", 3.0), ("b", 2.0), ("c", 5.0)]
    assert bcon.sql("SELECT k, mean(DISTINCT x) AS m FROM t GROUP BY k ORDER BY k")\
        .fetchall() == [("a", 2.0), ("b", 2.0), ("c", 5.0)]
    assert bcon.sql("SELECT k, mean(x) OVER (PARTITION BY k ORDER BY x ROWS BETWEEN "
                    "UNBOUNDED PRECEDING AND CURRENT ROW) AS m FROM t WHERE k = 'a' "
                    "ORDER BY m").fetchall() == [("a", 1.0), ("a", 2.0), ("a", 7 / 3)]


def test_scalar_state_explicit_form_and_initial(bcon):
    bcon.create_aggregate_function(
        "product", lambda s, x: s * (pc.product(x).as_py() if len(x) else 1),
        lambda a, b: a * b, lambda s: int(s), state="BIGINT", returns="BIGINT",
        params=["BIGINT"], initial=1)
    bcon.register("n", [{"g": 1, "v": 2}, {"g": 1, "v": 3}, {"g": 2, "v": 7}])
    assert bcon.sql("SELECT g, product(v) FROM n GROUP BY g ORDER BY g").fetchall() == \
        [(1, 6), (2, 7)]


def test_session_windows_merge_states_with_combine(con):
    combined = []

    @dipper.udaf(returns="BIGINT", state="BIGINT")
    class total:
        def update(self, s, v: pa.Int64Array):
            return s + pc.sum(v).as_py()

        def combine(self, a, b):
            combined.append((a, b))
            return a + b

        def finalize(self, s):
            return s
    con.create_function(total)
    q, = con.start("""
      CREATE TABLE ev (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '20' SECOND)
        WITH ('connector' = 'memory');
      CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)
        WITH ('connector' = 'memory');
      INSERT INTO out SELECT window_start, window_end, total(v) FROM TABLE(SESSION(TABLE ev,
        DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end""")
    t = datetime.datetime(2024, 1, 1)
    for rows in ([{"v": 1, "ts": t.replace(second=1)}, {"v": 10, "ts": t.replace(second=10)}],
                 [{"v": 100, "ts": t.replace(second=6)}],
                 [{"v": 1000, "ts": t.replace(minute=1)}]):
        con.push("ev", rows)
        q.step()
        q.step()
    assert con.fetch("out").to_pylist() == [
        {"ws": t.replace(second=1), "we": t.replace(second=15), "total": 111}]
    assert combined  # the two sessions' states were merged
    q.stop()


STREAM = """
SET 'execution.checkpointing.dir' = '{dir}';
CREATE TABLE ev (k STRING, v DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'memory');
CREATE TABLE out (k STRING, ws TIMESTAMP(3), m DOUBLE, n BIGINT) WITH ('connector' = 'memory');
INSERT INTO out SELECT k, window_start, mean(v), COUNT(*) FROM TABLE(TUMBLE(TABLE ev,
  DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;
"""

T0 = datetime.datetime(2024, 1, 1)
PUSHES = [[{"k": "a", "v": 1.0, "ts": T0.replace(second=1)},
           {"k": "b", "v": 5.0, "ts": T0.replace(second=2)}],
          [{"k": "a", "v": 3.0, "ts": T0.replace(second=6)}],
          [{"k": "a", "v": 8.0, "ts": T0.replace(second=7)},
           {"k": "c", "v": 0.0, "ts": T0.replace(second=25)}]]


def run_stream(path, npush):
    con = dipper.connect()
    con.create_function(mean)
    q, = con.start(STREAM.format(dir=path))
    for rows in PUSHES[:npush]:
        con.push("ev", rows)
        for _ in range(3):
            q.step()
    out = sorted((r["k"], r["m"], r["n"]) for r in con.fetch("out").to_pylist())
    con.close()
    return out


def test_state_restored_from_a_checkpoint(tmp_path):
    before = set(udf_module._functions)
    # the first run sees pushes 0 and 1: the window is open, nothing out
    assert run_stream(tmp_path, 2) == []
    # the restart gets every push again; the first two are behind the
    # checkpoint's position, so what they added comes from the restored
    # states (plain bytes), and the window closes with all three in it
    assert run_stream(tmp_path, 3) == [("a", 4.0, 3), ("b", 5.0, 1)]
    assert set(udf_module._functions) == before  # each handle's end released it


def test_errors_carry_the_traceback_and_bad_states_are_named(bcon):
    def bad_update(state, x: pa.DoubleArray):
        raise KeyError("no update today")
    bcon.create_aggregate_function("bad", bad_update, lambda a, b: a, lambda s: s,
                                   state="DOUBLE", returns="DOUBLE")
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT k, bad(x) FROM t GROUP BY k").arrow()
    assert "function bad: KeyError: 'no update today'" in str(e.value)
    assert "in bad_update" in e.value.traceback
    bcon.create_aggregate_function("bad2", lambda s, x: {"n": None}, lambda a, b: a,
                                   lambda s: 0.0, state={"n": "BIGINT"}, returns="DOUBLE",
                                   params=["DOUBLE"])
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT bad2(x) FROM t").arrow()
    assert "function bad2: update gave {'n': None}, which does not fit the state" in str(e.value)
    bcon.create_aggregate_function("bad3", lambda s, x: s, lambda a, b: a, lambda s: "text",
                                   state="DOUBLE", returns="DOUBLE", params=["DOUBLE"])
    with pytest.raises(dipper.DataError) as e:
        bcon.sql("SELECT bad3(x) FROM t").arrow()
    assert "function bad3: finalize gave ['text'], which is not a DOUBLE" in str(e.value)
    with pytest.raises(TypeError, match="its fields are BOOLEAN"):
        bcon.create_aggregate_function("s", lambda s, x: s, lambda a, b: a, lambda s: s,
                                       state={"name": "STRING"}, returns="STRING",
                                       params=["STRING"])
    with pytest.raises(TypeError, match="takes 3 arguments"):
        bcon.create_aggregate_function("s", lambda s, x: s, lambda a, b: a, lambda s: s,
                                       state="DOUBLE", returns="DOUBLE",
                                       params=["DOUBLE"] * 3)
    with pytest.raises(TypeError, match="aggregate s: initial gave 'x', which does not fit"):
        bcon.create_aggregate_function("s", lambda s, x: s, lambda a, b: a, lambda s: s,
                                       state="DOUBLE", returns="DOUBLE", params=["DOUBLE"],
                                       initial="x")
    assert bcon.sql("SELECT COUNT(*) FROM t").fetchall() == [(6,)]
