"""bench/python/udf_bench.py — what a Python scalar UDF costs next to the
same expression built in: BATCHES micro-batches of ROWS rows each (a datagen
sequence of BATCHES * ROWS rows, 'dipper.max-batch-rows' = ROWS), run to the
end into a `blackhole` sink, once with `id * 2 + 1` in SQL and once with a
Python function doing the same on the pyarrow array (pyarrow.compute:
multiply, add).  The difference over the number of batches is the UDF's cost
per batch (the GIL taken, each argument exported by dipper and imported into
pyarrow, the call, the result checked, exported and copied back); over the
rows, per row.  The runs are interleaved and the fastest of RUNS each is
taken, of the wall time and of the process's CPU time (the machine is
shared: the minimum is the figure least moved by other work, and CPU time
does not count the waits for a core).  A second pair, `id` against a Python function that returns
its argument as it came, measures the crossing alone (nothing computed in
Python).  Run by scripts/python-bench.

    python udf_bench.py BATCHES ROWS RUNS
"""
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

import dipper


def twice_plus_one(x: pa.Int64Array) -> pa.Int64Array:
    return pc.add(pc.multiply(x, 2), 1)


EXPRS = {"builtin": "id * 2 + 1", "python": "py_twice_plus_one(id)",
         "builtin_id": "id", "python_id": "py_same(id)"}


def run(kind, batches, rows):
    con = dipper.connect()
    calls = [0]

    def f(x: pa.Int64Array) -> pa.Int64Array:
        calls[0] += 1
        return twice_plus_one(x)

    def same(x: pa.Int64Array) -> pa.Int64Array:
        calls[0] += 1
        return x
    con.create_function("py_twice_plus_one", f)
    con.create_function("py_same", same)
    q, = con.start("""
        SET 'dipper.max-batch-rows' = '%d';
        CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
          'fields.id.start' = '1', 'fields.id.end' = '%d');
        CREATE TABLE o (v BIGINT) WITH ('connector' = 'blackhole');
        INSERT INTO o SELECT %s FROM s""" % (rows, batches * rows, EXPRS[kind]))
    t0, c0 = time.perf_counter(), time.process_time()
    assert q.await_termination()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    p = q.last_progress
    assert p.total_output_rows == batches * rows, p
    # the engine evaluates in vectors of at most 4096 rows: one call each
    assert not kind.startswith("python") or calls[0] >= batches, (calls[0], batches)
    con.close()
    return dt, cpu, calls[0]


def main():
    batches, rows, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    wall = {kind: [] for kind in EXPRS}
    cpu = {kind: [] for kind in EXPRS}
    ncalls = {}
    for _ in range(runs):
        for kind in wall:
            dt, c, ncalls[kind] = run(kind, batches, rows)
            wall[kind].append(dt)
            cpu[kind].append(c)
    total = batches * rows
    for py, builtin, what in (("python", "builtin", "id * 2 + 1 (pyarrow.compute)"),
                              ("python_id", "builtin_id", "identity (the crossing alone)")):
        for clock, t in (("wall", wall), ("cpu", cpu)):
            b, p = min(t[builtin]), min(t[py])
            extra = p - b
            print("Python UDF %-30s %d batches of %d rows (%d calls), %s: built-in %.3f s, "
                  "Python %.3f s: %.1f us per call, %.1f ns per row"
                  % (what, batches, rows, ncalls[py], clock, b, p, extra / ncalls[py] * 1e6,
                     extra / total * 1e9))


if __name__ == "__main__":
    main()
