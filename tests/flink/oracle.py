#!/usr/bin/env python3
"""tests/flink/oracle.py — Flink as the oracle: every SQL case that Flink can
run, on dipper's embedded engine and on Apache Flink (one session cluster
of the pinned PyFlink's for the run, flinkcluster.py; --mini-cluster: a local
mini-cluster per job; scripts/flink-local) over the same bounded input,
answers compared.

Suites:
  nexmark  Nexmark q0–q23 as the Nexmark project publishes them
           (tests/flink/nexmark/qN.sql, the SELECT of each INSERT), in batch
           and streaming mode.  The events are written once, from dipper's
           nexmark connector, to a JSON lines folder that both engines read;
           dipper's streaming run reads the generator itself (a folder is an
           unbounded input to dipper's streaming mode), which makes the same
           events: the file is those events.
  corpus   the batch and streaming cases of tests/batch/cases and
           tests/stream/cases (corpus.py).

What is compared: batch mode, the rows; streaming mode, the final table —
Flink's changelog applied, dipper's sink output applied batch by batch
(every row in append mode, the newest row per key in update mode).  The
normal form (compare.py) is the same for every case.  A case's known,
deliberate differences are annotated in the case itself (`-- @differs
MODE: why`, `-- @dipper-refuses MODE: why`, `-- @not-comparable: why`) or in
corpus_expected.txt; an annotated case that agrees fails too (the
annotation is stale).  Exit 1 on any unexpected difference or stale
annotation, 2 when an engine cannot be started.

Run with the Flink venv's python:  $(scripts/flink-local python) tests/flink/oracle.py --help
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compare  # noqa: E402
import engines  # noqa: E402

MODES = ("batch", "streaming")


class Case:
    def __init__(self, name, path, text):
        self.name = name
        self.path = path
        self.modes = list(MODES)
        self.key = []
        self.flink_upsert_key = None
        self.dipper_refuses = {}
        self.differs = {}
        self.not_comparable = None
        for line in text.splitlines():
            m = re.match(r"^--\s*@([\w-]+):?\s*(.*)$", line)
            if not m:
                continue
            tag, rest = m.groups()
            if tag == "modes":
                self.modes = rest.split()
            elif tag == "key":
                self.key = [int(x) - 1 for x in rest.split()]
            elif tag == "flink-upsert-key":
                self.flink_upsert_key = [int(x) - 1 for x in rest.split(":")[0].split()]
            elif tag in ("dipper-refuses", "differs"):
                modes, _, why = rest.partition(":")
                for mode in modes.split():
                    getattr(self, tag.replace("-", "_"))[mode] = why.strip()
            elif tag == "not-comparable":
                self.not_comparable = rest.lstrip(":").strip()
            else:
                raise SystemExit("%s: unknown annotation @%s" % (path, tag))
        stmts = engines.split_statements(text)
        self.setup = ";\n".join(stmts[:-1]) + (";\n" if len(stmts) > 1 else "")
        self.query = stmts[-1]


class Report:
    def __init__(self):
        self.results = []  # (case, mode, status, detail)

    def add(self, case, mode, status, detail=""):
        self.results.append((case, mode, status, detail))
        line = "%-8s %-10s %-26s %s" % (status, mode, case, detail.splitlines()[0] if detail else "")
        print(line.rstrip(), flush=True)
        for extra in detail.splitlines()[1:]:
            print("         " + extra, flush=True)

    def failed(self):
        return [r for r in self.results if r[2] in ("DIFFERS", "STALE", "ERROR")]

    def summary(self):
        counts = {}
        for r in self.results:
            counts[r[2]] = counts.get(r[2], 0) + 1
        return ", ".join("%d %s" % (n, s.lower()) for s, n in sorted(counts.items()))


def judge(report, name, mode, d_rows, d_err, f_rows, f_err, refuses=None, differs=None):
    """One comparison, with the case's annotations for this mode."""
    if refuses is not None:
        if d_err and not f_err:
            report.add(name, mode, "EXPECTED", "dipper refuses (%s): %s" % (refuses, d_err.splitlines()[0]))
        elif not d_err:
            report.add(name, mode, "STALE", "annotated as refused by dipper, but dipper ran it: remove the annotation")
        else:
            report.add(name, mode, "DIFFERS", "both refuse, annotated as dipper only; flink: " + f_err)
        return
    if d_err and f_err:
        report.add(name, mode, "BOTH-REFUSE", "dipper: %s\nflink: %s" % (d_err.splitlines()[0], f_err))
        return
    if d_err or f_err:
        who = "dipper" if d_err else "flink"
        report.add(name, mode, "DIFFERS" if differs is None else "EXPECTED",
                   "%s fails: %s%s" % (who, (d_err or f_err).splitlines()[0],
                                       "" if differs is None else " (annotated: %s)" % differs))
        return
    diff = compare.compare_tables(d_rows, f_rows)
    if differs is not None:
        if diff.equal:
            report.add(name, mode, "STALE", "annotated as differing (%s), but equal: remove the annotation" % differs)
        else:
            report.add(name, mode, "EXPECTED", differs + "\n" + diff.describe())
    elif diff.equal:
        report.add(name, mode, "OK", diff.describe())
    else:
        report.add(name, mode, "DIFFERS", diff.describe())


