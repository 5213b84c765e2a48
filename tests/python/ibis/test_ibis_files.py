# The Ibis backend's files on the embedded engine: read_parquet (pyarrow
# reads the files in Python and fills a bounded memory table: a file, a
# folder, a glob, a list; batch mode and a bounded side in streaming mode)
# and Ibis's writers to_parquet, to_parquet_dir and to_csv (the result as
# pyarrow batches, written by pyarrow).
import datetime

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import ibis
import ibis.common.exceptions as com
from ibis import _

from conftest import PAYMENTS, PAYMENTS_SCHEMA, T0, expected_hop_sums, payments_frame

pytestmark = pytest.mark.ibis


def write_payments(folder, parts=3):
    """The payments in `parts` Parquet files of folder; their rows."""
    folder.mkdir(exist_ok=True)
    t = pa.Table.from_pandas(payments_frame(), preserve_index=False)
    step = -(-t.num_rows // parts)
    for i in range(parts):
        pq.write_table(t.slice(i * step, step), folder / ("part-%d.parquet" % i))
    return t


def test_read_parquet_file_folder_glob_and_list(con, tmp_path):
    t = write_payments(tmp_path / "pay")
    one = con.read_parquet(tmp_path / "pay" / "part-0.parquet", table_name="pq_one")
    assert one.schema() == PAYMENTS_SCHEMA  # from the file: timestamp[ms] is TIMESTAMP(3)
    first = pq.read_table(tmp_path / "pay" / "part-0.parquet")
    assert one.count().execute() == first.num_rows > 0
    for name, src in [("pq_dir", tmp_path / "pay"),
                      ("pq_glob", str(tmp_path / "pay" / "*.parquet")),
                      ("pq_list", sorted((tmp_path / "pay").iterdir()))]:
        r = con.read_parquet(src, table_name=name)
        got = r.order_by("orderId").to_pyarrow()
        assert got.num_rows == len(PAYMENTS), name
        assert got.column("orderId").to_pylist() == sorted(t.column("orderId").to_pylist())
        assert got.column("createTime").to_pylist() == sorted(t.column("createTime").to_pylist())
    # every value, through a query dipper runs over it
    e = con.table("pq_dir").group_by("provinceId").agg(total=_.payAmount.sum(), n=_.count())
    want = {}
    for _s, _o, a, p in PAYMENTS:
        n, tot = want.get(p, (0, 0.0))
        want[p] = (n + 1, tot + a)
    assert {r.provinceId: (r.n, r.total) for r in e.execute().itertuples()} == want


def test_read_parquet_types_schema_and_errors(con, tmp_path):
    src = pa.table({
        "i8": pa.array([1, None], pa.int8()), "u16": pa.array([7, 65535], pa.uint16()),
        "d": pa.array([1.5, float("nan")]), "s": ["a", None],
        "b": pa.array([b"\x00\x01", b""]), "dec": pa.array([1, 2], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2024, 1, 2), None]),
        "ns": pa.array([1_700_000_000_123_456_000, None], pa.timestamp("ns")),
        "utc": pa.array([1_700_000_000_000_000, 0], pa.timestamp("us", tz="UTC")),
        "tags": pa.array([["x", "y"], []], pa.list_(pa.string())),
        "row": pa.array([{"a": 1, "b": "q"}, None], pa.struct([("a", pa.int32()),
                                                              ("b", pa.string())])),
    })
    pq.write_table(src, tmp_path / "types.parquet")
    t = con.read_parquet(tmp_path / "types.parquet", table_name="typed")
    desc = {r[0]: r[1] for r in con.raw_sql("DESCRIBE typed").fetchall()}
    assert desc["i8"] == "TINYINT" and desc["u16"] == "INT" and desc["dec"] == "DECIMAL(10, 2)"
    assert desc["ns"] == "TIMESTAMP(9)" and desc["utc"] == "TIMESTAMP_LTZ(6)"
    got = t.to_pyarrow().to_pylist()
    assert got[0]["i8"] == 1 and got[1]["i8"] is None and got[1]["u16"] == 65535
    assert got[0]["b"] == b"\x00\x01" and str(got[1]["dec"]) == "2.00"
    assert got[0]["day"] == datetime.date(2024, 1, 2)
    # dipper keeps microseconds: the nanoseconds' last three digits go
    assert pd.Timestamp(got[0]["ns"]) == pd.Timestamp(1_700_000_000_123_456_000)
    assert got[0]["utc"] == datetime.datetime(2023, 11, 14, 22, 13, 20,
                                              tzinfo=datetime.timezone.utc)
    assert got[0]["tags"] == ["x", "y"] and got[0]["row"] == {"a": 1, "b": "q"}
    assert got[1]["row"] is None and pd.isna(got[1]["d"])
    # a schema of some of the columns, typed as asked
    s = con.read_parquet(tmp_path / "types.parquet", table_name="some",
                         schema=ibis.schema({"s": "string", "i8": "int64"}))
    assert s.columns == ("s", "i8") and s.schema()["i8"].is_int64()
    assert sorted(s.i8.execute().dropna().tolist()) == [1]
    with pytest.raises(com.IbisInputError, match="no column nope"):
        con.read_parquet(tmp_path / "types.parquet", schema=ibis.schema({"nope": "int32"}))
    with pytest.raises(com.IbisInputError, match="no such file or folder"):
        con.read_parquet(tmp_path / "missing.parquet")
    with pytest.raises(com.IbisInputError, match="no file matches"):
        con.read_parquet(str(tmp_path / "*.nothing"))
    with pytest.raises(com.IbisInputError, match="a list may not hold a folder"):
        con.read_parquet([tmp_path, tmp_path / "types.parquet"])
    with pytest.raises(com.IbisInputError, match="options"):
        con.read_parquet(tmp_path / "types.parquet", options={"source.monitor-interval": "1 s"})
    (tmp_path / "empty").mkdir()
    with pytest.raises(com.IbisInputError, match="give `schema`"):
        con.read_parquet(tmp_path / "empty")
    e = con.read_parquet(tmp_path / "empty", schema=ibis.schema({"x": "int32"}))
    assert e.count().execute() == 0


