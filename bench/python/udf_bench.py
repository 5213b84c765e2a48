"""bench/python/udf_bench.py — what a Python scalar UDF costs next to the
same expression built in: BATCHES micro-batches of ROWS rows each (a datagen
sequence of BATCHES * ROWS rows, 'dipper.max-batch-rows' = ROWS), run to the
end into a `blackhole` sink, once with `id * 2 + 1` in SQL and once with a
Python function doing the same on the pyarrow array (pyarrow.compute:
multiply, add).  The difference over the number of batches is the UDF's cost
per batch (the GIL taken, each argument exported by dipper and imported into
pyarrow, the call, the result checked, exported and copied back); over the
rows, per row.  The runs are interleaved and the fastest of RUNS each is
taken (the machine is shared: the minimum is the figure least moved by
other work).  Run by scripts/python-bench.

    python udf_bench.py BATCHES ROWS RUNS
"""
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

import dipper


def twice_plus_one(x: pa.Int64Array) -> pa.Int64Array:
    return pc.add(pc.multiply(x, 2), 1)


def run(kind, batches, rows):
    con = dipper.connect()
    calls = [0]

    def f(x: pa.Int64Array) -> pa.Int64Array:
        calls[0] += 1
        return twice_plus_one(x)
    con.create_function("py_twice_plus_one", f)
    expr = "py_twice_plus_one(id)" if kind == "python" else "id * 2 + 1"
    q, = con.start("""
        SET 'dipper.max-batch-rows' = '%d';
        CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
          'fields.id.start' = '1', 'fields.id.end' = '%d');
        CREATE TABLE o (v BIGINT) WITH ('connector' = 'blackhole');
        INSERT INTO o SELECT %s FROM s""" % (rows, batches * rows, expr))
    t0 = time.perf_counter()
    assert q.await_termination()
    dt = time.perf_counter() - t0
    p = q.last_progress
    assert p.total_output_rows == batches * rows, p
    assert kind != "python" or calls[0] >= batches, (calls[0], batches)
    con.close()
    return dt


def main():
    batches, rows, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    times = {"builtin": [], "python": []}
    for _ in range(runs):
        for kind in times:
            times[kind].append(run(kind, batches, rows))
    best = {kind: min(t) for kind, t in times.items()}
    extra = best["python"] - best["builtin"]
    print("Python UDF   %d batches of %d rows: built-in id * 2 + 1 %.3f s, Python UDF %.3f s: "
          "%.1f us per batch, %.1f ns per row" % (batches, rows, best["builtin"], best["python"],
                                                  extra / batches * 1e6,
                                                  extra / (batches * rows) * 1e9))


if __name__ == "__main__":
    main()
