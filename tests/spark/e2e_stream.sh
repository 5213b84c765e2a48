#!/usr/bin/env bash
# tests/spark/e2e_stream.sh — the seed's pipeline (examples/payments.sql) as a
# Spark Structured Streaming query, through `dipper run --engine sc://...`,
# on the real Kafka (127.0.0.1:9092) and Spark (127.0.0.1:15002) of the test
# fixtures.  Topics and checkpoints are fresh for each run of the script; the
# example itself is run, with only its topic names and checkpoint directory
# substituted (plus the trigger where a part says so).
#
#   1. trigger available-now, three runs from one checkpoint, each ending by
#      itself (exit 0): payments out of order, then on time, then one older
#      than the watermark.  The sink topic holds every window and sum
#      exactly once, the late row was dropped (and counted in the summary:
#      twice, once per sliding window it falls in, as Spark counts),
#      a progress line was shown.
#   2. the default trigger (as fast as possible): a query that runs until
#      SIGTERM.  Windows are emitted while it runs (the watermark closes
#      them), a late row is dropped; SIGTERM stops it cleanly (exit 143 after
#      a summary saying "stopped", no error), and the query no longer runs on
#      the server: a payment produced afterwards closes windows that never
#      reach the sink, and the checkpoint takes no further batch.
#   usage: e2e_stream.sh PATH/TO/dipper REPO_ROOT
set -euo pipefail

dipper="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$2"
spark="sc://127.0.0.1:${DIPPER_SPARK_PORT:-15002}"
kafka="$root/scripts/kafka-local"
tag="e2e_stream_$$_$(date +%s)"
work="/tmp/dipper_$tag"   # the loopback server writes the checkpoints here too
mkdir -p "$work"
bg=""
cleanup() {
  if [ -n "$bg" ] && kill -0 "$bg" 2>/dev/null; then kill -TERM "$bg" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
checks=0
export DIPPER_KAFKA_CONSUME_TIMEOUT=15

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  checks=$((checks + 1))
  if ! "$@"; then fail "$what"; fi
}

contains() {
  checks=$((checks + 1))
  if [[ "$(cat "$1")" != *"$2"* ]]; then
    fail "$(basename "$1") lacks: $2"
    sed 's/^/  | /' "$1" >&2
  fi
}

lacks() {
  checks=$((checks + 1))
  if [[ "$(cat "$1")" == *"$2"* ]]; then
    fail "$(basename "$1") should not hold: $2"
    sed 's/^/  | /' "$1" >&2
  fi
}

# payment PROVINCE TIME AMOUNT ORDER — one JSON payment of 2024-01-01.
payment() {
  printf '{"createTime":"2024-01-01 %s","orderId":%d,"payAmount":%s,"payPlatform":0,"provinceId":%d}\n' \
    "$2" "$4" "$3" "$1"
}

# window PROVINCE START END SUM — one record of the sink as the pipeline writes it.
window() {
  printf '{"province_id":%d,"window_start":"%s","window_end":"%s","pay_amount":%s}\n' "$1" "$2" "$3" "$4"
}

# pipeline NAME [SET...] — examples/payments.sql for part NAME: its topics and
# checkpoint, the SET statements given put after the file's own.
pipeline() {
  local name="$1"
  shift
  local file="$work/$name.sql"
  sed -e "s|'topic' = 'payment_msg'|'topic' = '${tag}_${name}_in'|" \
      -e "s|'topic' = 'sink'|'topic' = '${tag}_${name}_out'|" \
      -e "s|'/tmp/dipper/payments-checkpoints'|'$work/$name-checkpoints'|" \
      "$root/examples/payments.sql" >"$file"
  for set in "$@"; do printf '%s\n' "$set" >>"$file"; done
  for sub in "${tag}_${name}_in" "${tag}_${name}_out" "$work/$name-checkpoints"; do
    if ! grep -q -- "$sub" "$file"; then
      echo "FAIL: examples/payments.sql no longer has the text this test substitutes ($sub)" >&2
      exit 1
    fi
  done
  "$kafka" create-topic "${tag}_${name}_in" >/dev/null 2>&1
  "$kafka" create-topic "${tag}_${name}_out" >/dev/null 2>&1
}

# run_to_end NAME EXPECTED_STATUS — dipper run of part NAME's file until it ends.
run_to_end() {
  local status=0
  NO_COLOR= timeout 300 "$dipper" run --engine "$spark" "$work/$1.sql" \
    >"$work/out" 2>"$work/err" </dev/null || status=$?
  checks=$((checks + 1))
  if [ "$status" -ne "$2" ]; then
    fail "dipper run $1.sql exited $status, expected $2"
    sed 's/^/  stderr: /' "$work/err" >&2
  fi
}

# sink NAME — every record on part NAME's sink topic, sorted.
sink() {
  "$kafka" consume "${tag}_$1_out" 2>/dev/null | sort
}

