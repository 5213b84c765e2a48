# The request's pipeline written in Ibis, on the embedded engine and the
# real local Kafka (ctest's kafka_broker fixture): JSON payments on a topic
# (written with Ibis, in batch mode), read by a streaming query with a 10 s
# watermark, SUM(payAmount) per provinceId in 1-minute windows sliding
# every 30 s, into a Kafka sink topic; the sink read back with Ibis and
# every window checked.
import datetime
import os
import time

import pandas as pd
import pytest

import dipper
import ibis
from ibis import _

from conftest import KAFKA, PAYMENTS, T0, expected_hop_sums, payments_frame

pytestmark = [pytest.mark.ibis, pytest.mark.kafka]

SCHEMA = ibis.schema({"createTime": "timestamp(3)", "orderId": "int64", "payAmount": "float64",
                      "payPlatform": "int32", "provinceId": "int32"})
SINK = ibis.schema({"province_id": "int32", "window_start": "timestamp(3)",
                    "window_end": "timestamp(3)", "pay_amount": "float64"})


def seed_frame():
    df = payments_frame()
    df.insert(3, "payPlatform", (df.orderId % 2).astype("int32"))
    return df


def pipeline(con, src_topic, out_topic, bounded):
    """The seed's pipeline in Ibis: the handle of the streaming query."""
    pay = con.read_kafka(src_topic, schema=SCHEMA, bootstrap_servers=KAFKA,
                         table_name="payment_msg", bounded=bounded,
                         watermark=ibis.watermark("createTime", ibis.interval(seconds=10)))
    w = (pay.window_by("createTime")
         .hop(size=ibis.interval(minutes=1), slide=ibis.interval(seconds=30))
         .group_by("provinceId").agg(pay_amount=_.payAmount.sum()))
    out = w.select(province_id=_.provinceId, window_start=_.window_start,
                   window_end=_.window_end, pay_amount=_.pay_amount)
    return con.to_kafka(out, out_topic, bootstrap_servers=KAFKA, table_name="sink")


def read_sink(out_topic):
    b = ibis.dipper.connect(mode="batch")
    back = b.read_kafka(out_topic, schema=SINK, bootstrap_servers=KAFKA).execute()
    b.disconnect()
    return back


def check_windows(back, want):
    assert len(back) == len(want)  # each window once
    got = {(r.province_id, r.window_start): r.pay_amount for r in back.itertuples()}
    assert got == pytest.approx(want)
    assert (back.window_end - back.window_start == pd.Timedelta(minutes=1)).all()


def test_payments_pipeline_in_ibis_on_kafka():
    tag = "%d_%d" % (os.getpid(), time.time_ns())
    src, out = "ibis_payments_" + tag, "ibis_results_" + tag
    b = ibis.dipper.connect(mode="batch")
    assert b.to_kafka(ibis.memtable(seed_frame()), src, bootstrap_servers=KAFKA) is None
    assert b.read_kafka(src, schema=SCHEMA, bootstrap_servers=KAFKA).count().execute() == \
        len(PAYMENTS)

    s = ibis.dipper.connect(mode="streaming")
    q = pipeline(s, src, out, bounded=True)
    assert isinstance(q, dipper.Query) and q.name == "sink"
    assert q.await_termination(120) is True
    p = q.last_progress
    want = expected_hop_sums()
    assert p.finished and p.total_input_rows == len(PAYMENTS)
    assert p.total_output_rows == len(want)
    # the last payment is at 00:02:36, the delay 10 s
    marks = [r.watermark for r in q.recent_progress if r.watermark is not None]
    assert marks[-1] == datetime.datetime(2024, 1, 1, 0, 2, 26, tzinfo=datetime.timezone.utc)
    check_windows(read_sink(out), want)
    s.disconnect()
    b.disconnect()


def test_streaming_execute_of_a_kafka_topic_is_refused_with_the_way(tmp_path):
    s = ibis.dipper.connect(mode="streaming")
    t = s.read_kafka("ibis_never_%d" % os.getpid(), schema=SCHEMA, bootstrap_servers=KAFKA)
    with pytest.raises(dipper.StreamingError, match="to_kafka"):
        t.execute()
