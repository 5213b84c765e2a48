"""flinkenv — a PyFlink TableEnvironment, loopback only: on a local
mini-cluster per job (PyFlink's local execution), or submitting to a session
cluster (flinkcluster.py) when use_cluster() named one.

Owns: the configuration every use of the cached Flink (scripts/flink-local)
shares: one client JVM started by PyFlink's gateway inside this Python
process; every endpoint (REST, RPC, the TaskManager's data port, the py4j
gateway) on 127.0.0.1; parallelism 1; UTC as the session time zone; no web
UI.  Does not own: what runs on it, or the session cluster's processes.
"""
import os

# The gateway PyFlink starts (pyflink.java_gateway) reads these: the JVM's
# own options, so that even an address Flink derives itself is loopback.
_JVM_OPTS = "-Djava.net.preferIPv4Stack=true -Duser.timezone=UTC"

LOOPBACK = {
    "rest.bind-address": "127.0.0.1",
    "rest.address": "127.0.0.1",
    "rest.port": "0",
    "jobmanager.rpc.address": "127.0.0.1",
    "jobmanager.bind-host": "127.0.0.1",
    "taskmanager.bind-host": "127.0.0.1",
    "taskmanager.host": "127.0.0.1",
    "blob.server.port": "0",
    "parallelism.default": "1",
    "table.local-time-zone": "UTC",
    "pipeline.name": "dipper flink oracle",
}


# The session cluster's client settings (execution.target = remote, its
# REST address and port), or None: a mini-cluster per job.
_CLUSTER = None


def use_cluster(conf):
    """Submit the jobs of every later table_env to the session cluster
    whose client settings these are (SessionCluster.conf()); None goes back
    to a local mini-cluster per job."""
    global _CLUSTER
    _CLUSTER = dict(conf) if conf else None


def _prepare_process():
    os.environ.setdefault("TZ", "UTC")
    opts = os.environ.get("JAVA_TOOL_OPTIONS", "")
    if "preferIPv4Stack" not in opts:
        os.environ["JAVA_TOOL_OPTIONS"] = (opts + " " + _JVM_OPTS).strip()
    # Flink's own log goes to a file of ours, not to the terminal.
    log_dir = os.environ.get("DIPPER_FLINK_LOG_DIR")
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
        os.environ.setdefault("FLINK_LOG_DIR", log_dir)


def table_env(batch, extra=None):
    """A new TableEnvironment in batch or streaming mode on the local
    mini-cluster (the JVM is shared by every environment of the process)."""
    _prepare_process()
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    for k, v in LOOPBACK.items():
        conf.set_string(k, v)
    for k, v in (_CLUSTER or {}).items():
        conf.set_string(k, v)
    for k, v in (extra or {}).items():
        conf.set_string(k, v)
    b = EnvironmentSettings.new_instance()
    b = b.in_batch_mode() if batch else b.in_streaming_mode()
    settings = b.with_configuration(conf).build()
    return TableEnvironment.create(settings)
