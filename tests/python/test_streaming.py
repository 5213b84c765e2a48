# Streaming from Python: query handles, typed progress, status, await, stop,
# the listener bus, and callbacks (foreachBatch) with their batch ids.
import datetime

import pyarrow as pa
import pytest

import dipper

SEQ = """
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '{n}', 'rows-per-second' = '{rate}');
CREATE TABLE sink (id BIGINT, twice BIGINT) WITH ('connector' = 'callback', 'name' = 'cb');
INSERT INTO sink SELECT id, id * 2 FROM src;
"""

UNBOUNDED = """
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'callback', 'name' = 'cb');
INSERT INTO sink SELECT id FROM src;
"""


def test_handle_progress_and_callback_batch_ids(con):
    batches = []

    def on_batch(batch, batch_id):
        assert isinstance(batch, pa.RecordBatch)
        batches.append((batch_id, batch.column("id").to_pylist(), batch.column("twice").to_pylist()))
    con.register_callback("cb", on_batch)
    queries = con.start(SEQ.format(n=300, rate=1000))
    assert len(queries) == 1
    q = queries[0]
    assert q.name == "sink"
    assert q.id is None and q.run_id is None  # embedded
    assert q.last_progress is None
    st = q.status
    assert isinstance(st, dipper.Status) and st.active
    assert q.await_termination(60) is True
    assert not q.status.active and q.status.message == "Finished"
    # every row once, in order, in batches with consecutive ids from 0
    ids = [i for b in batches for i in b[1]]
    assert ids == list(range(1, 301))
    assert all(t == [2 * i for i in b] for _, b, t in batches)
    delivered = [bid for bid, rows, _ in batches if rows]
    assert delivered == sorted(delivered) and len(set(delivered)) == len(delivered)
    assert delivered[0] == 0
    p = q.last_progress
    assert isinstance(p, dipper.Progress)
    assert p.name == "sink" and p.finished
    assert p.total_input_rows == 300 and p.total_output_rows == 300
    assert p.batch_id >= delivered[-1]
    assert p.watermark is None
    recent = q.recent_progress
    assert 1 <= len(recent) <= 32
    assert all(isinstance(r, dipper.Progress) for r in recent)
    assert [r.batch_id for r in recent] == sorted(r.batch_id for r in recent)
    assert recent[-1].batch_id == p.batch_id
    # the output rows of the batches reported add up with the callback's
    by_id = {bid: len(rows) for bid, rows, _ in batches}
    assert all(r.output_rows == by_id.get(r.batch_id, 0) for r in recent)


def test_watermark_in_progress_is_a_datetime(con):
    con.sql("""CREATE TABLE ev (ts TIMESTAMP(3), v INT,
               WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
               WITH ('connector' = 'memory', 'bounded' = 'true')""")
    con.sql("CREATE TABLE o (v INT) WITH ('connector' = 'memory')")
    con.push("ev", [{"ts": datetime.datetime(2024, 1, 1, 0, 0, 10), "v": 1}])
    q, = con.start("INSERT INTO o SELECT v FROM ev")
    assert q.await_termination(30)
    marks = [r.watermark for r in q.recent_progress if r.watermark is not None]
    assert marks and marks[-1] == datetime.datetime(2024, 1, 1, 0, 0, 5, tzinfo=datetime.timezone.utc)
    assert q.last_progress.as_dict()["watermark_us"] == \
        int(datetime.datetime(2024, 1, 1, 0, 0, 5, tzinfo=datetime.timezone.utc).timestamp() * 1e6)


def test_await_timeout_then_stop(con):
    seen = []
    con.register_callback("cb", lambda b, i: seen.append(i))
    q, = con.start(UNBOUNDED)
    assert q.await_termination(0.5) is False  # still running at the timeout
    assert q.status.active
    assert seen  # it ran meanwhile
    q.stop()
    st = q.status
    assert not st.active and st.message == "Stopped"
    assert q.await_termination(1) is True
    n = len(seen)
    assert q.await_termination(0.3) is True
    assert len(seen) == n  # no batch after stop
    q.stop()  # stopping a stopped query is fine


def test_step_and_process_all_available(con):
    con.sql("CREATE TABLE s (v INT) WITH ('connector' = 'memory')")
    con.sql("CREATE TABLE o (v INT) WITH ('connector' = 'memory')")
    q, = con.start("INSERT INTO o SELECT v * 10 FROM s")
    con.push("s", [{"v": 1}])
    q.process_all_available()
    assert con.fetch("o").column("v").to_pylist() == [10]
    con.push("s", [{"v": 2}, {"v": 3}])
    assert q.step() is False
    assert con.fetch("o").column("v").to_pylist() == [10, 20, 30]
    assert q.last_progress.input_rows == 2
    q.stop()


