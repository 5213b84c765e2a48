# The Ibis backend on the embedded engine (no servers): the entry point,
# connections and modes, tables, views, inserts, files, every window kind,
# OVER windows, joins, DISTINCT, Top-N, results as pandas and Arrow, and the
# SQL that Ibis's own Flink compiler gets wrong, checked as dipper runs it.
import datetime
import importlib.metadata

import pandas as pd
import pyarrow as pa
import pytest

import dipper
import ibis
import ibis.common.exceptions as com
from ibis import _

import conftest
from conftest import ENTRY_POINTS, PAYMENTS, PAYMENTS_SCHEMA, T0, expected_hop_sums

pytestmark = pytest.mark.ibis

SEC = datetime.timedelta(seconds=1)


def rows(df, *cols):
    return sorted((tuple(None if pd.isna(v) else v for v in r)
                   for r in df[list(cols)].itertuples(index=False)), key=repr)


# ---- the backend and its connection ----

def test_entry_point_loads_the_backend():
    assert ENTRY_POINTS == {"dipper": "dipper.ibis"}
    eps = [ep for ep in importlib.metadata.entry_points(group="ibis.backends")
           if ep.name == "dipper"]
    assert len(eps) == 1 and eps[0].value == "dipper.ibis"
    import dipper.ibis
    assert eps[0].load() is dipper.ibis
    con = ibis.dipper.connect()
    assert type(con) is dipper.ibis.Backend and con.name == "dipper"


def test_connect_modes(tmp_path):
    for mode in ("streaming", "batch"):
        con = ibis.dipper.connect(mode=mode)
        assert con.mode == mode and con.engine == "embedded"
        assert dict(con.raw_sql("SET").fetchall())["execution.runtime-mode"] == mode
        assert con.version == dipper.__version__
        con.disconnect()
    assert ibis.dipper.connect().mode == "streaming"
    with pytest.raises(com.IbisInputError, match="Invalid connection mode"):
        ibis.dipper.connect(mode="micro")
    con = ibis.dipper.connect(mode="batch",
                              options={"execution.checkpointing.dir": str(tmp_path)})
    assert dict(con.raw_sql("SET").fetchall())["execution.checkpointing.dir"] == str(tmp_path)
    raw = dipper.connect()
    be = ibis.dipper.from_connection(raw, mode="batch")
    assert be.con is raw and be.mode == "batch"
    with pytest.raises(dipper.OptionError):
        ibis.dipper.connect("http://nowhere")


def test_testconf_loads_the_data(backend, con):
    assert isinstance(backend, conftest.TestConf)
    assert {"win", "topk", "payments"} <= set(con.list_tables())
    assert con.table("payments").schema() == PAYMENTS_SCHEMA
    assert backend.win.count().execute() == 5
    # the watermark is the table's, as DESCRIBE says
    desc = con.raw_sql("DESCRIBE payments").fetchall()
    assert desc[0][1] == "TIMESTAMP(3) *ROWTIME*"
    assert desc[0][5] == "(createTime - INTERVAL '10' SECOND)"


def test_table_not_found(con):
    with pytest.raises(com.TableNotFound):
        con.table("nope")


# ---- results ----

def test_execute_to_pyarrow_and_batches(con):
    t = con.table("payments")
    expr = t.group_by("provinceId").agg(total=_.payAmount.sum(), n=_.count()).order_by("provinceId")
    df = expr.execute()
    want = pd.DataFrame(PAYMENTS, columns=["s", "o", "a", "p"]).groupby("p").agg(
        total=("a", "sum"), n=("a", "size")).reset_index()
    assert df["provinceId"].tolist() == want["p"].tolist()
    assert df["total"].tolist() == pytest.approx(want["total"].tolist())
    assert df["n"].tolist() == want["n"].tolist()
    tab = con.to_pyarrow(expr)
    assert isinstance(tab, pa.Table) and tab.column_names == ["provinceId", "total", "n"]
    assert tab.schema.field("n").type == pa.int64()
    reader = con.to_pyarrow_batches(expr, chunk_size=1)
    assert isinstance(reader, pa.RecordBatchReader)
    batches = list(reader)
    assert all(b.num_rows == 1 for b in batches) and len(batches) == 3
    assert pa.Table.from_batches(batches).equals(tab)
    # a scalar and a column
    assert t.payAmount.max().execute() == max(a for _, _, a, _ in PAYMENTS)
    assert sorted(t.provinceId.execute().unique().tolist()) == [1, 2, 3]
    assert expr.to_pandas().equals(df)
    # polars (installed in the test venv), through the Arrow result
    assert expr.to_polars().rows() == [tuple(x.values()) for x in tab.to_pylist()]


