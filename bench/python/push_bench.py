"""Pushing Arrow rows into a memory table (con.push), and read_parquet of
the Ibis backend on the embedded engine, which pushes the files' batches:
the JSON-lines encoding by column (pyarrow.compute, the package's path for
flat columns) next to the row-by-row one, the median of RUNS runs, wall
and CPU (user+sys of the process, the library's threads included).

    python bench/python/push_bench.py ROWS RUNS      (scripts/python-bench)
"""
import os
import resource
import statistics
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

import dipper
import dipper.ibis
from dipper import _memory


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(fn, runs):
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), cpu()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


def main():
    rows, runs = int(sys.argv[1]), int(sys.argv[2])
    t = pa.table({"k": pa.array(range(rows), pa.int64()),
                  "v": pa.array([i * 0.25 for i in range(rows)], pa.float64()),
                  "ts": pa.array(range(0, rows * 1000, 1000), pa.timestamp("us")),
                  "s": pa.array(["x%d" % (i % 1000) for i in range(rows)])})
    print("push_bench: %d rows of (BIGINT, DOUBLE, TIMESTAMP(6), STRING), median of %d runs"
          % (rows, runs))
    for name, fn in [("encode by column", lambda: _memory.json_lines(t)),
                     ("encode by row", lambda: _memory._row_json_lines(_memory._rows_of_arrow(t)))]:
        w, c = measure(fn, runs)
        print("  %-26s wall %7.3f s  cpu %7.3f s" % (name, w, c))
    con = dipper.connect()
    con.sql("CREATE TABLE m (k BIGINT, v DOUBLE, ts TIMESTAMP(6), s STRING) "
            "WITH ('connector' = 'memory', 'bounded' = 'true')")
    w, c = measure(lambda: con.push("m", t), runs)
    print("  %-26s wall %7.3f s  cpu %7.3f s" % ("con.push (encode+decode)", w, c))
    be = dipper.ibis.Backend().connect(mode="batch")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.parquet")
        pq.write_table(t, path)
        w, c = measure(lambda: be.read_parquet(path), runs)
        print("  %-26s wall %7.3f s  cpu %7.3f s" % ("ibis read_parquet", w, c))
        w, c = measure(lambda: pq.read_table(path), runs)
        print("  %-26s wall %7.3f s  cpu %7.3f s" % ("pyarrow read_table alone", w, c))


if __name__ == "__main__":
    main()
