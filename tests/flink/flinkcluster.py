"""flinkcluster — a Flink standalone session cluster on loopback, started
from the pinned PyFlink of scripts/flink-local, for the runs of many jobs
(the oracle, the peers benchmark).

Owns: a temporary FLINK_CONF_DIR with a generated config.yaml (every
address 127.0.0.1, free ports for the REST endpoint and the JobManager's
RPC, the JVM options of PyFlink's own config.yaml plus IPv4 and UTC), the
PID and log folders, one JobManager and one TaskManager started with
PyFlink's bin/jobmanager.sh and bin/taskmanager.sh `start-foreground` (each
its own process group, and PR_SET_PDEATHSIG through setpriv, so that they
end with the Python process that started them even when it is killed), the
wait until the TaskManager's slots are registered, and stopping them.  Does
not own: the jobs (flinkenv.table_env takes `conf()` to submit there).

Why: PyFlink's local execution starts a new mini-cluster for every job
(the TaskManager, its memory and threads, its slot; seconds of CPU per
job), while a session cluster starts once and takes each job in a fraction
of that.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

_JVM_OPTS = "-Djava.net.preferIPv4Stack=true -Duser.timezone=UTC"


def pyflink_home():
    import pyflink
    return os.path.dirname(os.path.abspath(pyflink.__file__))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _default_java_opts(home):
    """env.java.opts.all of PyFlink's own config.yaml (the --add-opens
    Flink needs on Java 17)."""
    import yaml
    with open(os.path.join(home, "conf", "config.yaml")) as f:
        doc = yaml.safe_load(f) or {}
    try:
        return str(doc["env"]["java"]["opts"]["all"])
    except (KeyError, TypeError):
        return str(doc.get("env.java.opts.all", ""))


class ClusterError(Exception):
    pass


class SessionCluster:
    """One JobManager and one TaskManager with `slots` slots, on
    127.0.0.1.  start() returns once the slots are registered; stop() (also
    at exit) ends both process groups."""

    def __init__(self, slots=2, tm_memory="2048m", jm_memory="1024m", log_dir=None, extra=None,
                 folder=None):
        # folder: where the configuration, PID and (without log_dir) log
        # files go, emptied first, so that a run killed before stop() leaves
        # its files for the next run to remove; default a new temporary one
        self.folder = folder
        self.slots = slots
        self.tm_memory = tm_memory
        self.jm_memory = jm_memory
        self.log_dir = log_dir
        self.extra = dict(extra or {})
        self.procs = []
        self.dir = None
        self.rest_port = None

    def _config(self, home):
        self.rest_port = free_port()
        rpc_port = free_port()
        opts = (_default_java_opts(home) + " " + _JVM_OPTS).strip()
        conf = {
            "env.java.opts.all": opts,
            "env.stdout-err.redirect-to-file": "true",
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.rpc.port": str(rpc_port),
            "jobmanager.bind-host": "127.0.0.1",
            "jobmanager.memory.process.size": self.jm_memory,
            "jobmanager.execution.failover-strategy": "region",
            "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.host": "127.0.0.1",
            "taskmanager.rpc.port": "0",
            "taskmanager.data.port": "0",
            "taskmanager.numberOfTaskSlots": str(self.slots),
            "taskmanager.memory.process.size": self.tm_memory,
            "rest.address": "127.0.0.1",
            "rest.bind-address": "127.0.0.1",
            "rest.port": str(self.rest_port),
            "blob.server.port": "0",
            "parallelism.default": "1",
            "table.local-time-zone": "UTC",
            # no restarts: a failing job fails at once, as on the mini-cluster
            "restart-strategy.type": "none",
        }
        conf.update(self.extra)
        return conf

    def start(self, timeout=240):
        home = pyflink_home()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            os.makedirs(self.folder)
            self.dir = os.path.abspath(self.folder)
        else:
            self.dir = tempfile.mkdtemp(prefix="dipper-flink-")
        conf_dir = os.path.join(self.dir, "conf")
        os.makedirs(conf_dir)
        for f in ("log4j-console.properties", "logback-console.xml", "log4j-cli.properties", "log4j.properties"):
            src = os.path.join(home, "conf", f)
            if os.path.exists(src):
                shutil.copy(src, conf_dir)
        with open(os.path.join(conf_dir, "config.yaml"), "w") as f:
            for k, v in self._config(home).items():
                f.write("%s: %s\n" % (k, json.dumps(v)))
        log_dir = self.log_dir or os.path.join(self.dir, "log")
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        env = dict(os.environ)
        env.update({"FLINK_CONF_DIR": conf_dir, "FLINK_PID_DIR": os.path.join(self.dir, "pid"),
                    "FLINK_LOG_DIR": log_dir, "TZ": "UTC", "FLINK_IDENT_STRING": "dipper"})
        env.pop("JAVA_TOOL_OPTIONS", None)  # its banner goes to stderr of every JVM
        env.pop("FLINK_HOME", None)
        atexit.register(self.stop)
        for script in ("jobmanager.sh", "taskmanager.sh"):
            # setpriv: PR_SET_PDEATHSIG survives the scripts' exec of java
            # (start-foreground execs the JVM in the same process).
            argv = ["bash", os.path.join(home, "bin", script), "start-foreground"]
            if shutil.which("setpriv"):
                argv = ["setpriv", "--pdeathsig", "TERM", "--"] + argv
            out = open(os.path.join(log_dir, script.replace(".sh", ".console")), "w")
            self.procs.append(subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                               stderr=subprocess.STDOUT, start_new_session=True,
                                               cwd=self.dir))
            out.close()
        deadline = time.time() + timeout
        while True:
            for p in self.procs:
                if p.poll() is not None:
                    msg = "a Flink process exited (%d) while starting%s" % (p.returncode, self._tail())
                    self.stop()
                    raise ClusterError(msg)
            try:
                ov = self.rest("/overview")
                if ov.get("slots-total", 0) >= self.slots:
                    return self
            except (OSError, ValueError):
                pass
            if time.time() > deadline:
                msg = ("the Flink session cluster did not register %d slots within %d s%s"
                       % (self.slots, timeout, self._tail()))
                self.stop()
                raise ClusterError(msg)
            time.sleep(0.5)

    def _tail(self):
        lines = []
        for f in sorted(os.listdir(self.log_dir)) if self.log_dir and os.path.isdir(self.log_dir) else []:
            if f.endswith((".console", ".err", ".out")):
                with open(os.path.join(self.log_dir, f), errors="replace") as fh:
                    t = fh.read().strip().splitlines()[-5:]
                if t:
                    lines.append("\n%s:\n  " % f + "\n  ".join(t))
        return "".join(lines)

    def rest(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.rest_port, path), timeout=5) as r:
            return json.loads(r.read().decode())

    def conf(self):
        """What a client sets to submit its jobs here."""
        return {"execution.target": "remote", "rest.address": "127.0.0.1",
                "rest.port": str(self.rest_port)}

    def pids(self):
        """The JobManager's and the TaskManager's JVM (the scripts exec
        java in the process they were started as)."""
        return [p.pid for p in self.procs if p.poll() is None]

    def stop(self):
        procs, self.procs = self.procs, []
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        if self.dir:
            # the logs stay only where the caller asked for them (log_dir)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