def test_memtables_and_sql(con):
    m = ibis.memtable({"k": [1, 2, 2], "v": ["a", "b", "c"]})
    assert rows(con.execute(m.group_by("k").agg(n=_.count())), "k", "n") == [(1, 1), (2, 2)]
    assert con.to_pyarrow(m.filter(_.k == 2)).column("v").to_pylist() == ["b", "c"]
    q = con.sql("SELECT provinceId, COUNT(*) AS n FROM payments GROUP BY provinceId")
    assert q.schema()["n"].is_int64()
    assert sum(q.execute()["n"]) == len(PAYMENTS)


def test_create_table_with_connector_and_watermark(con, tmp_path):
    path = tmp_path / "in"
    path.mkdir()
    t = con.create_table("files", schema=PAYMENTS_SCHEMA,
                         tbl_properties={"connector": "filesystem", "path": str(path),
                                         "format": "json"},
                         watermark=ibis.watermark("createTime", ibis.interval(seconds=10)),
                         primary_key="orderId")
    assert t.schema()["orderId"].nullable is False
    desc = {r[0]: r for r in con.raw_sql("DESCRIBE files").fetchall()}
    assert desc["createTime"][1] == "TIMESTAMP(3) *ROWTIME*"
    assert desc["orderId"][3] == "PRI(orderId)"
    with pytest.raises(com.IbisError, match="connector"):
        con.create_table("bad", schema=PAYMENTS_SCHEMA, tbl_properties={"path": "/x"})
    with pytest.raises(com.IbisInputError, match="not a column"):
        con.create_table("bad", schema=PAYMENTS_SCHEMA,
                         tbl_properties={"connector": "blackhole"},
                         watermark=ibis.watermark("ts", ibis.interval(seconds=1)))
    con.create_table("files", schema=PAYMENTS_SCHEMA, overwrite=True,
                     tbl_properties={"connector": "blackhole"})
    assert "files" in con.list_tables(like="^fil")
    con.drop_table("files")
    assert "files" not in con.list_tables()
    con.drop_table("files", force=True)


def test_views_and_batch_insert(con):
    t = con.table("payments")
    v = con.create_view("big", t.filter(_.payAmount > 5).select("orderId", "payAmount"))
    assert v.count().execute() == sum(1 for p in PAYMENTS if p[2] > 5)
    assert "big" in con.list_views()
    con.create_view("big", t.filter(_.payAmount > 6), overwrite=True)
    assert con.table("big").count().execute() == sum(1 for p in PAYMENTS if p[2] > 6)
    con.drop_view("big")
    assert "big" not in con.list_views()
    con.create_table("out", schema=ibis.schema({"orderId": "int64", "payAmount": "float64"}),
                     tbl_properties={"connector": "memory"})
    assert con.insert("out", t.filter(_.provinceId == 1).select("orderId", "payAmount")) is None
    got = con.con.fetch("out").to_pylist()
    assert sorted(r["orderId"] for r in got) == [o for _, o, _, p in PAYMENTS if p == 1]
    # in batch mode a memory sink holds the rows of the last run
    con.insert("out", [{"orderId": 1, "payAmount": 2.0}])
    assert con.con.fetch("out").to_pylist() == [{"orderId": 1, "payAmount": 2.0}]
    con.insert("out", pd.DataFrame({"orderId": [2], "payAmount": [3.0]}))
    assert con.con.fetch("out").to_pylist() == [{"orderId": 2, "payAmount": 3.0}]


def test_create_table_from_an_expression_in_batch_mode(con):
    t = con.table("payments")
    c = con.create_table("copy", t.filter(_.provinceId == 2))
    assert c.count().execute() == sum(1 for p in PAYMENTS if p[3] == 2)