# ---- the Nexmark suite ----------------------------------------------------

def nexmark_ddl(with_clause):
    with open(os.path.join(HERE, "nexmark", "ddl.sql")) as f:
        return f.read().replace("${WITH}", with_clause)


def generator_with(events, seed):
    return "'connector' = 'nexmark', 'events.num' = '%d', 'seed' = '%d'" % (events, seed)


def files_with(path):
    return "'connector' = 'filesystem', 'path' = '%s', 'format' = 'json'" % path


def write_events(dipper, workdir, events, seed):
    """The generator's events as JSON lines, once per (events, seed)."""
    folder = os.path.join(workdir, "events-%d-%d" % (events, seed))
    stamp = folder + ".complete"
    if os.path.exists(stamp):
        return folder
    ddl = nexmark_ddl(generator_with(events, seed))
    columns = ddl[ddl.index("(", ddl.index("CREATE TABLE")) + 1:ddl.index("`dateTime` AS CASE")].rstrip().rstrip(",")
    sql = (ddl + "\nCREATE TABLE nexmark_events (%s) WITH (%s);\n"
           "INSERT INTO nexmark_events SELECT event_type, person, auction, bid FROM datagen;\n"
           % (columns, files_with(folder)))
    if os.path.isdir(folder):
        for f in os.listdir(folder):
            os.unlink(os.path.join(folder, f))
    dipper._run(["run", "-q"], "write_events.sql", sql)
    n = 0
    for f in os.listdir(folder):
        with open(os.path.join(folder, f)) as fh:
            n += sum(1 for line in fh if line.strip())
    if n != events:
        raise SystemExit("oracle: the nexmark events file has %d events, not %d: %s" % (n, events, folder))
    open(stamp, "w").close()
    return folder


def write_side_input(workdir):
    path = os.path.join(workdir, "side_input.csv")
    with open(path, "w") as f:
        for k in range(10000):
            f.write("%d,side-%d\n" % (k, (k * 7919) % 10007))
    return path


def nexmark_cases(names):
    folder = os.path.join(HERE, "nexmark")
    found = sorted((f for f in os.listdir(folder) if re.match(r"^q\d+\.sql$", f)),
                   key=lambda f: int(f[1:-4]))
    cases = []
    for f in found:
        name = f[:-4]
        if names and name not in names:
            continue
        with open(os.path.join(folder, f)) as fh:
            cases.append(Case("nexmark/" + name, os.path.join(folder, f), fh.read()))
    if names and len(cases) != len(names):
        raise SystemExit("oracle: unknown nexmark queries: %s" % ", ".join(sorted(set(names) - {c.name[8:] for c in cases})))
    return cases


def run_nexmark(args, report, dipper, flink):
    events = args.events_dir
    side = write_side_input(args.workdir)
    file_ddl = nexmark_ddl(files_with(events))
    gen_ddl = nexmark_ddl(generator_with(args.events, args.seed))
    for case in nexmark_cases(args.queries):
        setup = case.setup.replace("${SIDE_INPUT}", side)
        for mode in case.modes:
            if mode not in args.modes:
                continue
            if case.not_comparable:
                report.add(case.name, mode, "SKIPPED", "not comparable: " + case.not_comparable)
                continue
            d_rows = d_err = f_rows = f_err = None
            t0 = time.time()
            try:
                if mode == "batch":
                    d_rows = dipper.batch(case.name.replace("/", "_"), file_ddl + setup, case.query)
                else:
                    d_rows = dipper.stream(case.name.replace("/", "_"), gen_ddl + setup, case.query,
                                           "update" if case.key else None, case.key,
                                           settings=[("dipper.max-batch-rows", str(args.batch_rows))])
            except engines.EngineError as e:
                d_err = str(e)
            t1 = time.time()
            try:
                f_rows = flink.run(mode == "batch", file_ddl + setup, case.query, case.flink_upsert_key)
            except engines.EngineError as e:
                f_err = str(e)
            t2 = time.time()
            if args.verbose:
                print("         (dipper %.1f s, flink %.1f s)" % (t1 - t0, t2 - t1))
            judge(report, case.name, mode, d_rows, d_err, f_rows, f_err,
                  case.dipper_refuses.get(mode), case.differs.get(mode))


