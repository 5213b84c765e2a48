#!/usr/bin/env bash
# tests/spark/e2e_kill.sh — the Spark Connect server killed (SIGKILL) in the
# middle of a result stream: `dipper run` must end with an error message and
# exit 1, within a bound — not crash, not hang.  It uses a SECOND server of
# its own (port 15012, state in a temporary directory), never the shared one,
# and always stops it.
#   usage: e2e_kill.sh PATH/TO/dipper REPO_ROOT
set -euo pipefail

dipper="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$2"
port="${DIPPER_SPARK_KILL_PORT:-15012}"
state="$(mktemp -d)"
work="$(mktemp -d)"
export DIPPER_SPARK_PORT="$port" DIPPER_STATE="$state"

cleanup() {
  local status=$?
  "$root/scripts/spark-local" stop >/dev/null 2>&1 || true
  if [ -f "$state/spark.pid" ]; then kill -9 "$(cat "$state/spark.pid")" 2>/dev/null || true; fi
  rm -rf "$state" "$work"
  exit "$status"
}
trap cleanup EXIT

"$root/scripts/spark-local" start
pid="$(cat "$state/spark.pid")"

# 50 million rows: far more than arrive in the second before the kill.
cat >"$work/big.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE g (id BIGINT, v INT, s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '50000000');
SELECT id, v, s FROM g;
SQL

status=0
start=$(date +%s)
NO_COLOR= timeout 180 "$dipper" run --engine "sc://127.0.0.1:$port" --format csv "$work/big.sql" \
  >/dev/null 2>"$work/err" </dev/null &
run_pid=$!
# The result must be streaming when the server dies: wait for the first
# rows' query to be under way, then kill.
sleep 3
kill -9 "$pid"
wait "$run_pid" || status=$?
took=$(( $(date +%s) - start ))
echo "dipper exited $status after ${took}s:"
sed 's/^/  | /' "$work/err"

failures=0
[ "$status" -eq 1 ] || { echo "FAIL: exit status $status, expected 1 (124: hung, >128: crashed)" >&2; failures=1; }
grep -q "dipper: error: " "$work/err" || { echo "FAIL: no error message" >&2; failures=1; }
grep -q "127.0.0.1:$port" "$work/err" || { echo "FAIL: the message does not name the address" >&2; failures=1; }
[ "$took" -lt 120 ] || { echo "FAIL: took ${took}s to notice" >&2; failures=1; }
[ "$failures" -eq 0 ]
