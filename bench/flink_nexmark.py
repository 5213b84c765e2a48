#!/usr/bin/env python3
"""bench/flink_nexmark.py — Nexmark side by side: dipper's embedded engine
against Apache Flink (local mini-cluster, parallelism 1), the same queries
over the same JSON lines file of the same events, on the same machine.

    $(scripts/flink-local python) bench/flink_nexmark.py --dipper build/dipper \
        [--events 1000000] [--queries q0,q1,q2,q7,q15] [--workdir build/flink-bench]

The events are written once from dipper's nexmark connector (seed 7).  Each
query runs in streaming mode into a blackhole sink on both engines: dipper
reads the file with the 'available-now' trigger (every row there, then the
query ends), Flink reads it as its bounded filesystem source.  Measured:

  dipper  one `dipper run` process: wall time, CPU time (user + system) and
          peak resident memory, as /usr/bin/time reports them;
  Flink   the job alone (the JVM is started and warmed with one small job
          first, so JVM start-up is not counted): wall time from submit to
          the end of the job, the CPU time the JVM spent meanwhile
          (/proc/<pid>/stat), and the JVM's peak resident memory (VmHWM).

Events per second per core = events / CPU seconds.  The ratio printed is
dipper's events/s/core over Flink's.  Results go to stdout as a table.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "flink"))

import engines  # noqa: E402
import oracle  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def jvm_pid():
    """The gateway JVM of this process (PyFlink starts it as our child)."""
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if fields[1] == me and b"java" in cmd:
            return int(pid)
    raise SystemExit("flink_nexmark: no JVM child of this process found")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def query_sql(name):
    with open(os.path.join(ROOT, "tests", "flink", "nexmark", name + ".sql")) as f:
        stmts = engines.split_statements(f.read())
    return ";\n".join(stmts[:-1]), stmts[-1]


def run_dipper(d, dipper, workdir, ddl, setup, query):
    types, _ = d.plan("bench", ddl + setup, query)
    cols = ", ".join("c%d %s" % (i + 1, t) for i, t in enumerate(types))
    sql = ("SET 'dipper.trigger' = 'available-now';\n" + ddl + setup +
           "\nCREATE TABLE bench_sink (%s) WITH ('connector' = 'blackhole');\n"
           "INSERT INTO bench_sink %s;\n" % (cols, query))
    path = os.path.join(workdir, "bench.sql")
    with open(path, "w") as f:
        f.write(sql)
    # GNU time's own rusage of the dipper it runs: os.wait4 from this
    # process would count the pages a fork copies from this (large) Python.
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", dipper, "run", "-q", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit("flink_nexmark: dipper failed: " + p.stderr)
    wall, user, sys_, kb = p.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(sys_), int(kb) / 1024


def run_flink(flink, pid, ddl, setup, query):
    """The query as a CREATE TABLE AS into a blackhole sink: the job itself."""
    t = flink.env(batch=False)
    for stmt in engines.split_statements(ddl + setup):
        t.execute_sql(stmt)
    c0, t0 = cpu_seconds(pid), time.time()
    t.execute_sql("CREATE TABLE bench_sink WITH ('connector' = 'blackhole') AS " + query).wait()
    return time.time() - t0, cpu_seconds(pid) - c0, peak_rss_mb(pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dipper", required=True)
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--queries", default="q0,q1,q2,q7,q15")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "flink-bench"))
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    dipper_cli = os.path.abspath(args.dipper)
    d = engines.Dipper(dipper_cli, os.path.abspath(args.workdir), timeout=3600)
    events = oracle.write_events(d, os.path.abspath(args.workdir), args.events, 7)
    ddl = oracle.nexmark_ddl(oracle.files_with(events))
    size = sum(os.path.getsize(os.path.join(events, f)) for f in os.listdir(events))
    flink = engines.Flink()
    flink.run(False, "", "SELECT 1")  # start and warm the JVM
    pid = jvm_pid()
    print("events: %d in %s (%.0f MB of JSON lines); Flink %s, parallelism 1" %
          (args.events, events, size / 1e6, "2.3.0"))
    print("%-5s %-7s %8s %8s %12s %9s" % ("query", "engine", "wall s", "cpu s", "ev/s/core", "peak MB"))
    for q in args.queries.split(","):
        setup, query = query_sql(q)
        setup = setup + ";\n" if setup else ""
        dw, dc, dm = run_dipper(d, dipper_cli, args.workdir, ddl, setup, query)
        fw, fc, fm = run_flink(flink, pid, ddl, setup, query)
        drate, frate = args.events / dc, args.events / fc
        print("%-5s %-7s %8.2f %8.2f %12.0f %9.0f" % (q, "dipper", dw, dc, drate, dm))
        print("%-5s %-7s %8.2f %8.2f %12.0f %9.0f" % (q, "flink", fw, fc, frate, fm))
        print("%-5s ratio   dipper/flink events per second per core: %.2f" % (q, drate / frate), flush=True)


if __name__ == "__main__":
    main()