# ---- main -----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dipper", required=True, help="the dipper CLI (build-asan/dipper or build/dipper)")
    ap.add_argument("--workdir", required=True, help="a folder for the input files and outputs")
    ap.add_argument("--suite", action="append", choices=("nexmark", "corpus"),
                    help="the suites to run (default both)")
    ap.add_argument("--queries", default="", help="nexmark queries to run, e.g. q0,q3 (default all)")
    ap.add_argument("--corpus", default="", help="corpus files to run, e.g. batch/joins,stream/tumble (default all)")
    ap.add_argument("--modes", default="batch,streaming")
    ap.add_argument("--events", type=int, default=20000, help="nexmark events (default 20000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--batch-rows", type=int, default=4096,
                    help="dipper's rows per micro-batch in streaming mode (default 4096)")
    ap.add_argument("--mini-cluster", action="store_true",
                    help="run each Flink job on a local mini-cluster of its own (PyFlink's local "
                         "execution, the old path) instead of one session cluster for the run")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.queries = [q for q in args.queries.split(",") if q]
    args.modes = [m for m in args.modes.split(",") if m]
    suites = args.suite or ["nexmark", "corpus"]
    os.makedirs(args.workdir, exist_ok=True)
    args.workdir = os.path.abspath(args.workdir)
    if not os.access(args.dipper, os.X_OK):
        print("oracle: %s is not an executable dipper CLI" % args.dipper, file=sys.stderr)
        return 2
    dipper = engines.Dipper(os.path.abspath(args.dipper), args.workdir)
    t0 = time.time()
    if "nexmark" in suites:
        try:
            args.events_dir = write_events(dipper, args.workdir, args.events, args.seed)
        except engines.EngineError as e:
            print("oracle: dipper could not write the nexmark events: %s" % e, file=sys.stderr)
            return 2
    try:
        if not args.mini_cluster:
            # One session cluster for the whole run (flinkcluster.py); it
            # ends with this process.
            import flinkcluster
            import flinkenv
            cluster = flinkcluster.SessionCluster(slots=1, log_dir=os.environ.get("DIPPER_FLINK_LOG_DIR"),
                                                  folder=os.path.join(args.workdir, "flink-cluster"))
            cluster.start()
            flinkenv.use_cluster(cluster.conf())
            print("oracle: Flink session cluster on 127.0.0.1:%d in %.1f s"
                  % (cluster.rest_port, time.time() - t0), flush=True)
        flink = engines.Flink()
        # Start the JVM (and the cluster) now, so that a Flink that cannot
        # start fails here, loudly, and not as a difference in every case.
        probe = flink.run(True, "", "SELECT 1")
    except Exception as e:  # noqa: BLE001 — any failure to start is fatal
        print("oracle: Flink could not start %s: %s"
              % ("a local mini-cluster" if args.mini_cluster else "a session cluster", e), file=sys.stderr)
        return 2
    if probe != [compare.canon_row([1])]:
        print("oracle: Flink answered SELECT 1 with %r" % (probe,), file=sys.stderr)
        return 2
    print("oracle: Flink up in %.1f s" % (time.time() - t0), flush=True)
    flink.jobs, flink.seconds = 0, 0.0  # the cases' jobs alone, not the probe
    report = Report()
    if "nexmark" in suites:
        run_nexmark(args, report, dipper, flink)
    if "corpus" in suites:
        import corpus
        corpus.run(args, report, dipper, flink, judge)
    print("oracle: %s (%d Flink jobs, %.1f s each on average; %.0f s in all)"
          % (report.summary(), flink.jobs, flink.seconds / max(flink.jobs, 1), time.time() - t0))
    bad = report.failed()
    for case, mode, status, _ in bad:
        print("oracle: %s %s %s" % (status, mode, case), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