def test_listen_yields_typed_events_until_all_ended(con):
    con.register_callback("cb", lambda b, i: None)
    con.sql("CREATE TABLE o2 (id BIGINT) WITH ('connector' = 'memory')")
    qs = con.start(SEQ.format(n=200, rate=1000) + "INSERT INTO o2 SELECT id FROM src;")
    assert [q.name for q in qs] == ["sink", "o2"]
    events = list(con.listen(timeout=60))
    kinds = [e.kind for e in events]
    assert kinds.count("terminated") == 2 and kinds[-1] == "terminated"
    progress = [e for e in events if e.kind == "progress"]
    assert progress and all(isinstance(e.progress, dipper.Progress) for e in progress)
    assert {e.name for e in progress} == {"sink", "o2"}
    assert all(e.query in qs for e in events)
    assert all(e.error is None for e in events)
    for q in qs:
        mine = [e.progress.batch_id for e in progress if e.query is q]
        assert mine == sorted(mine)
        assert sum(e.progress.output_rows for e in progress if e.query is q) == 200
    assert not any(q.status.active for q in qs)


def test_leaving_listen_early_keeps_queries_running(con):
    con.register_callback("cb", lambda b, i: None)
    q, = con.start(UNBOUNDED)
    n = 0
    for ev in con.listen():
        if ev.kind == "progress":
            n += 1
            if n == 3:
                break
    assert n == 3 and q.status.active
    last = q.last_progress.batch_id
    # listening again goes on from there
    for ev in con.listen(timeout=5):
        if ev.kind == "progress":
            assert ev.progress.batch_id > last
            break
    q.stop()
    assert [e.kind for e in con.listen(timeout=5)] in ([], ["terminated"])


def test_callback_exception_fails_the_query_with_the_traceback(con):
    def bad(batch, batch_id):
        if batch_id >= 1:
            raise ValueError("no batch %d for me" % batch_id)
    con.register_callback("cb", bad)
    q, = con.start(SEQ.format(n=1000, rate=1000))
    with pytest.raises(dipper.Error) as e:
        q.await_termination(60)
    err = e.value
    assert err.traceback is not None
    assert "ValueError: no batch 1 for me" in err.traceback
    assert "in bad" in err.traceback
    assert "ValueError: no batch 1 for me" in str(err)
    assert not q.status.active


def test_callback_exception_as_a_terminated_event(con):
    con.register_callback("cb", lambda b, i: 1 / 0)
    q, = con.start(SEQ.format(n=100, rate=1000))
    events = list(con.listen(timeout=30))
    term = [e for e in events if e.kind == "terminated"]
    assert len(term) == 1 and term[0].query is q
    assert "ZeroDivisionError" in term[0].error


def test_callback_registered_later_is_not_seen_by_a_running_query(con):
    first, second = [], []
    con.register_callback("cb", lambda b, i: first.append(i))
    q, = con.start(SEQ.format(n=50, rate=1000))
    con.register_callback("cb", lambda b, i: second.append(i))
    assert q.await_termination(30)
    assert first and not second


def test_unregister(con):
    con.register_callback("cb", lambda b, i: None)
    con.unregister_callback("cb")
    with pytest.raises(dipper.NameError):
        con.unregister_callback("cb")


def test_active_queries_and_close_stops_them(con):
    con.register_callback("cb", lambda b, i: None)
    q, = con.start(UNBOUNDED)
    assert con.active_queries() == [q]
    con.close()
    with pytest.raises(dipper.MisuseError):
        q.status


def test_run_drives_to_the_end_with_progress(con):
    seen, reports = [], []
    con.register_callback("cb", lambda b, i: seen.extend(b.column("id").to_pylist()))
    con.run(SEQ.format(n=120, rate=1000), on_progress=reports.append)
    assert seen == list(range(1, 121))
    assert reports and reports[-1].finished and reports[-1].total_output_rows == 120


EXIT_CHILD = """
import dipper
con = dipper.connect()
con.register_callback("cb", lambda b, i: None)
q, = con.start(%r)
q.await_termination(0.3)
print("ok", q.status.active)
"""


def test_exit_with_running_queries_is_clean(run_python):
    # no close(), a query running, a callback registered: the interpreter's
    # exit frees it all without a crash or an "Exception ignored"
    p = run_python(EXIT_CHILD % UNBOUNDED)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out == "ok True\n"
    assert "Exception" not in err and "ERROR" not in err, err


def test_set_log_receives_the_library_notes(con, tmp_path):
    got = []
    con.set_log(lambda level, message: got.append((level, message)))
    q, = con.start("""
        CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
        CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s',
          'format' = 'json');
        INSERT INTO files SELECT id FROM g""" % tmp_path)
    assert q.await_termination(30)
    notes = [m for level, m in got if level == "note"]
    assert len(notes) == 1 and "runs without a checkpoint folder" in notes[0]
    assert "`files`" in notes[0]
    con.set_log(None)
    q2, = con.start("INSERT INTO files SELECT id FROM g")
    assert q2.await_termination(30)
    assert len(got) == 1
