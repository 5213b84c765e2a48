#!/usr/bin/env python3
"""bench/peers/peers.py — the peers side by side: the same SQL over the same
input files, one engine after the other in one run, CPU and wall time and
peak memory of each, ratios printed.  Run through scripts/bench-peers (which
builds dipper, makes the venvs and starts Spark when asked); by hand:

    $(scripts/flink-local python) bench/peers/peers.py --dipper build/dipper \
        --duckdb-python PY --events 1000000 --queries q0,q1,q2,seed \
        --engines dipper,flink1,flink2,duckdb,spark-batch,spark-stream

Queries: the Nexmark ones of tests/flink/nexmark/ (q0-q23, as published), over
the events dipper's nexmark connector writes once to a JSON lines folder
(tests/flink/oracle.py write_events, seed 7), and `seed`, the seed pipeline
(examples/payments.sql's HOP 1 min / 30 s sums per province) over JSON
payments written once the same way (bench/peers/seed_write.sql), and `pass`,
those payments as read (every field, no operator: the limit's query; with
--limits the run ends with dipper's pass-through against this machine's
memory copy bandwidth and the JSON decoder's own speed).

Engines (each query on each engine in turn, into a sink that discards):
  dipper        `dipper run`, streaming mode, the 'available-now' trigger
                (every file read, then the query ends); a blackhole sink.
                --dipper-threads N adds SET 'parallelism.default' = 'N' (the
                parallel engine's setting; one thread without it)
  dipper-batch  the same in batch mode
  flink1/2      a Flink session cluster of PyFlink's (one JobManager, one
                TaskManager with 2 slots, tests/flink/flinkcluster.py)
                started and warmed once; the jobs from PyFlink's client JVM
                in this process; streaming mode, parallelism 1 or 2, a
                blackhole sink (CREATE TABLE AS).  --flink-mini-cluster:
                PyFlink's local execution instead, a mini-cluster per job
                in the client JVM (its start-up counted)
  spark-batch   `dipper run --engine sc://...` in batch mode: Spark computes,
                the rows come back to dipper's blackhole sink
  spark-stream  the same in streaming mode, trigger available-now, the
                folder read as a stream (source.monitor-interval) into
                Spark's noop sink
  duckdb        DuckDB (bench/peers/duckdb_run.py in the DuckDB venv, its
                own process), threads 1, the batch query materialized
                (CREATE TABLE AS) over read_json of the same files; queries
                it cannot express are listed with its error

CPU is user + system of every process of the engine: dipper's from GNU time
(the whole process), DuckDB's from its process's CPU clock around the query
alone (not Python's start-up and import; bench/peers/duckdb_run.py), a
JVM's from /proc/<pid>/stat before and after the job (all its threads;
Flink's client, JobManager and TaskManager JVMs added up), plus dipper's own
client process for Spark.  Peak memory: GNU time's max RSS, a JVM's VmHWM
(the JVM runs every job in turn: its peak so far; Flink's three added).  Each line carries the 1-minute load average when it started.  Ratios:
the engine's CPU seconds over dipper's in the same mode (streaming engines
against `dipper`, batch ones against `dipper-batch`) = dipper's advantage
per core.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "flink"))

import engines  # noqa: E402
import oracle  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
STREAM_ENGINES = ("dipper", "flink1", "flink2", "spark-stream")
BATCH_ENGINES = ("dipper-batch", "spark-batch", "duckdb")
ALL_ENGINES = STREAM_ENGINES + BATCH_ENGINES


class Refused(Exception):
    """The engine refused or failed the query; the message is its own."""


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    s = proc_stat(pid)
    return (int(s[11]) + int(s[12])) / CLK


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def find_pid(pred):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
            ppid = proc_stat(int(pid))[1]
        except OSError:
            continue
        if pred(int(ppid), cmd):
            return int(pid)
    return None


def timed(argv, cwd=None):
    """(wall, cpu, peak MB, stdout) of one process, from GNU time's own
    rusage of its child (a fork of this large Python would count the pages
    it copies)."""
    p = subprocess.run(["/usr/bin/time", "-f", "@@time %e %U %S %M"] + argv, cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 0 or not lines or not lines[-1].startswith("@@time"):
        err = [l for l in lines if not l.startswith("@@time") and "Command exited" not in l]
        raise Refused(" ".join(err[-3:]).strip() or "exit %d" % p.returncode)
    _, wall, user, sys_, kb = lines[-1].split()
    return float(wall), float(user) + float(sys_), int(kb) / 1024, p.stdout


# ---- the queries --------------------------------------------------------

class Query:
    def __init__(self, name, setup, query, events):
        self.name, self.setup, self.query, self.events = name, setup, query, events
        self.file_table = None  # the table whose files are the input


def nexmark_query(name, ddl_of, side):
    path = os.path.join(ROOT, "tests", "flink", "nexmark", name + ".sql")
    with open(path) as f:
        stmts = engines.split_statements(f.read().replace("${SIDE_INPUT}", side))
    setup = "".join(s + ";\n" for s in stmts[:-1])
    return setup, stmts[-1]


def seed_sql(folder):
    with open(os.path.join(HERE, "seed.sql")) as f:
        text = f.read().replace("${PATH}", folder)
    stmts = engines.split_statements(text)
    return "".join(s + ";\n" for s in stmts[:-1]), stmts[-1]


def write_payments(dipper, workdir, n):
    """n JSON payments, once per n (bench/peers/seed_write.sql)."""
    folder = os.path.join(workdir, "payments-%d" % n)
    stamp = folder + ".complete"
    if os.path.exists(stamp):
        return folder
    if os.path.isdir(folder):
        for f in os.listdir(folder):
            os.unlink(os.path.join(folder, f))
    with open(os.path.join(HERE, "seed_write.sql")) as f:
        sql = f.read().replace("${PATH}", folder).replace("${LAST}", str(n - 1))
    dipper._run(["run", "-q"], "seed_write.sql", sql)
    open(stamp, "w").close()
    return folder


# The limit's query: every payment's every field, as read (a pass-through).
PASS_QUERY = "SELECT createTime, orderId, payAmount, payPlatform, provinceId FROM payment_msg"


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def memory_bandwidth():
    """Bytes per second one core copies (memcpy of 256 MB through numpy,
    best of 5): read and written, so a scan that only reads could go at
    about twice this in bytes read."""
    import numpy as np
    a = np.ones(256 << 20, dtype=np.uint8)
    b = np.empty_like(a)
    best = 0.0
    for _ in range(5):
        t0 = time.process_time()
        np.copyto(b, a)
        dt = time.process_time() - t0
        if dt > 0:
            best = max(best, a.nbytes / dt)
    return best


def json_decode_rate(dipper):
    """The JSON scan's MB/s per core on the payment records, from
    bench_format_bench (next to the dipper CLI in the build tree)."""
    exe = os.path.join(os.path.dirname(dipper), "bench", "bench_format_bench")
    if not os.access(exe, os.X_OK):
        return None
    p = subprocess.run([exe, "--records", "500000", "--runs", "5"], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        m = re.match(r"^json\s+scan\s+\d+\s+[\d.]+\s+([\d.]+)\s", line)
        if m:
            return float(m.group(1)) * 1e6
    return None


def limits(args, results, payments):
    """The distance from the limit: dipper's pass-through of the payments
    against what memory bandwidth and the JSON decoder allow per core."""
    size = folder_bytes(payments)
    per = size / args.events
    bw = memory_bandwidth()
    dec = json_decode_rate(args.dipper)
    got = [r for r in results if r["query"] == "pass" and r["engine"] in ("dipper", "dipper-batch") and "cpu" in r]
    print("limits: %d payments, %.0f MB of JSON lines, %.1f bytes each" % (args.events, size / 1e6, per))
    print("limits: memory copy %.2f GB/s per core (numpy memcpy, read+write): %.1f M payments/s per core if a payment costs one copy of its bytes"
          % (bw / 1e9, bw / per / 1e6))
    if dec:
        print("limits: JSON scan %.0f MB/s per core (bench_format_bench, decode alone): %.2f M payments/s per core"
              % (dec / 1e6, dec / per / 1e6))
    for r in got:
        rate = r["events"] / r["cpu"]
        print("limits: pass-through on %s: %.2f M payments/s per core (%.0f MB/s of JSON) = %.0f%% of the memory copy%s"
              % (r["engine"], rate / 1e6, rate * per / 1e6, 100 * rate * per / bw,
                 ", %.0f%% of the decoder alone" % (100 * rate * per / dec) if dec else ""))


# ---- the engines --------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.args = args
        self.dipper = engines.Dipper(args.dipper, args.workdir, timeout=7200)
        self.flink = None
        self.cluster = None
        self.flink_conf = {}
        self.jvms = []

    # dipper, embedded or with Spark as its engine
    def dipper_sql(self, q, batch, spark, threads):
        types, _ = self.dipper.plan("peers", q.setup, q.query)
        cols = ", ".join("c%d %s" % (i + 1, t) for i, t in enumerate(types))
        sets = ""
        if batch:
            sets += "SET 'execution.runtime-mode' = 'batch';\n"
        else:
            sets += "SET 'dipper.trigger' = 'available-now';\n"
        if threads:
            sets += "SET 'parallelism.default' = '%d';\n" % threads
        setup = q.setup
        if spark and not batch:
            # On Spark a folder is a stream only when it is watched.
            # (every occurrence: ddl.sql's comment repeats its WITH options)
            setup = setup.replace("'format' = 'json'", "'format' = 'json', 'source.monitor-interval' = '1 s'")
        return (sets + setup + "CREATE TABLE peers_sink (%s) WITH ('connector' = 'blackhole');\n"
                "INSERT INTO peers_sink %s;\n" % (cols, q.query))

    def run_dipper(self, q, batch, threads=0):
        path = os.path.join(self.args.workdir, "peers.sql")
        with open(path, "w") as f:
            f.write(self.dipper_sql(q, batch, False, threads))
        wall, cpu, mb, _ = timed([self.args.dipper, "run", "-q", path], cwd=self.args.workdir)
        return wall, cpu, mb

    def spark_pid(self):
        pid = find_pid(lambda ppid, cmd: b"java" in cmd and b"SparkConnectServer" in cmd)
        if pid is None:
            raise Refused("no Spark Connect server runs (scripts/spark-local start)")
        return pid

    def run_spark(self, q, batch):
        pid = self.spark_pid()
        path = os.path.join(self.args.workdir, "peers-spark.sql")
        with open(path, "w") as f:
            f.write(self.dipper_sql(q, batch, True, 0))
        c0 = cpu_seconds(pid)
        wall, cpu, _, _ = timed([self.args.dipper, "run", "-q", "--engine", self.args.spark, path],
                                cwd=self.args.workdir)
        return wall, cpu + cpu_seconds(pid) - c0, peak_rss_mb(pid)

    def start_flink(self):
        if self.flink is not None:
            return
        if not self.args.flink_mini_cluster:
            import flinkcluster
            # Two slots (flink2); the hashmap state lives on the heap, so
            # little managed memory.
            self.cluster = flinkcluster.SessionCluster(
                slots=2, tm_memory="4096m",
                extra={"taskmanager.memory.managed.fraction": "0.05"},
                log_dir=os.path.join(self.args.workdir, "flink-log"),
                folder=os.path.join(self.args.workdir, "flink-cluster")).start()
            self.flink_conf.update(self.cluster.conf())
            self.flink_conf["pipeline.name"] = "dipper peers"
        self.flink = engines.Flink()
        self.flink._flinkenv.use_cluster(self.flink_conf if self.cluster else None)
        self.flink.run(False, "", "SELECT 1")  # start and warm the JVM(s)
        me = os.getpid()
        client = find_pid(lambda ppid, cmd: ppid == me and b"java" in cmd)
        if client is None:
            raise SystemExit("peers: no JVM child of this process found after PyFlink started")
        # Every JVM of Flink's: the client (planning, the job graph) and,
        # with a session cluster, its JobManager and TaskManager.
        self.jvms = [client] + (self.cluster.pids() if self.cluster else [])

    def jvm_cpu(self):
        return sum(cpu_seconds(p) for p in self.jvms)

    def run_flink(self, q, parallelism):
        from py4j.protocol import Py4JJavaError
        self.start_flink()
        t = self.flink._flinkenv.table_env(batch=False, extra={"parallelism.default": str(parallelism)})
        try:
            for stmt in engines.split_statements(q.setup):
                t.execute_sql(stmt)
            c0, t0 = self.jvm_cpu(), time.time()
            t.execute_sql("CREATE TABLE peers_sink WITH ('connector' = 'blackhole') AS " + q.query).wait()
        except Py4JJavaError as e:
            raise Refused(engines._java_message(e))
        except Exception as e:  # pyflink's own wrappers of Java errors
            if type(e).__module__.startswith("pyflink") or "java" in type(e).__name__.lower():
                raise Refused(str(e).strip().splitlines()[0] if str(e).strip() else repr(e))
            raise
        # peak: the JVMs' VmHWM added up (each JVM's peak so far)
        return time.time() - t0, self.jvm_cpu() - c0, sum(peak_rss_mb(p) for p in self.jvms)

    def run_duckdb(self, q):
        spec = os.path.join(self.args.workdir, "peers-duckdb.json")
        with open(spec, "w") as f:
            json.dump({"name": q.name, "files": q.file_table, "query": q.query, "setup": q.setup,
                       "threads": 1}, f)
        _, _, mb, out = timed([self.args.duckdb_python, os.path.join(HERE, "duckdb_run.py"), spec])
        # the query alone, as duckdb_run.py timed it (not Python's start-up)
        rows, wall, cpu = out.split()
        return float(wall), float(cpu), mb

    def run(self, engine, q):
        if engine == "dipper":
            return self.run_dipper(q, False, self.args.dipper_threads)
        if engine == "dipper-batch":
            return self.run_dipper(q, True, self.args.dipper_threads)
        if engine in ("flink1", "flink2"):
            return self.run_flink(q, int(engine[-1]))
        if engine == "spark-batch":
            return self.run_spark(q, True)
        if engine == "spark-stream":
            return self.run_spark(q, False)
        if engine == "duckdb":
            return self.run_duckdb(q)
        raise SystemExit("peers: unknown engine " + engine)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dipper", required=True, help="the dipper CLI (a release build)")
    ap.add_argument("--dipper-threads", type=int, default=0,
                    help="SET 'parallelism.default' to this for dipper (default: not set)")
    ap.add_argument("--events", type=int, default=1000000, help="Nexmark events and seed payments (default 1000000)")
    ap.add_argument("--queries", default="q0,q1,q2,seed", help="qN (Nexmark), seed and pass (the payments as read), comma separated; 'all' = q0-q23,seed,pass")
    ap.add_argument("--engines", default=",".join(ALL_ENGINES))
    ap.add_argument("--spark", default="sc://127.0.0.1:15002")
    ap.add_argument("--duckdb-python", default="", help="a python that imports duckdb (scripts/bench-peers makes one)")
    ap.add_argument("--limits", action="store_true",
                    help="also the distance from the limit: memory bandwidth and the JSON decoder against the pass-through (query 'pass')")
    ap.add_argument("--flink-mini-cluster", action="store_true",
                    help="run each Flink job on a mini-cluster of its own in PyFlink's JVM (its start-up "
                         "counted) instead of on a session cluster started once (flinkcluster.py)")
    ap.add_argument("--results", default="",
                    help="write the results here (default WORKDIR/peers-results.json); bench/peers/table.py merges several")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "peers"))
    args = ap.parse_args()
    args.workdir = os.path.abspath(args.workdir)
    args.dipper = os.path.abspath(args.dipper)
    os.makedirs(args.workdir, exist_ok=True)
    wanted = [e for e in args.engines.split(",") if e]
    for e in wanted:
        if e not in ALL_ENGINES:
            raise SystemExit("peers: unknown engine '%s' (known: %s)" % (e, ", ".join(ALL_ENGINES)))
    if "duckdb" in wanted and not args.duckdb_python:
        raise SystemExit("peers: --duckdb-python is needed for the duckdb engine")
    names = args.queries.split(",")
    if names == ["all"]:
        names = ["q%d" % i for i in range(24)] + ["seed", "pass"]
    r = Runner(args)
    events = side = payments = None
    queries = []
    for n in names:
        if n in ("seed", "pass"):
            payments = payments or write_payments(r.dipper, args.workdir, args.events)
            setup, query = seed_sql(payments)
            if n == "pass":
                query = PASS_QUERY
            q = Query(n, setup, query, args.events)
            q.file_table = {"payment_msg": payments}
        elif re.match(r"^q\d+$", n):
            if events is None:
                events = oracle.write_events(r.dipper, args.workdir, args.events, 7)
                side = oracle.write_side_input(args.workdir)
            setup, query = nexmark_query(n, None, side)
            q = Query(n, oracle.nexmark_ddl(oracle.files_with(events)) + setup, query, args.events)
            q.file_table = {"datagen": events}
        else:
            raise SystemExit("peers: unknown query '%s' (q0..q23, seed or pass)" % n)
        queries.append(q)
    print("peers: %d events; load average %s; engines %s%s" % (
        args.events, open("/proc/loadavg").read().split()[:3], ",".join(wanted),
        "; dipper with parallelism.default = %d" % args.dipper_threads if args.dipper_threads else
        "; dipper on one thread"))
    print("%-5s %-13s %8s %8s %12s %8s %6s  %s" % ("query", "engine", "wall s", "cpu s", "ev/s/core",
                                                   "peak MB", "load", "x dipper (CPU)"), flush=True)
    out = os.path.abspath(args.results) if args.results else os.path.join(args.workdir, "peers-results.json")
    results = []

    def save():
        # after every measurement, so that a run cut short keeps its figures
        with open(out + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(out + ".tmp", out)

    for q in queries:
        base = {}
        for e in wanted:
            load = loadavg()
            try:
                wall, cpu, mb = r.run(e, q)
            except (Refused, engines.EngineError) as err:
                print("%-5s %-13s refused or failed: %s" % (q.name, e, str(err)[:300]), flush=True)
                results.append({"query": q.name, "engine": e, "error": str(err)[:500], "load": load})
                save()
                continue
            if e in ("dipper", "dipper-batch"):
                base[e] = cpu
            ref = base.get("dipper" if e in STREAM_ENGINES else "dipper-batch")
            ratio = "%.1f" % (cpu / ref) if ref and e not in ("dipper", "dipper-batch") else ""
            print("%-5s %-13s %8.2f %8.2f %12.0f %8.0f %6.1f  %s" % (
                q.name, e, wall, cpu, q.events / cpu if cpu else 0, mb, load, ratio), flush=True)
            results.append({"query": q.name, "engine": e, "wall": wall, "cpu": cpu, "peak_mb": mb,
                            "load": load, "events": q.events})
            save()
    if args.limits:
        if payments is None:
            payments = write_payments(r.dipper, args.workdir, args.events)
        limits(args, results, payments)
    save()
    print("peers: results in %s; load average at the end %s" % (out, open("/proc/loadavg").read().split()[:3]))
    # The peers' refusals are figures; dipper's own failure is not.
    failed = [r for r in results if "error" in r and r["engine"] in ("dipper", "dipper-batch")]
    for r in failed:
        print("peers: dipper (%s) failed %s" % (r["engine"], r["query"]), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
