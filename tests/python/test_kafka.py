# The request's pipeline from Python on the real local Kafka (ctest's
# kafka_broker fixture starts it): JSON payments written to a topic, read by
# a streaming query with a 10 s watermark, 1-minute windows sliding every
# 30 s, SUM(payAmount) per provinceId, into a Python callback and into a
# Kafka sink topic read back; every window checked.
import collections
import datetime
import os
import time

import pytest

import dipper

pytestmark = pytest.mark.kafka

BOOT = "127.0.0.1:%s" % os.environ.get("DIPPER_KAFKA_PORT", "9092")
T0 = datetime.datetime(2024, 1, 1, 0, 0, 0)


def payments():
    # (seconds after T0, orderId, payAmount, provinceId)
    rows = []
    for i in range(40):
        rows.append((i * 4 + (i % 3), 1000 + i, float(i % 7) + 0.5, 1 + i % 3))
    return rows


def expected(rows):
    sums = collections.defaultdict(float)
    for sec, _, amount, prov in rows:
        last = sec // 30 * 30
        for start in (last - 30, last):
            sums[(prov, T0 + datetime.timedelta(seconds=start))] += amount
    return dict(sums)


def test_payments_windows_from_kafka():
    tag = "%d_%d" % (os.getpid(), time.time_ns())
    src_topic, out_topic = "py_payments_" + tag, "py_results_" + tag
    rows = payments()
    con = dipper.connect()
    # write the payments to Kafka as JSON (a batch INSERT)
    values = ", ".join("(TIMESTAMP '%s', %d, %s, %d)" % (
        (T0 + datetime.timedelta(seconds=s)).isoformat(sep=" "), o, a, p) for s, o, a, p in rows)
    con.sql("""SET 'execution.runtime-mode' = 'batch';
        CREATE TABLE pay_out (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,
          provinceId INT) WITH ('connector' = 'kafka', 'topic' = '%s',
          'properties.bootstrap.servers' = '%s', 'format' = 'json');
        INSERT INTO pay_out VALUES %s""" % (src_topic, BOOT, values))

    s = dipper.connect()
    windows = {}
    batch_ids = []

    def on_batch(batch, batch_id):
        batch_ids.append(batch_id)
        for r in batch.to_pylist():
            windows[(r["provinceId"], r["window_start"])] = r["total"]
    s.register_callback("windows", on_batch)
    queries = s.start("""
        CREATE TABLE payments (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,
          provinceId INT, WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND)
          WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
          'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
          'format' = 'json');
        CREATE TABLE win (provinceId INT, window_start TIMESTAMP(3), total DOUBLE)
          WITH ('connector' = 'callback', 'name' = 'windows');
        CREATE TABLE results (provinceId INT, window_start TIMESTAMP(3), total DOUBLE)
          WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
          'format' = 'json');
        CREATE VIEW w AS SELECT provinceId, window_start, SUM(payAmount) AS total
          FROM TABLE(HOP(TABLE payments, DESCRIPTOR(createTime), INTERVAL '30' SECOND,
                         INTERVAL '1' MINUTE))
          GROUP BY provinceId, window_start, window_end;
        INSERT INTO win SELECT * FROM w;
        INSERT INTO results SELECT * FROM w;
        """ % (src_topic, BOOT, out_topic, BOOT))
    assert [q.name for q in queries] == ["win", "results"]
    events = list(s.listen(timeout=120))
    assert [e.kind for e in events].count("terminated") == 2
    assert all(e.error is None for e in events)
    want = expected(rows)
    assert windows == pytest.approx(want)
    assert batch_ids == sorted(batch_ids)
    for q in queries:
        p = q.last_progress
        assert p.finished and p.total_input_rows == len(rows)
        assert p.total_output_rows == len(want)
        # the last event is at 00:02:36 (+0 s), the delay 10 s
        marks = [r.watermark for r in q.recent_progress if r.watermark is not None]
        assert marks[-1] == datetime.datetime(2024, 1, 1, 0, 2, 26, tzinfo=datetime.timezone.utc)

    # the Kafka sink's records, read back in batch mode
    back = con.sql("""CREATE TABLE res_in (provinceId INT, window_start TIMESTAMP(3),
          total DOUBLE) WITH ('connector' = 'kafka', 'topic' = '%s',
          'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset',
          'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
        SELECT provinceId, window_start, total FROM res_in""" % (out_topic, BOOT)).fetchall()
    assert {(p, w): t for p, w, t in back} == pytest.approx(want)
    assert len(back) == len(want)
    s.close()
    con.close()
