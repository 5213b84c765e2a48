# Ctrl-C (SIGINT) during a long call stops the queries cleanly and raises
# KeyboardInterrupt, in a child process so that the signal is its own.
import signal
import time

CHILD = r"""
import sys, dipper
con = dipper.connect()
n = [0]
def on_batch(b, i):
    n[0] += b.num_rows
    if n[0] and n[0] == b.num_rows:
        print("first batch", flush=True)
con.register_callback("cb", on_batch)
q, = con.start('''
CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'callback', 'name' = 'cb');
INSERT INTO sink SELECT id FROM src;''')
try:
    MODE
except KeyboardInterrupt:
    st = q.status
    print("interrupted", st.active, st.message, n[0] > 0, flush=True)
    con.close()
    sys.exit(0)
print("not interrupted", flush=True)
sys.exit(1)
"""


def interrupt(run_python, mode):
    p = run_python(CHILD.replace("MODE", mode))
    line = p.stdout.readline()
    assert line == "first batch\n", (line, p.stderr.read())
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, (out, err)
    return out


def test_ctrl_c_in_await_termination(run_python):
    assert "interrupted False Stopped True" in interrupt(run_python, "q.await_termination()")


def test_ctrl_c_in_listen(run_python):
    assert "interrupted False Stopped True" in \
        interrupt(run_python, "for ev in con.listen(): pass")


def test_ctrl_c_in_a_batch_query(run_python):
    code = r"""
import sys, threading, os, signal, dipper
con = dipper.connect()
# streaming mode over a bounded input: many micro-batches, and the
# interrupt is honoured between two (batch mode runs one batch, which
# dipper_execute does not break off)
res = con.sql('''CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '2000000000');
SELECT id FROM g WHERE id < 0''')
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    res.arrow()
except KeyboardInterrupt:
    print("interrupted", flush=True)
    print(con.sql("SELECT 1 AS one").fetchall(), flush=True)  # the handle works on
    sys.exit(0)
sys.exit(1)
"""
    p = run_python(code)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, (out, err)
    assert out == "interrupted\n[(1,)]\n"
