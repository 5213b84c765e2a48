"""bench/python/callback_bench.py — what a Python foreachBatch callback
costs per micro-batch: BATCHES micro-batches of ROWS rows each (a datagen
sequence of BATCHES * ROWS rows, 'dipper.max-batch-rows' = ROWS: no parsing
in the source), run to the end into a `callback` sink
whose Python function takes the pyarrow.RecordBatch and its id, next to the
same query into a `blackhole` sink (no Python at all).  The difference over
the number of batches is the callback's cost: the GIL taken, the batch
imported into pyarrow (no copy) and the call.  The two sinks' runs are
interleaved and the fastest of RUNS each is taken, of the wall time and of
the process's CPU time (the machine is shared: the minimum is the figure
least moved by other work, and CPU time does not count the waits for a
core).  Run by
scripts/python-bench.

    python callback_bench.py BATCHES ROWS RUNS
"""
import sys
import time

import dipper


def run(sink, batches, rows):
    con = dipper.connect()
    seen = [0]

    def on_batch(batch, batch_id):
        seen[0] += batch.num_rows
    con.register_callback("cb", on_batch)
    opts = "'connector' = 'callback', 'name' = 'cb'" if sink == "callback" else \
        "'connector' = 'blackhole'"
    q, = con.start("""
        SET 'dipper.max-batch-rows' = '%d';
        CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
          'fields.id.start' = '1', 'fields.id.end' = '%d');
        CREATE TABLE o (id BIGINT, v DOUBLE) WITH (%s);
        INSERT INTO o SELECT id, CAST(id AS DOUBLE) / 2 FROM s""" % (rows, batches * rows, opts))
    t0, c0 = time.perf_counter(), time.process_time()
    assert q.await_termination()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert q.last_progress.batch_id >= batches - 1
    assert sink != "callback" or seen[0] == batches * rows
    con.close()
    return dt, cpu


def main():
    batches, rows, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    times = {"blackhole": [], "callback": []}
    cpus = {"blackhole": [], "callback": []}
    for _ in range(runs):
        for sink in times:
            dt, cpu = run(sink, batches, rows)
            times[sink].append(dt)
            cpus[sink].append(cpu)
    for clock, t in (("wall", times), ("cpu", cpus)):
        med = {sink: min(v) for sink, v in t.items()}
        per = (med["callback"] - med["blackhole"]) / batches
        print("callback per micro-batch   %d batches of %d rows, %s: blackhole %.3f s, Python "
              "callback %.3f s: %.1f us per batch" % (batches, rows, clock, med["blackhole"],
                                                       med["callback"], per * 1e6))


if __name__ == "__main__":
    main()
