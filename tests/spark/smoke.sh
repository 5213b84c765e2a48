#!/usr/bin/env bash
# tests/spark/smoke.sh — end-to-end check of scripts/spark-local against a real
# Spark Connect server: start it (a second start must find it running), run
# queries through the pyspark Connect client of the cached venv (a count, a
# grouped aggregate, the Kafka source resolving, a Spark error with its error
# class), then stop it and check that it is gone.  Not registered in ctest
# yet: nothing in dipper talks to Spark until the Spark Connect client exists.
#
# A server that was already running before the test is used and left
# running (and the stop checks are skipped); one started here is stopped.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
spark="$root/scripts/spark-local"
port="${DIPPER_SPARK_PORT:-15002}"
started_here=0
stopped=0

cleanup() {
  local status=$?
  if ((started_here && !stopped)); then
    "$spark" stop || status=1
  fi
  if ((status == 0)); then echo "smoke: PASS"; else echo "smoke: FAIL" >&2; fi
  exit "$status"
}
trap cleanup EXIT

fail() { echo "smoke: $*" >&2; exit 1; }

if ! "$spark" status >/dev/null 2>&1; then
  started_here=1
  "$spark" start
fi
# start on a running server is a no-op that says so.
again="$("$spark" start)"
echo "$again"
[[ "$again" == *'already running'* ]] || fail "a second start did not find the server running"
"$spark" status

python="$("$spark" python)"
"$python" - "sc://127.0.0.1:$port" <<'PY'
import sys
from pyspark.sql import SparkSession
from pyspark.errors import AnalysisException

def check(cond, what):
    if not cond:
        sys.exit("smoke: " + what)

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
check(spark.version == "4.1.1", "server reports Spark %s, not the pinned 4.1.1" % spark.version)

check(spark.range(3).count() == 3, "range(3).count() is not 3")

# A grouped aggregate through a shuffle: the answer is computed, not echoed.
rows = spark.sql(
    "SELECT id % 3 AS k, count(*) AS n, sum(id) AS s FROM range(10) GROUP BY id % 3 ORDER BY k"
).collect()
got = [(r.k, r.n, r.s) for r in rows]
check(got == [(0, 4, 18), (1, 3, 12), (2, 3, 15)], "grouped aggregate returned %r" % (got,))

# The Kafka connector's jars are on the server's classpath: the source
# resolves and has its fixed schema.  Analysis only, no broker is contacted.
kafka = (spark.readStream.format("kafka")
         .option("kafka.bootstrap.servers", "127.0.0.1:9")
         .option("subscribe", "dipper-smoke").load())
names = kafka.schema.fieldNames()
check(names[:7] == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"],
      "the kafka source has columns %r" % (names,))
check(kafka.isStreaming, "the kafka source is not a streaming DataFrame")

# A Spark error reaches the client with its error class.  The client also
# logs each server error as JSON on stderr; that log is not the check.
import logging
logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
try:
    spark.sql("SELECT * FROM dipper_smoke_no_such_table").collect()
    sys.exit("smoke: a query on a missing table succeeded")
except AnalysisException as e:
    check(e.getCondition() == "TABLE_OR_VIEW_NOT_FOUND",
          "missing table gave error class %r" % (e.getCondition(),))

spark.stop()
print("smoke: count, grouped aggregate, kafka source schema and error class checked")
PY

# The server's resident memory after the queries, for the record.
pid="$(cat "${DIPPER_STATE:-$root/build/spark}/spark.pid")"
echo "smoke: server pid $pid $(grep -E '^VmRSS' "/proc/$pid/status" | tr -s ' \t' ' ')"

if ((started_here)); then
  "$spark" stop
  stopped=1
  if "$spark" status >/dev/null 2>&1; then
    fail "status still reports a server after stop"
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port still answers after stop"
  fi
  echo "smoke: the server stopped and its port is closed"
fi