def test_read_parquet_hive_partitions(con, tmp_path):
    for k in (1, 2):
        part = tmp_path / "h" / ("k=%d" % k)
        part.mkdir(parents=True)
        pq.write_table(pa.table({"v": [k * 10, k * 10 + 1]}), part / "f.parquet")
    t = con.read_parquet(tmp_path / "h", partitioning="hive")
    assert set(t.columns) == {"v", "k"}
    assert sorted(map(tuple, t.select("k", "v").execute().values.tolist())) == \
        [(1, 10), (1, 11), (2, 20), (2, 21)]


def test_read_parquet_in_streaming_mode(scon, tmp_path):
    # a bounded input: execute reads it to the end, with its watermark, and
    # a started query ends
    write_payments(tmp_path / "pay")
    t = scon.read_parquet(tmp_path / "pay", table_name="pay_pq",
                          watermark=ibis.watermark("createTime", ibis.interval(seconds=10)))
    w = (t.window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.payAmount.sum()))
    got = {(r.provinceId, r.window_start): r.total for r in w.execute().itertuples()}
    assert got == pytest.approx(expected_hop_sums())
    # the bounded side of a join with a stream: the memory table of the
    # payments is pushed to in micro-batches while the query runs
    prov = scon.read_parquet(_province_file(tmp_path), table_name="prov")
    scon.con.sql("CREATE TABLE live (orderId BIGINT, provinceId INT) "
                 "WITH ('connector' = 'memory')")
    scon.con.sql("CREATE TABLE named (orderId BIGINT, name STRING) "
                 "WITH ('connector' = 'memory')")
    live = scon.table("live")
    j = live.join(prov, live.provinceId == prov.provinceId).select(live.orderId, prov.name)
    q = scon.insert("named", j)
    scon.con.push("live", [{"orderId": 1, "provinceId": 2}, {"orderId": 2, "provinceId": 9}])
    q.process_all_available()
    scon.con.push("live", [{"orderId": 3, "provinceId": 1}])
    q.process_all_available()
    q.stop()
    assert sorted(tuple(r.values()) for r in scon.con.fetch("named").to_pylist()) == \
        [(1, "two"), (3, "one")]


def _province_file(tmp_path):
    pq.write_table(pa.table({"provinceId": pa.array([1, 2, 3], pa.int32()),
                             "name": ["one", "two", "three"]}), tmp_path / "prov.parquet")
    return tmp_path / "prov.parquet"


def test_to_parquet_to_csv_and_back(con, tmp_path):
    e = (con.table("payments").filter(_.provinceId == 2)
         .select("orderId", "createTime", "payAmount").order_by("orderId"))
    want = e.to_pyarrow()
    con.to_parquet(e, tmp_path / "out.parquet")
    back = pq.read_table(tmp_path / "out.parquet")
    assert back.equals(want) and back.schema.field("createTime").type == pa.timestamp("ms")
    assert back.num_rows == sum(1 for p in PAYMENTS if p[3] == 2)
    # and read again, through dipper
    assert con.read_parquet(tmp_path / "out.parquet").payAmount.sum().execute() == \
        pytest.approx(sum(p[2] for p in PAYMENTS if p[3] == 2))
    e.to_parquet(tmp_path / "expr.parquet", compression="zstd")  # ParquetWriter's arguments
    assert pq.ParquetFile(tmp_path / "expr.parquet").metadata.row_group(0).column(0) \
        .compression == "ZSTD"
    con.to_parquet_dir(e, tmp_path / "dir")
    assert pq.read_table(tmp_path / "dir").num_rows == want.num_rows
    con.to_csv(e, tmp_path / "out.csv")
    csv = pcsv.read_csv(tmp_path / "out.csv")
    assert csv.column("orderId").to_pylist() == want.column("orderId").to_pylist()
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert lines[0] == '"orderId","createTime","payAmount"' and len(lines) == want.num_rows + 1
    first = want.slice(0, 1).to_pylist()[0]
    assert pd.Timestamp(csv.column("createTime")[0].as_py()) == pd.Timestamp(first["createTime"])
    assert T0 <= pd.Timestamp(first["createTime"])
