#!/usr/bin/env python3
"""bench/latency_trace.py — where a latency run's time goes.

    bench/latency_trace.py TRACE [DUMP]

TRACE is dipper's per-batch trace (DIPPER_TRACE_BATCHES=TRACE, batch_trace.h),
DUMP bench_latency's line per row measured (bench/latency.sh --dump DUMP).
Both carry CLOCK_MONOTONIC microseconds of one machine, so each row measured
is lined up with the batch that read its window's closing event (the first
whose watermark computed at its end reaches the window's end) and the batch
that emitted it (the first that ran under such a watermark).  Prints the
batches' stage times (p50, p99, max, total) and, for the rows, the latency
cut in four: sent -> the reading batch's plan began (the broker, the fetch,
the wait for a plan), -> the emitting batch's plan began (the rest of the
reading batch and the wait between them), -> its sink's flush ended (the
emitting batch: pull, produce, flush), -> received (the sink topic to the
harness); for all rows and for the slowest 1%.
"""
import sys


def pct(v, p):
    if not v:
        return 0
    v = sorted(v)
    k = max(0, min(len(v) - 1, int(len(v) * p / 100.0 + 0.999999) - 1))
    return v[k]


def table(title, cols, rows):
    print(title)
    print("  %-12s %10s %10s %10s %12s" % ("", "p50", "p99", "max", "total"))
    for name in cols:
        v = [r[name] for r in rows]
        print("  %-12s %10.0f %10.0f %10.0f %12.0f" % (name, pct(v, 50), pct(v, 99), max(v) if v else 0, sum(v)))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    lines = open(sys.argv[1]).read().split("\n")
    head = lines[0].split("\t")
    recs = []
    for ln in lines[1:]:
        if not ln or ln.startswith("query\t"):
            continue
        f = ln.split("\t")
        r = {k: (int(x) if k != "query" else x) for k, x in zip(head, f)}
        recs.append(r)
    batches = [r for r in recs if r["batch"] >= 0]
    empty = len(recs) - len(batches)
    for r in batches:
        r["process_us"] = r["pull_us"] - (r["fetch_us"] - 0) - r["produce_us"]
        r["flush_end"] = r["t_plan"] + r["plan_us"] + r["pull_us"] + r["flush_us"]
        r["step_us"] = r["plan_us"] + r["pull_us"] + r["flush_us"] + r["commit_us"] + r["end_us"]
    print("steps %d, batches %d, steps that planned nothing %d" % (len(recs), len(batches), empty))
    table("batches, us (process = pull - fetch - produce; fetch counts the plan's first chunk too)",
          ["wait_us", "plan_us", "fetch_us", "pull_us", "process_us", "produce_us", "flush_us",
           "commit_us", "end_us", "step_us", "rows_in", "rows_out"], batches)
    table("batches with output rows, us", ["wait_us", "plan_us", "pull_us", "produce_us", "flush_us",
                                          "commit_us", "step_us", "rows_in"],
          [r for r in batches if r["rows_out"] > 0])
    if len(sys.argv) < 3:
        return
    rows = []
    for ln in open(sys.argv[2]).read().split("\n")[1:]:
        if not ln:
            continue
        end_ms, _, sent, recv = (int(x) for x in ln.split("\t"))
        rows.append((end_ms * 1000, sent, recv))
    cut = []
    for end_us, sent, recv in rows:
        read = next((b for b in batches if b["next_watermark"] >= end_us), None)
        emit = next((b for b in batches if b["watermark"] >= end_us), None)
        if not read or not emit:
            continue
        cut.append({"total": (recv - sent) / 1000.0,
                    "to_read_plan": (read["t_plan"] - sent) / 1000.0,
                    "to_emit_plan": (emit["t_plan"] - read["t_plan"]) / 1000.0,
                    "emit_flush": (emit["flush_end"] - emit["t_plan"]) / 1000.0,
                    "to_received": (recv - emit["flush_end"]) / 1000.0,
                    "read_rows": read["rows_in"]})
    names = ["total", "to_read_plan", "to_emit_plan", "emit_flush", "to_received", "read_rows"]
    table("rows measured (%d), ms (read_rows: the reading batch's input rows)" % len(cut), names, cut)
    slow = sorted(cut, key=lambda c: c["total"])[-max(1, len(cut) // 100):]
    table("the slowest 1%% (%d), ms" % len(slow), names, slow)


main()