def test_read_files(con, tmp_path):
    # (Parquet: test_ibis_files.py)
    (tmp_path / "c.csv").write_text("k,v\n1,a\n2,b\n")
    c = con.read_csv(tmp_path / "c.csv")
    assert c.schema() == ibis.schema({"k": "int64", "v": "string"})
    assert rows(c.execute(), "k", "v") == [(1, "a"), (2, "b")]
    (tmp_path / "j.json").write_text('{"k": 1, "v": 2.5}\n{"k": 3, "v": 0.5}\n')
    j = con.read_json(tmp_path / "j.json",
                      schema=ibis.schema({"k": "int32", "v": "float64"}))
    assert j.v.sum().execute() == 3.0
    assert con.read_json(tmp_path / "j.json").k.sum().execute() == 4


# ---- windows ----

def test_hop_windows_exact(con):
    t = con.table("payments")
    w = (t.window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.payAmount.sum()))
    df = w.execute()
    got = {(r.provinceId, r.window_start): r.total for r in df.itertuples()}
    assert got == pytest.approx(expected_hop_sums())
    assert all(df.window_end - df.window_start == pd.Timedelta(minutes=1))


def test_tumble_over_a_filtered_table(con):
    t = con.table("payments")
    w = (t.filter(_.payAmount > 2).window_by("createTime")
         .tumble(size=ibis.interval(minutes=1)).agg(total=_.payAmount.sum(), n=_.count()))
    sql = con.compile(w)
    assert "TABLE SELECT" not in sql and "WITH" in sql
    want = {}
    for s, _o, a, _p in PAYMENTS:
        if a > 2:
            k = T0 + pd.Timedelta(minutes=s // 60)
            n, tot = want.get(k, (0, 0.0))
            want[k] = (n + 1, tot + a)
    got = {r.window_start: (r.n, r.total) for r in w.execute().itertuples()}
    assert got == want


def test_cumulate_and_session_windows(con):
    t = con.table("payments")
    c = (t.window_by("createTime")
         .cumulate(step=ibis.interval(seconds=30), size=ibis.interval(minutes=1))
         .group_by("provinceId").agg(total=_.payAmount.sum()))
    assert "CUMULATE(TABLE `payments`" in con.compile(c)
    want = {}
    for s, _o, a, p in PAYMENTS:
        start = s // 60 * 60
        for end in (start + 30, start + 60):
            if s < end:
                key = (p, T0 + pd.Timedelta(seconds=end))
                want[key] = want.get(key, 0.0) + a
    got = {(r.provinceId, r.window_end): r.total for r in c.execute().itertuples()}
    assert got == pytest.approx(want)

    ev = con.create_table(
        "clicks", pd.DataFrame({
            "u": ["a", "a", "b", "a", "b"],
            "ts": pd.to_datetime(["2024-01-01 00:00:00", "2024-01-01 00:00:03",
                                  "2024-01-01 00:00:04", "2024-01-01 00:00:20",
                                  "2024-01-01 00:00:06"]).astype("datetime64[ms]")}),
        schema=ibis.schema({"u": "string", "ts": "timestamp(3)"}),
        watermark=ibis.watermark("ts", ibis.interval(seconds=1)))
    s = ev.window_by("ts").session(gap=ibis.interval(seconds=5)).group_by("u").agg(n=_.count())
    assert "PARTITION BY (`u`)" in con.compile(s)
    got = rows(s.execute(), "u", "window_start", "window_end", "n")
    ts = pd.Timestamp
    assert got == [("a", ts("2024-01-01 00:00:00"), ts("2024-01-01 00:00:08"), 2),
                   ("a", ts("2024-01-01 00:00:20"), ts("2024-01-01 00:00:25"), 1),
                   ("b", ts("2024-01-01 00:00:04"), ts("2024-01-01 00:00:11"), 2)]
    with pytest.raises(com.IbisInputError, match="session window"):
        ev.window_by("ts").session(gap=ibis.interval(seconds=5)).group_by(
            k=_.u.upper()).agg(n=_.count())


def test_over_windows(con):
    check_over_windows(con)


def test_over_windows_in_streaming_mode(scon):
    # ordered by the watermark's column, each row's value as it arrives
    check_over_windows(scon)


def check_over_windows(con):
    t = con.table("payments")
    rows_w = ibis.window(group_by="provinceId", order_by="createTime", preceding=2, following=0)
    range_w = ibis.window(group_by="provinceId", order_by="createTime",
                          range=(-ibis.interval(seconds=20), 0))
    e = t.select("orderId", "provinceId", "createTime",
                 r=_.payAmount.sum().over(rows_w), g=_.payAmount.sum().over(range_w))
    df = e.execute().sort_values("orderId")
    by = {}
    for s, o, a, p in sorted(PAYMENTS):
        by.setdefault(p, []).append((s, o, a))
    want_r, want_g = {}, {}
    for p, lst in by.items():
        for i, (s, o, a) in enumerate(lst):
            want_r[o] = sum(x[2] for x in lst[max(0, i - 2):i + 1])
            want_g[o] = sum(x[2] for x in lst if s - 20 <= x[0] <= s)
    assert dict(zip(df.orderId, df.r)) == pytest.approx(want_r)
    assert dict(zip(df.orderId, df.g)) == pytest.approx(want_g)


# ---- joins, distinct, Top-N ----

@pytest.fixture
def jt(con):
    left = con.create_table("jl", pd.DataFrame({"k": [1, 2, 3, 3], "a": ["x", "y", "z", "w"]}))
    right = con.create_table("jr", pd.DataFrame({"k": [2, 3, 4], "b": [20.0, 30.0, 40.0]}))
    return left, right


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer", "semi", "anti"])
def test_join_kinds(con, jt, how):
    left, right = jt
    e = left.join(right, left.k == right.k, how=how)
    got = e.execute()
    ldf, rdf = left.execute(), right.execute()
    if how in ("semi", "anti"):
        keep = ldf.k.isin(rdf.k) if how == "semi" else ~ldf.k.isin(rdf.k)
        want = ldf[keep]
        assert rows(got, "k", "a") == rows(want, "k", "a")
    else:
        # pandas' merge with both keys kept: k from the left, k_right from the right
        rdf2 = rdf.assign(k_right=rdf.k)
        want = ldf.merge(rdf2, on="k", how=how).assign(
            k=lambda d: d.k.where(d.a.notna()))
        cols = [c for c in ("k", "a", "k_right", "b") if c in got.columns]
        assert len(cols) == (3 if how == "inner" else 4)  # Ibis keeps one k of an inner join
        assert rows(got, *cols) == rows(want, *cols)


def test_cross_join(jt):
    left, right = jt
    assert left.cross_join(right).count().execute() == 12


@pytest.mark.parametrize("how", ["any_inner", "any_left", "positional"])
def test_join_kinds_of_other_engines_are_refused(jt, how):
    left, right = jt
    e = left.join(right, how=how) if how == "positional" else \
        left.join(right, left.k == right.k, how=how)
    with pytest.raises(com.UnsupportedOperationError, match="dipper: the %s join" % how):
        e.execute()


def test_asof_join(con):
    trades = con.create_table("trades", pd.DataFrame({
        "sym": ["a", "a", "b", "a"],
        "tt": pd.to_datetime(["2024-01-01 00:00:05", "2024-01-01 00:00:15",
                              "2024-01-01 00:00:07", "2024-01-01 00:00:01"])}))
    quotes = con.create_table("quotes", pd.DataFrame({
        "sym": ["a", "a", "b"], "px": [1.0, 2.0, 3.0],
        "qt": pd.to_datetime(["2024-01-01 00:00:02", "2024-01-01 00:00:10",
                              "2024-01-01 00:00:09"])}))
    e = trades.asof_join(quotes, on=trades.tt >= quotes.qt, predicates=trades.sym == quotes.sym)
    assert "ASOF LEFT JOIN" in con.compile(e)
    got = sorted((r.sym, r.tt.second, None if pd.isna(r.px) else r.px)
                 for r in e.execute().itertuples())
    assert got == [("a", 1, None), ("a", 5, 1.0), ("a", 15, 2.0), ("b", 7, None)]
    # a tolerance is dipper's TOLERANCE clause (Ibis's own form of it, a
    # left join back on equal times, would match none of these)
    e = trades.asof_join(quotes, on=trades.tt >= quotes.qt, predicates=trades.sym == quotes.sym,
                         tolerance=ibis.interval(seconds=4))
    assert "TOLERANCE INTERVAL '4' SECOND" in con.compile(e)
    got = sorted((r.sym, r.tt.second, None if pd.isna(r.px) else r.px)
                 for r in e.execute().itertuples())
    assert got == [("a", 1, None), ("a", 5, 1.0), ("a", 15, None), ("b", 7, None)]
    # expressions of other backends keep Ibis's rewrite
    u = ibis.table({"tt": "timestamp", "sym": "string"}, name="u")
    v = ibis.table({"qt": "timestamp", "sym": "string"}, name="v")
    assert "TOLERANCE" not in ibis.to_sql(
        u.asof_join(v, on=u.tt >= v.qt, tolerance=ibis.interval(seconds=4)), dialect="duckdb")


def test_distinct(con):
    t = con.table("payments")
    assert sorted(t.select("provinceId").distinct().execute().provinceId) == [1, 2, 3]
    assert t.provinceId.nunique().execute() == 3


def test_top_n_from_mutate_and_filter(con):
    t = con.table("payments")
    ranked = t.mutate(rn=ibis.row_number().over(group_by="provinceId",
                                                 order_by=[_.payAmount.desc(), _.orderId]))
    e = ranked.filter(_.rn < 2)
    sql = con.compile(e)
    assert "- 1 AS" not in sql and "`rn` < 3" in sql
    assert "TopN" in con.con.explain(sql)
    df = e.execute()
    want = []
    for p in (1, 2, 3):
        mine = sorted((x for x in PAYMENTS if x[3] == p), key=lambda x: (-x[2], x[1]))
        want += [(p, mine[0][1], 0), (p, mine[1][1], 1)]
    assert rows(df, "provinceId", "orderId", "rn") == sorted(want)


def test_top_n_from_a_filter_on_the_rank(con):
    t = con.table("payments")
    e = t.filter(ibis.row_number().over(group_by="provinceId",
                                        order_by=[_.payAmount.desc(), _.orderId]) == 0)
    sql = con.compile(e)
    assert "QUALIFY" not in sql
    assert "Deduplicate" in con.con.explain(sql) or "TopN" in con.con.explain(sql)
    got = rows(e.execute(), "provinceId", "orderId")
    want = sorted((p, sorted((x for x in PAYMENTS if x[3] == p),
                             key=lambda x: (-x[2], x[1]))[0][1]) for p in (1, 2, 3))
    assert got == want
    assert set(e.columns) == set(t.columns)


def test_topk_table(backend):
    # Ibis's own topk data (ibis.backends.tests.data.topk), ranked with ties
    t = backend.connection.table("topk")
    e = t.mutate(r=ibis.rank().over(order_by=_.x.desc())).filter(_.r <= 1)
    df = e.execute()
    top = t.x.max().execute()
    assert (df.x == top).all() and (df.r <= 1).all()


# ---- the SQL Ibis's Flink compiler gets wrong ----

def test_intervals_are_written_once(con):
    t = con.table("payments")
    e = t.filter(_.createTime > ibis.timestamp("2024-01-01 00:00:00") + ibis.interval(hours=1))
    first, second = con.compile(e), con.compile(e)
    assert first == second
    assert "INTERVAL '1' HOUR" in first and "HOUR(2)" not in first
    assert e.count().execute() == 0
    big = t.filter(_.createTime < ibis.timestamp("2024-01-02") - ibis.interval(days=100))
    assert "INTERVAL '100' DAY(3)" in con.compile(big)
    assert big.count().execute() == 0
    late = t.mutate(later=_.createTime + ibis.interval(seconds=90))
    assert (late.execute().later - late.execute().createTime == pd.Timedelta(seconds=90)).all()


def test_flink_compiler_emits_what_dipper_refuses(con):
    # What Ibis's own Flink compiler writes for these, and that dipper (as
    # Flink) refuses it: the reason this backend has a compiler of its own.
    from ibis.backends.sql.compilers.flink import compiler as flink
    t = con.table("payments")
    w = (t.filter(_.payAmount > 2).window_by("createTime")
         .tumble(size=ibis.interval(minutes=1)).agg(n=_.count()))
    bad = flink.to_sqlglot(w).sql("flink")
    assert "TABLE SELECT" in bad
    with pytest.raises(dipper.SyntaxError):
        con.con.check(bad)
    q = t.filter(ibis.row_number().over(group_by="provinceId", order_by=_.payAmount) < 1)
    assert "QUALIFY" in flink.to_sqlglot(q).sql("flink")


# ---- streaming mode ----

def test_streaming_execute_reads_bounded_inputs(scon):
    t = scon.table("payments")
    w = (t.window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.payAmount.sum()))
    got = {(r.provinceId, r.window_start): r.total for r in w.execute().itertuples()}
    assert got == pytest.approx(expected_hop_sums())


