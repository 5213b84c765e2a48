# Ibis's Python UDFs on dipper: @ibis.udf.scalar.pyarrow, .python and
# .pandas become dipper Python functions of the connection (dipper.udf,
# vectorized over pyarrow arrays), registered before the expression runs;
# builtin ones name dipper's own functions.
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dipper
import ibis
import ibis.common.exceptions as com
import ibis.expr.datatypes as dt
from ibis import _

from conftest import PAYMENTS, expected_hop_sums

pytestmark = pytest.mark.ibis


@ibis.udf.scalar.pyarrow
def doubled(x: float) -> float:
    return pc.multiply(x, 2.0)


@ibis.udf.scalar.python
def tag(p: int, amount: float) -> str:
    return None if amount is None else "%d:%.1f" % (p, amount)


@ibis.udf.scalar.pandas
def cents(x: float) -> dt.int64:
    return (x * 100).round().astype("int64")


@ibis.udf.scalar.builtin
def upper(s: str) -> str:
    """dipper's own UPPER."""


def test_pyarrow_python_and_pandas_udfs(con):
    t = con.table("payments")
    e = t.select("orderId", d=doubled(_.payAmount), s=tag(_.provinceId, _.payAmount),
                 c=cents(_.payAmount), u=upper(tag(_.provinceId, _.payAmount)))
    sql = con.compile(e)
    assert type(doubled(t.payAmount).op()).__name__.upper() in sql  # Ibis's name for it
    df = e.execute().sort_values("orderId")
    by_order = {o: (p, a) for _s, o, a, p in PAYMENTS}
    assert df.d.tolist() == [by_order[o][1] * 2 for o in df.orderId]
    assert df.s.tolist() == ["%d:%.1f" % by_order[o] for o in df.orderId]
    assert df.c.tolist() == [round(by_order[o][1] * 100) for o in df.orderId]
    assert df.u.tolist() == df.s.tolist()  # digits and ':' have no case
    assert df.c.dtype == "int64"
    # in a filter and a group key, and registered once per connection
    f = t.filter(doubled(_.payAmount) > 10).group_by(k=tag(_.provinceId, ibis.literal(0.0))) \
         .agg(n=_.count())
    want = {}
    for _s, _o, a, p in PAYMENTS:
        if a * 2 > 10:
            want["%d:0.0" % p] = want.get("%d:0.0" % p, 0) + 1
    assert dict(zip(*f.execute()[["k", "n"]].values.T)) == want
    assert con._udf_names >= {type(doubled(t.payAmount).op()).__name__}
    fns = {r[0] for r in con.raw_sql("SHOW USER FUNCTIONS").fetchall()}
    assert type(doubled(t.payAmount).op()).__name__.lower() in {f.lower() for f in fns}


def test_python_udf_nulls_and_redefinition(con):
    m = ibis.memtable(pd.DataFrame({"p": [1, 2, 3], "a": [1.5, None, 2.0]}))

    @ibis.udf.scalar.python
    def half(x: float) -> float:
        return None if x is None else x / 2

    got = con.execute(m.select(h=half(_.a))).h.tolist()
    assert got[::2] == [0.75, 1.0] and pd.isna(got[1])

    @ibis.udf.scalar.python
    def half(x: float) -> float:  # noqa: F811 — a new definition, a new function
        return -1.0 if x is None else x / 4

    assert con.execute(m.select(h=half(_.a))).h.tolist() == [0.375, -1.0, 0.5]


def test_udf_errors(con):
    @ibis.udf.scalar.python
    def boom(x: float) -> float:
        raise ValueError("no %s for me" % x)

    t = con.table("payments")
    with pytest.raises(dipper.DataError, match="ValueError: no") as ei:
        t.select(b=boom(_.payAmount)).execute()
    assert "raise ValueError" in ei.value.traceback

    @ibis.udf.scalar.pyarrow
    def wrong(x: float) -> dt.int32:
        return pc.cast(x, pa.int64())  # declared int32

    with pytest.raises(dipper.DataError, match="int64"):
        t.select(w=wrong(_.payAmount)).execute()

    @ibis.udf.scalar.python
    def nothing() -> float:
        return 1.0

    with pytest.raises(com.UnsupportedOperationError, match="once per batch"):
        t.select(n=nothing()).execute()

    @ibis.udf.scalar.pyarrow(database="db")
    def elsewhere(x: float) -> float:
        return x

    with pytest.raises(com.UnsupportedArgumentError, match="database"):
        t.select(n=elsewhere(_.payAmount)).execute()


def test_udf_in_a_streaming_query(scon):
    # registered before the INSERT starts; called once per micro-batch
    t = scon.table("payments")
    calls = []

    @ibis.udf.scalar.pyarrow
    def plus_one(x: float) -> float:
        calls.append(len(x))
        return pc.add(x, 1.0)

    scon.create_table("sums", schema=ibis.schema({"provinceId": "int32",
                                                  "window_start": "timestamp(3)",
                                                  "total": "float64"}),
                      tbl_properties={"connector": "memory"})
    w = (t.mutate(amount=plus_one(_.payAmount)).window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.amount.sum())
         .select("provinceId", "window_start", "total"))
    q = scon.insert("sums", w)
    assert q.await_termination(60) is True
    got = {(r["provinceId"], pd.Timestamp(r["window_start"])): r["total"]
           for r in scon.con.fetch("sums").to_pylist()}
    plus = [(s, o, a + 1.0, p) for s, o, a, p in PAYMENTS]
    assert got == pytest.approx(expected_hop_sums(plus))
    assert sum(calls) == len(PAYMENTS)


def test_udf_on_spark_is_refused_at_compile_time():
    # no server is needed: the library refuses the query as it compiles
    con = ibis.dipper.connect("sc://127.0.0.1:1", mode="batch")
    con.raw_sql("CREATE TABLE t (x DOUBLE) WITH ('connector' = 'datagen', "
                "'number-of-rows' = '1')")
    with pytest.raises(dipper.UnsupportedError, match="Spark"):
        con.table("t").select(d=doubled(_.x)).execute()


def test_builtin_aggregate_udfs(con):
    # @ibis.udf.agg.builtin names a SQL aggregate: dipper's own, or a Python
    # aggregate made on the connection underneath
    @ibis.udf.agg.builtin
    def avg(x: float) -> float:
        """dipper's AVG."""

    con.con.create_aggregate_function(
        "amount_range", lambda st, x: {"lo": min(st["lo"], pc.min(x).as_py()),
                                       "hi": max(st["hi"], pc.max(x).as_py())},
        lambda a, b: {"lo": min(a["lo"], b["lo"]), "hi": max(a["hi"], b["hi"])},
        lambda st: st["hi"] - st["lo"], state={"lo": "DOUBLE", "hi": "DOUBLE"},
        returns="DOUBLE", params=["DOUBLE"], initial={"lo": float("inf"), "hi": float("-inf")})

    @ibis.udf.agg.builtin
    def amount_range(x: float) -> float:
        """the Python aggregate above."""

    t = con.table("payments")
    df = t.group_by("provinceId").agg(m=avg(_.payAmount), r=amount_range(_.payAmount)).execute()
    for p in (1, 2, 3):
        amounts = [a for _s, _o, a, q in PAYMENTS if q == p]
        row = df[df.provinceId == p].iloc[0]
        assert row.m == pytest.approx(sum(amounts) / len(amounts))
        assert row.r == max(amounts) - min(amounts)
