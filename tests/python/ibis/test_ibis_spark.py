# The Ibis backend on the real local Spark Connect server (ctest's
# spark_server fixture) and Kafka (kafka_broker): batch work on Spark
# (results, windows, joins, Parquet), and the request's pipeline in Ibis as
# a Spark Structured Streaming query between Kafka topics, every window
# checked.
import os
import tempfile
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dipper
import ibis
from ibis import _

from conftest import KAFKA, PAYMENTS, PAYMENTS_SCHEMA, SPARK, expected_hop_sums, payments_frame
from test_ibis_kafka import check_windows, pipeline, read_sink, seed_frame

pytestmark = [pytest.mark.ibis, pytest.mark.spark]


@pytest.fixture
def spark():
    con = ibis.dipper.connect(SPARK, mode="batch")
    yield con
    con.disconnect()


def test_batch_on_spark(spark, tmp_path):
    assert spark.engine == SPARK and spark.mode == "batch"
    t = spark.create_table("payments", payments_frame(), schema=PAYMENTS_SCHEMA,
                           watermark=ibis.watermark("createTime", ibis.interval(seconds=10)))
    agg = t.group_by("provinceId").agg(total=_.payAmount.sum(), n=_.count()).order_by("provinceId")
    df = agg.execute()
    assert df.provinceId.tolist() == [1, 2, 3]
    assert df.n.sum() == len(PAYMENTS)
    w = (t.filter(_.payAmount > 0).window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(total=_.payAmount.sum()))
    got = {(r.provinceId, r.window_start): r.total for r in w.execute().itertuples()}
    assert got == pytest.approx(expected_hop_sums())
    top = t.mutate(rn=ibis.row_number().over(group_by="provinceId",
                                             order_by=[_.payAmount.desc(), _.orderId]))
    assert len(top.filter(_.rn < 2).execute()) == 6
    pq.write_table(pa.Table.from_pandas(payments_frame(), preserve_index=False),
                   tmp_path / "p.parquet")
    p = spark.read_parquet(tmp_path / "p.parquet")
    assert p.count().execute() == len(PAYMENTS)
    j = t.join(p, t.orderId == p.orderId).select(t.orderId, a=t.payAmount, b=p.payAmount)
    jd = j.execute()
    assert len(jd) == len(PAYMENTS) and (jd.a == jd.b).all()


def test_payments_pipeline_in_ibis_on_spark_and_kafka():
    tag = "%d_%d" % (os.getpid(), time.time_ns())
    src, out = "ibis_spark_payments_" + tag, "ibis_spark_results_" + tag
    b = ibis.dipper.connect(mode="batch")
    # one payment far later moves Spark's watermark past every window of the
    # others (Spark closes a window once the watermark passes its end)
    flush = pd.DataFrame({"createTime": [pd.Timestamp("2024-01-01 00:10:00")],
                          "orderId": [9999], "payAmount": [0.0], "payPlatform": [0],
                          "provinceId": [99]}).astype(seed_frame().dtypes.to_dict())
    b.to_kafka(ibis.memtable(pd.concat([seed_frame(), flush])), src, bootstrap_servers=KAFKA)
    ck = tempfile.mkdtemp(prefix="dipper_ibis_spark_")
    s = ibis.dipper.connect(SPARK, mode="streaming",
                            options={"execution.checkpointing.dir": ck,
                                     "dipper.trigger": "available-now"})
    q = pipeline(s, src, out, bounded=False)
    assert isinstance(q, dipper.Query) and q.name == "sink"
    assert q.id and q.run_id
    assert q.await_termination(300) is True
    back = read_sink(out)
    back = back[back.province_id != 99]
    check_windows(back, expected_hop_sums())
    s.disconnect()
    b.disconnect()
