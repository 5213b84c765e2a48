#!/usr/bin/env python3
"""bench/peers/table.py RESULTS.json... — the markdown table of
docs/benchmarks.md ("Peers side by side") from one or more runs of
bench/peers/peers.py (its peers-results.json; a later file's figure for the
same query and engine replaces an earlier one's).

One row per query: for each engine its CPU seconds (user + system, every
process of the engine) and peak MB, and the ratio of its CPU seconds to
dipper's in the same mode (streaming engines against `dipper`, batch ones
against `dipper-batch`); a refusal is shown as "refused".  The load average
column is the range over the row's measurements.  After the table, for each
peer the queries that meet the 20x target (the peer's CPU seconds at least
20 times dipper's in the same mode) and those that do not, with the ratio.
"""
import json
import sys

ORDER = ("dipper", "flink1", "flink2", "spark-stream", "dipper-batch", "spark-batch", "duckdb")
BASE = {"flink1": "dipper", "flink2": "dipper", "spark-stream": "dipper",
        "spark-batch": "dipper-batch", "duckdb": "dipper-batch"}


def main():
    res = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for r in json.load(f):
                res[(r["query"], r["engine"])] = r
    queries = []
    for q, _ in res:
        if q not in queries:
            queries.append(q)
    engines = [e for e in ORDER if any(e == k[1] for k in res)]
    head = ["query"] + ["%s CPU s (MB)" % e if e not in BASE else "%s CPU s (MB), x" % e for e in engines] + ["load"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for q in queries:
        cells, loads = [q], []
        for e in engines:
            r = res.get((q, e))
            if r is None:
                cells.append("–")
                continue
            loads.append(r["load"])
            if "error" in r:
                cells.append("refused")
                continue
            cell = "%.2f (%.0f)" % (r["cpu"], r["peak_mb"])
            base = res.get((q, BASE.get(e, "")))
            if base and "cpu" in base and base["cpu"] > 0:
                cell += ", **%.1fx**" % (r["cpu"] / base["cpu"])
            cells.append(cell)
        cells.append("%.0f–%.0f" % (min(loads), max(loads)) if loads else "")
        print("| " + " | ".join(cells) + " |")
    print()
    for e in engines:
        if e not in BASE or e == "duckdb":
            continue
        met, missed = [], []
        for q in queries:
            r, base = res.get((q, e)), res.get((q, BASE[e]))
            if r and base and "cpu" in r and "cpu" in base and base["cpu"] > 0:
                x = r["cpu"] / base["cpu"]
                (met if x >= 20 else missed).append("%s %.1fx" % (q, x))
        print("- 20x against %s: met on %d of %d (%s); not met on %s" % (
            e, len(met), len(met) + len(missed), ", ".join(met) or "none", ", ".join(missed) or "none"))


if __name__ == "__main__":
    main()