# ---- 1. available-now: three runs from one checkpoint ----
# Spark judges lateness by the watermark of the batch before, so the late
# row comes in a run after the one that moved the watermark.
pipeline now "SET 'dipper.trigger' = 'available-now';"
{
  payment 1 00:00:35.000 5.0 2
  payment 1 00:00:05.000 10.0 1
  payment 2 00:00:20.000 1.0 3
  payment 1 00:01:10.000 2.0 4
  payment 1 00:03:00.000 100.0 5 # the watermark goes to 00:02:50
} | "$kafka" produce "${tag}_now_in" 2>/dev/null
run_to_end now 0
contains "$work/err" "sink: batch 0, "                    # a progress line while it ran
contains "$work/err" "sink: finished after"
contains "$work/err" "5 rows in"
payment 3 00:03:05.000 7.0 6 | "$kafka" produce "${tag}_now_in" 2>/dev/null
run_to_end now 0
contains "$work/err" "sink: finished after"
{
  payment 2 00:00:10.000 50.0 7 # older than the watermark: dropped
  payment 3 00:03:06.000 1.0 8
} | "$kafka" produce "${tag}_now_in" 2>/dev/null
run_to_end now 0
contains "$work/err" "2 rows in"
# Spark counts the rows its window aggregation drops: the late payment falls
# in two sliding windows, so two rows.
contains "$work/err" "2 late rows dropped"
{
  window 1 "2023-12-31 23:59:30.000" "2024-01-01 00:00:30.000" 10.0
  window 1 "2024-01-01 00:00:00.000" "2024-01-01 00:01:00.000" 15.0
  window 1 "2024-01-01 00:00:30.000" "2024-01-01 00:01:30.000" 7.0
  window 1 "2024-01-01 00:01:00.000" "2024-01-01 00:02:00.000" 2.0
  window 2 "2023-12-31 23:59:30.000" "2024-01-01 00:00:30.000" 1.0
  window 2 "2024-01-01 00:00:00.000" "2024-01-01 00:01:00.000" 1.0
} | sort >"$work/want"
sink now >"$work/got"
checks=$((checks + 1))
if ! diff -u "$work/want" "$work/got" >&2; then fail "the sink of the available-now runs differs"; fi

# ---- 2. the default trigger, stopped by SIGTERM ----
pipeline term
{
  payment 1 00:00:35.000 5.0 2
  payment 1 00:00:05.000 10.0 1
  payment 2 00:00:20.000 1.0 3
  payment 1 00:01:10.000 2.0 4
  payment 1 00:03:00.000 100.0 5
} | "$kafka" produce "${tag}_term_in" 2>/dev/null
NO_COLOR= "$dipper" run --engine "$spark" "$work/term.sql" >"$work/term.out" 2>"$work/term.err" </dev/null &
bg=$!
# wait_sink N — until part term's sink holds N records (at most 180 s).
wait_sink() {
  local n=0
  for _ in $(seq 1 36); do
    n=$("$kafka" consume "${tag}_term_out" 2>/dev/null | wc -l)
    [ "$n" -ge "$1" ] && return 0
    kill -0 "$bg" 2>/dev/null || break
    sleep 5
  done
  echo "  the sink holds $n records, expected $1" >&2
  return 1
}
check "the running query emits the windows its watermark closed" wait_sink 6
{
  payment 2 00:00:10.000 50.0 7 # late: the watermark is at 00:02:50
  payment 3 00:04:10.000 1.0 8  # moves it to 00:04:00: two windows of province 1 close
} | "$kafka" produce "${tag}_term_in" 2>/dev/null
check "the running query emits the windows of the next watermark" wait_sink 8
sleep 2
ls "$work/term-checkpoints/sink/offsets" >"$work/offsets.before" 2>/dev/null || true
kill -TERM "$bg"
status=0
wait "$bg" || status=$?
bg=""
checks=$((checks + 1))
if [ "$status" -ne 143 ]; then
  fail "SIGTERM: dipper run exited $status, expected 143 (128 + SIGTERM, after a clean stop)"
  sed 's/^/  stderr: /' "$work/term.err" >&2
fi
contains "$work/term.err" "sink: batch "
contains "$work/term.err" "sink: stopped after"
contains "$work/term.err" "2 late rows dropped"
lacks "$work/term.err" "error"
# Gone from the server: a payment that would close two more windows finds
# no query to read it.
payment 3 00:06:00.000 1.0 9 | "$kafka" produce "${tag}_term_in" 2>/dev/null
sleep 10
ls "$work/term-checkpoints/sink/offsets" >"$work/offsets.after" 2>/dev/null || true
checks=$((checks + 1))
if ! diff -u "$work/offsets.before" "$work/offsets.after" >&2; then
  fail "the checkpoint took a batch after SIGTERM: the query still runs"
fi
{
  window 1 "2023-12-31 23:59:30.000" "2024-01-01 00:00:30.000" 10.0
  window 1 "2024-01-01 00:00:00.000" "2024-01-01 00:01:00.000" 15.0
  window 1 "2024-01-01 00:00:30.000" "2024-01-01 00:01:30.000" 7.0
  window 1 "2024-01-01 00:01:00.000" "2024-01-01 00:02:00.000" 2.0
  window 1 "2024-01-01 00:02:30.000" "2024-01-01 00:03:30.000" 100.0
  window 1 "2024-01-01 00:03:00.000" "2024-01-01 00:04:00.000" 100.0
  window 2 "2023-12-31 23:59:30.000" "2024-01-01 00:00:30.000" 1.0
  window 2 "2024-01-01 00:00:00.000" "2024-01-01 00:01:00.000" 1.0
} | sort >"$work/want"
sink term >"$work/got"
checks=$((checks + 1))
if ! diff -u "$work/want" "$work/got" >&2; then fail "the sink of the SIGTERM run differs"; fi

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
