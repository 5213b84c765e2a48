#!/usr/bin/env python3
"""spark_fetch_pyspark.py — pyspark's Spark Connect client doing what
bench/spark_bench.c does with dipper's, timed the same way, for
scripts/bench-spark to print side by side.

    python bench/spark_fetch_pyspark.py [--uri sc://127.0.0.1:15002] [--rows N] [--runs R]

1. Per query: building the DataFrame (Range + the same 7-column select),
   encoding its ExecutePlan request (plan to protobuf, request serialized), in
   process over many iterations; the round trip of spark.range(1) (to its end:
   pyspark offers no hook at the first response), the median of R*10 runs.
2. Fetching Range(N) with that select as a pyarrow Table (DataFrame._to_table,
   the one ExecutePlan call that toArrow makes after its extra schema call),
   the median of R runs after one warm-up, with this process's CPU time (all
   threads: the client's own share); toArrow() is timed too.

Output: one "key value" line per figure, the keys of spark_bench.c.
"""
import argparse
import os
import statistics
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def mixed(spark, n):
    """The result of sb_mixed() in tests/spark/sc_build.h, column for column."""
    i = F.col("id")
    return spark.range(0, n).select(
        i,
        (i * F.lit(1.5)).alias("d"),
        i.cast("string").alias("s"),
        F.timestamp_micros(i * F.lit(1000003)).alias("ts"),
        (i * F.lit(0.25)).cast("decimal(18,2)").alias("dec"),
        ((i % F.lit(2)) == F.lit(0)).alias("b"),
        F.when((i % F.lit(3)) == F.lit(0), F.lit(None)).otherwise(i).alias("n"),
    )


def per_call(fn, seconds=1.0):
    """Seconds per call of fn, run for about `seconds`."""
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        n += 50
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return dt / n


def main():
    port = os.environ.get("DIPPER_SPARK_PORT") or "15002"
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", default=f"sc://127.0.0.1:{port}")
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    spark = SparkSession.builder.remote(args.uri).getOrCreate()
    # As dipper's session does: timestamps in UTC.
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    client = spark.client
    print(f"pyspark {spark.version}")
    print(f"rows {args.rows}")

    # 1a/1b: DataFrame build; plan to proto + request serialization.
    build_s = per_call(lambda: mixed(spark, args.rows))
    df = mixed(spark, args.rows)

    def encode():
        req = client._execute_plan_request_with_metadata()
        req.plan.CopyFrom(df._plan.to_proto(client))
        return req.SerializeToString()

    encode_s = per_call(encode)
    print(f"plan_build_ns {build_s * 1e9:.0f}")
    print(f"encode_ns {encode_s * 1e9:.0f}")
    print(f"request_bytes {len(encode())}")

    # 1c: the round trip of a trivial query, to its end.
    tiny = spark.range(1)
    totals = []
    for k in range(-2, args.runs * 10):
        t0 = time.perf_counter()
        tiny._to_table()
        if k >= 0:
            totals.append(time.perf_counter() - t0)
    print(f"submit_total_ms {statistics.median(totals) * 1e3:.3f}")

    # 2: the fetch.
    fetch, fetch_cpu, to_arrow = [], [], []
    for k in range(-1, args.runs):
        c0 = time.process_time()
        t0 = time.perf_counter()
        table, _ = df._to_table()
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        if table.num_rows != args.rows:
            sys.exit(f"spark_fetch_pyspark: {table.num_rows} rows, not {args.rows}")
        del table
        if k >= 0:
            fetch.append(dt)
            fetch_cpu.append(dc)
    for _ in range(args.runs):
        t0 = time.perf_counter()
        table = df.toArrow()
        to_arrow.append(time.perf_counter() - t0)
        del table
    fetch_s = statistics.median(fetch)
    print(f"fetch_s {fetch_s:.4f}")
    print(f"fetch_rows_per_s {args.rows / fetch_s:.0f}")
    print(f"fetch_client_cpu_s {statistics.median(fetch_cpu):.4f}")
    print(f"fetch_toArrow_s {statistics.median(to_arrow):.4f}")
    spark.stop()


if __name__ == "__main__":
    main()