def test_streaming_execute_of_an_unbounded_input_says_what_to_do(scon):
    g = scon.create_table("gen", schema=ibis.schema({"x": "int32"}),
                          tbl_properties={"connector": "datagen", "rows-per-second": "5"})
    with pytest.raises(dipper.StreamingError, match="con.insert"):
        g.execute()


def test_streaming_insert_gives_a_query_handle(scon):
    t = scon.table("payments")
    scon.create_table("sums", schema=ibis.schema({"provinceId": "int32",
                                                  "window_start": "timestamp(3)",
                                                  "total": "float64"}),
                      tbl_properties={"connector": "memory"})
    w = (t.window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.payAmount.sum())
         .select("provinceId", "window_start", "total"))
    q = scon.insert("sums", w)
    assert isinstance(q, dipper.Query) and q.name == "sums"
    assert q.await_termination(60) is True
    p = q.last_progress
    assert p.finished and p.total_input_rows == len(PAYMENTS)
    got = {(r["provinceId"], pd.Timestamp(r["window_start"])): r["total"]
           for r in scon.con.fetch("sums").to_pylist()}
    assert got == pytest.approx(expected_hop_sums())
    with pytest.raises(com.IbisError, match="batch mode"):
        scon.create_table("copy", t)


def test_streaming_joins_of_two_streams(scon):
    ts = lambda *v: pd.to_datetime(list(v)).astype("datetime64[ms]")  # noqa: E731
    tr = scon.create_table(
        "trades", pd.DataFrame({"sym": ["a", "a", "b", "a"],
                                "tt": ts("2024-01-01 00:00:05", "2024-01-01 00:00:15",
                                         "2024-01-01 00:00:07", "2024-01-01 00:00:30")}),
        schema=ibis.schema({"sym": "string", "tt": "timestamp(3)"}),
        watermark=ibis.watermark("tt", ibis.interval(seconds=1)))
    qu = scon.create_table(
        "quotes", pd.DataFrame({"sym": ["a", "a", "b"], "px": [1.0, 2.0, 3.0],
                                "qt": ts("2024-01-01 00:00:02", "2024-01-01 00:00:10",
                                         "2024-01-01 00:00:09")}),
        schema=ibis.schema({"sym": "string", "px": "float64", "qt": "timestamp(3)"}),
        watermark=ibis.watermark("qt", ibis.interval(seconds=1)))
    asof = tr.asof_join(qu, on=tr.tt >= qu.qt, predicates=tr.sym == qu.sym)
    got = sorted((r.sym, r.tt.second, None if pd.isna(r.px) else r.px)
                 for r in asof.select(tr.sym, tr.tt, qu.px).execute().itertuples())
    assert got == [("a", 5, 1.0), ("a", 15, 2.0), ("a", 30, 2.0), ("b", 7, None)]
    # an interval join: the time condition bounds both sides' state
    j = tr.join(qu, [tr.sym == qu.sym,
                     tr.tt.between(qu.qt - ibis.interval(seconds=5),
                                   qu.qt + ibis.interval(seconds=5))])
    got = sorted((r.sym, r.tt.second, r.px) for r in j.select(tr.sym, tr.tt, qu.px)
                 .execute().itertuples())
    assert got == [("a", 5, 1.0), ("a", 5, 2.0), ("a", 15, 2.0), ("b", 7, 3.0)]
