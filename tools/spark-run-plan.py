#!/usr/bin/env python3
"""spark-run-plan.py — run serialized Spark Connect Plan files on a Spark
Connect server with pyspark's client, and print what comes back.

A development and test aid for dipper's translator (src/spark/translate*.c):
the translator's output can be checked against the real server before, and
independently of, dipper's own C client.  A Plan holding a relation (root)
prints its schema and rows; a Plan holding a command (a write) runs it.

    tools/spark-run-plan.py [--remote sc://127.0.0.1:15002] [--utc] FILE.plan...

Run it with the venv of scripts/spark-local:
    "$(scripts/spark-local python)" tools/spark-run-plan.py plan.bin

tests/spark/translate_test writes the plans it builds into the folder named
by $DIPPER_TRANSLATE_PLANS (one <test>.plan per translated statement).
Exit status: 0 when every plan ran, 1 when one failed (its error printed).
"""
import argparse
import sys

from pyspark.sql import SparkSession
from pyspark.sql.connect.proto import Plan


def run(spark, path):
    with open(path, "rb") as f:
        plan = Plan()
        plan.ParseFromString(f.read())
    client = spark.client
    print(f"== {path}")
    if plan.HasField("command"):
        client.execute_command(plan.command)
        print("(command ran)")
        return
    table, schema, _ = client.to_table(plan, {})
    names = table.column_names
    print(" | ".join(f"{n}: {t}" for n, t in zip(names, table.schema.types)))
    for row in table.to_pylist():
        print(" | ".join(repr(row[n]) if not isinstance(row, dict) else repr(v)
                         for n, v in (row.items() if isinstance(row, dict) else zip(names, row))))
    print(f"({table.num_rows} rows)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--remote", default="sc://127.0.0.1:15002")
    ap.add_argument("--utc", action="store_true", help="set spark.sql.session.timeZone=UTC first")
    ap.add_argument("plans", nargs="+")
    a = ap.parse_args()
    spark = SparkSession.builder.remote(a.remote).getOrCreate()
    if a.utc:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    failed = 0
    for p in a.plans:
        try:
            run(spark, p)
        except Exception as e:  # report and go on with the next plan
            failed = 1
            print(f"ERROR {p}: {str(e).splitlines()[0]}")
    sys.exit(failed)


if __name__ == "__main__":
    main()
