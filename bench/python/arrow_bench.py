"""bench/python/arrow_bench.py — the cost of .arrow() from Python next to
the C API's dipper_execute (bench/python/execute_bench.c, the same query):
con.sql(query).arrow() on ROWS rows: of RUNS runs the median wall time,
the fastest, the median CPU time of the process, and the bytes
pyarrow's memory pool allocated for it (0: the Table is built on dipper's
own buffers).  Run by scripts/python-bench.

    python arrow_bench.py QUERY.sql ROWS RUNS
"""
import statistics
import sys
import time

import pyarrow as pa

import dipper


def main():
    path, rows, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path) as f:
        sql = f.read().replace("{rows}", str(rows))
    times, cpu, pooled = [], [], 0
    for _ in range(runs):
        con = dipper.connect()
        res = con.sql(sql)  # compiled here, untimed (as on the C side); .arrow() runs it
        before = pa.total_allocated_bytes()
        t0, c0 = time.perf_counter(), time.process_time()
        table = res.arrow()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        pooled = max(pooled, pa.total_allocated_bytes() - before)
        assert table.num_rows == rows
        del table, res
        con.close()
    med = statistics.median(times)
    print("Python .arrow()            %d rows  wall median %.3f s, fastest %.3f s, cpu median "
          "%.3f s of %d runs  (%.1f M rows/s)  pyarrow pool bytes: %d"
          % (rows, med, min(times), statistics.median(cpu), runs, rows / med / 1e6, pooled))


if __name__ == "__main__":
    main()
