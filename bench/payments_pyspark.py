#!/usr/bin/env python3
"""payments_pyspark.py — the seed's payment pipeline written by hand with
pyspark's Spark Connect client, for scripts/bench-spark-stream to run next to
dipper's examples/payments.sql on the same Kafka topic.

    python bench/payments_pyspark.py --topic IN --sink OUT --checkpoint DIR \
        [--uri sc://127.0.0.1:15002] [--brokers 127.0.0.1:9092] [--plan-out FILE]

The job is the seed's (readStream kafka without tombstones, from_json by the
payment schema failing on a malformed record — what the SQL means on either
of dipper's engines, 'dipper.bad-records' = 'fail' being the default —
withWatermark 10 s, groupBy(window(createTime, 1 minute, 30 seconds),
provinceId).agg(sum(payAmount)), writeStream kafka in append mode), with
trigger available-now, and the sink rows serialized as dipper serializes them
(the sink's column names, timestamps as "yyyy-MM-dd HH:mm:ss.SSS") so that
the two sink topics can be compared record for record.

Timed from the first DataFrame call to the query's termination.  Output: one
"key value" line per figure, the keys of bench/spark_stream_bench.c's run:
rows (sum of numInputRows), batches, batch_ms (sum of batchDuration),
rows_per_s (rows / batch_ms), start_ms (until start() returned), wall_s,
sink_rows (sum of the sink's numOutputRows, -1 when Spark did not report
it).  The physical plan (query.explain(extended=True), as printed, taken
while a batch with input runs) goes to --plan-out.
"""
import argparse
import contextlib
import io
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (DoubleType, IntegerType, LongType, StructField, StructType,
                               TimestampType)

# The seed's schema, as its pyspark example declares it.
SCHEMA = StructType([
    StructField("createTime", TimestampType(), True),
    StructField("orderId", LongType(), True),
    StructField("payAmount", DoubleType(), True),
    StructField("payPlatform", IntegerType(), True),
    StructField("provinceId", IntegerType(), True),
])

# dipper's text for times on a sink (translate_stream.c's serialize()).
TIME_FORMAT = {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS",
               "timestampNTZFormat": "yyyy-MM-dd HH:mm:ss.SSS"}


def pipeline(spark, args):
    payments = (spark.readStream.format("kafka")
                .option("kafka.bootstrap.servers", args.brokers)
                .option("subscribe", args.topic)
                .option("startingOffsets", "earliest")
                .load()
                .where(F.col("value").isNotNull())
                .select(F.from_json(F.col("value").cast("string"), SCHEMA,
                                    {"mode": "FAILFAST"}).alias("p"))
                .select("p.*")
                .withWatermark("createTime", "10 seconds"))
    totals = (payments
              .groupBy(F.window("createTime", "1 minute", "30 seconds"), F.col("provinceId"))
              .agg(F.sum("payAmount").alias("pay_amount")))
    record = F.struct(F.col("provinceId").alias("province_id"),
                      F.col("window.start").alias("window_start"),
                      F.col("window.end").alias("window_end"),
                      F.col("pay_amount"))
    return (totals.select(F.to_json(record, TIME_FORMAT).alias("value"))
            .writeStream.format("kafka")
            .outputMode("append")
            .option("kafka.bootstrap.servers", args.brokers)
            .option("topic", args.sink)
            .option("checkpointLocation", args.checkpoint)
            .queryName(args.sink)
            .trigger(availableNow=True))


def explain(query):
    """query.explain(extended=True), which prints, as a string."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        query.explain(extended=True)
    return text.getvalue()


def reads_input(text):
    """A plan of a batch that had input: the empty last batch of an
    available-now query has an empty LocalTableScan in its place."""
    phys = text.find("== Physical Plan ==")
    return phys >= 0 and "MicroBatchScan" in text[phys:]


def main():
    port = os.environ.get("DIPPER_SPARK_PORT") or "15002"
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", default=f"sc://127.0.0.1:{port}")
    ap.add_argument("--brokers", default="127.0.0.1:9092")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--sink", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--plan-out")
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()

    spark = SparkSession.builder.remote(args.uri).getOrCreate()
    # As dipper's session does: times in UTC.
    spark.conf.set("spark.sql.session.timeZone", "UTC")

    t0 = time.perf_counter()
    query = pipeline(spark, args).start()
    started = time.perf_counter()
    # Await in steps of a second, and meanwhile keep the plan of a batch that
    # reads input: the explain after the end shows the last batch only (as
    # spark_stream_bench.c does).
    plan = None
    while not query.awaitTermination(1.0):
        if time.perf_counter() - t0 > args.timeout:
            query.stop()
            sys.exit(f"payments_pyspark: the query did not end within {args.timeout:.0f} s")
        if plan is None or not reads_input(plan):
            text = explain(query)
            if reads_input(text) or plan is None:
                plan = text
    wall = time.perf_counter() - t0
    if query.exception() is not None:
        sys.exit(f"payments_pyspark: the query failed: {query.exception()}")
    if plan is None or not reads_input(plan):
        plan = explain(query)

    progress = query.recentProgress
    rows = sum(p.numInputRows for p in progress)
    batch_ms = sum(p.batchDuration for p in progress)
    sink_rows = [p.sink.numOutputRows for p in progress]
    if args.plan_out:
        with open(args.plan_out, "w") as f:
            f.write(plan)
    print(f"rows {rows}")
    print(f"batches {len(progress)}")
    print(f"batch_ms {batch_ms}")
    print(f"rows_per_s {rows / (batch_ms / 1e3) if batch_ms > 0 else 0:.0f}")
    print(f"start_ms {(started - t0) * 1e3:.1f}")
    print(f"wall_s {wall:.3f}")
    print(f"sink_rows {sum(sink_rows) if all(n >= 0 for n in sink_rows) else -1}")
    spark.stop()


if __name__ == "__main__":
    main()
