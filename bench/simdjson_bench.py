#!/usr/bin/env python3
"""simdjson_bench.py — simdjson (through pysimdjson) on the same payment
records as bench/format_bench.c, side by side with dipper's JSON decoder.

    build/bench/bench_format_bench --write /tmp/pay     # writes payments.jsonl
    bench/simdjson_bench.sh /tmp/pay/payments.jsonl     # venv + this script

Three figures, all in MB/s of the JSON-lines bytes over this process's CPU
time (median of --runs):

  whole      the file as one JSON array ("[" + records joined by "," + "]")
             parsed by one parser.parse call: simdjson's own speed over the
             bytes (its DOM built in C++, nothing handed to Python), the best
             case for simdjson, with no per-call cost at all;
  per-record one parser.parse per record, as the Kafka source decodes one
             message at a time, less the cost of a call that parses "{}"
             (measured alone and subtracted: the Python-to-C++ call);
  fields     per record: parse and read the five fields into Python values
             (what a decoder into columns has to do at least), less the
             same call cost.

dipper's decoder does more per record than simdjson's parse: it checks the
schema, turns the timestamp text into µs and appends typed columns.
"""
import argparse
import statistics
import time

import simdjson


def cpu():
    return time.process_time()


def median_rate(fn, nbytes, runs):
    rates = []
    for _ in range(runs):
        t0 = cpu()
        fn()
        rates.append(nbytes / (cpu() - t0) / 1e6)
    return statistics.median(rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with open(args.path, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f if line.strip()]
    nbytes = sum(len(line) for line in lines)
    whole = b"[" + b",".join(lines) + b"]"
    parser = simdjson.Parser()
    n = len(lines)

    def parse_whole():
        doc = parser.parse(whole)
        assert len(doc) == n
        del doc

    def parse_each():
        p = parser.parse
        for line in lines:
            p(line)

    empty = [b"{}"] * n

    def parse_empty():
        p = parser.parse
        for line in empty:
            p(line)

    keys = ("createTime", "orderId", "payAmount", "payPlatform", "provinceId")

    def parse_fields():
        p = parser.parse
        for line in lines:
            d = p(line)
            for k in keys:
                d[k]
            del d  # the parser is reused only once its document is gone

    def fields_empty():
        # the same Python-side work on a document without the values
        p = parser.parse
        for line in empty:
            d = p(line)
            for k in keys:
                pass
            del d

    runs = args.runs
    whole_rate = median_rate(parse_whole, len(whole), runs)
    t_each = nbytes / median_rate(parse_each, nbytes, runs) / 1e6  # seconds, median
    t_empty = nbytes / median_rate(parse_empty, nbytes, runs) / 1e6
    t_fields = nbytes / median_rate(parse_fields, nbytes, runs) / 1e6
    t_fempty = nbytes / median_rate(fields_empty, nbytes, runs) / 1e6
    print(f"pysimdjson {simdjson.__version__ if hasattr(simdjson, '__version__') else ''}"
          f" over {n} records, {nbytes / 1e6:.1f} MB")
    print(f"{'case':<28} {'MB/s':>8} {'M rec/s':>8} {'ns/rec':>8}")
    print(f"{'whole (one parse, no calls)':<28} {whole_rate:8.0f} {n / (len(whole) / whole_rate / 1e6) / 1e6:8.2f}"
          f" {len(whole) / whole_rate / 1e6 / n * 1e9:8.0f}")
    for name, t, base in (("per-record parse", t_each, t_empty), ("per-record + 5 fields", t_fields, t_fempty)):
        print(f"{name + ' (raw)':<28} {nbytes / t / 1e6:8.0f} {n / t / 1e6:8.2f} {t / n * 1e9:8.0f}")
        net = max(t - base, 1e-9)
        print(f"{name + ' (less call)':<28} {nbytes / net / 1e6:8.0f} {n / net / 1e6:8.2f} {net / n * 1e9:8.0f}")
    label = 'call cost parse(b"{}")'
    print(f"{label:<28} {'':>8} {'':>8} {t_empty / n * 1e9:8.0f}")


if __name__ == "__main__":
    main()
