#!/usr/bin/env bash
# bench/latency.sh — event-to-output latency of the seed pipeline, Kafka to
# Kafka (docs/benchmarks.md, "Latency"): bench/latency_payments.sql runs on
# dipper (embedded, or on Spark with --engine sc://...) while bench_latency
# (bench/latency.c) produces JSON payments at a fixed rate and times each
# window's output from the event that closed it.
#
#   bench/latency.sh [--engine embedded|sc://127.0.0.1:15002] [--rate 100000]
#                    [--seconds 30] [--warmup 5] [--step-ms 10] [--checkpoint]
#                    [--set 'key=value']... [--dump FILE]
#
# Needs the local Kafka running (scripts/kafka-local start) and, for Spark,
# the Spark Connect server (scripts/spark-local start): both are shared, so
# run this under the services lock.  Uses the release build (build/, or
# DIPPER_BENCH_BUILD).  Two fresh topics per run (one partition each),
# deleted at the end.  Prints bench_latency's figures, the engine process's
# CPU seconds (user + system, GNU time; for Spark only dipper's client) and
# the load average before and after.  DIPPER_LATENCY_STDERR=file keeps a
# copy of dipper's whole stderr there.  --dump FILE: bench_latency's line per
# row measured (its --dump); with DIPPER_TRACE_BATCHES=FILE in the
# environment dipper appends its per-batch trace there (the two share
# CLOCK_MONOTONIC: bench/latency_trace.py lines them up).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DIPPER_BENCH_BUILD:-$root/build}"
brokers="127.0.0.1:${DIPPER_KAFKA_PORT:-9092}"
engine=embedded rate=100000 seconds=30 warmup=5 step=10 checkpoint=0
sets=() dump=()
while [ $# -gt 0 ]; do
  case "$1" in
    --engine) engine="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --step-ms) step="$2"; shift 2 ;;
    --checkpoint) checkpoint=1; shift ;;
    --set) sets+=("$2"); shift 2 ;;
    --dump) dump=(--dump "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench/latency.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for b in "$build/dipper" "$build/bench/bench_latency" "$build/bench/bench_spark_stream_bench"; do
  [ -x "$b" ] || { echo "bench/latency.sh: $b is not built (scripts/build release)" >&2; exit 1; }
done

tag="lat-$$-$(date +%s)"
in="$tag-in" out="$tag-out"
work="$(mktemp -d /tmp/dipper-latency.XXXXXX)"
topics() { "$build/bench/bench_spark_stream_bench" "$@" --brokers "$brokers" >/dev/null; }
cleanup() {
  [ -n "${pid:-}" ] && kill -INT "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null && wait "$pid" 2>/dev/null || true
  topics delete "$in" "$out" || true
  rm -rf "$work"
}
trap cleanup EXIT
topics topic --topic "$in" --partitions 1
topics topic --topic "$out" --partitions 1

setlines=""
if [ "$checkpoint" = 1 ] || [ "$engine" != embedded ]; then
  setlines+="SET 'execution.checkpointing.dir' = '$work/checkpoints';"$'\n'
fi
for kv in "${sets[@]+"${sets[@]}"}"; do
  setlines+="SET '${kv%%=*}' = '${kv#*=}';"$'\n'
done
sql="$work/pipeline.sql"
python3 - "$root/bench/latency_payments.sql" "$sql" "$in" "$out" "$brokers" "$setlines" <<'PY'
import sys
src, dst, i, o, b, s = sys.argv[1:]
text = open(src).read().replace("${IN}", i).replace("${OUT}", o).replace("${BROKERS}", b).replace("${SETS}", s)
open(dst, "w").write(text)
PY

echo "latency: engine $engine, $rate events/s for $seconds s (warm-up $warmup s), event time $step ms per event; load $(cut -d' ' -f1-3 /proc/loadavg)"
eargs=()
[ "$engine" != embedded ] && eargs=(--engine "$engine")
# GNU time ignores SIGINT while it waits: the interrupt goes to dipper itself,
# whose pid the shell between them writes down before it becomes dipper.
/usr/bin/time -f "engine_cpu_s %U %S" -o "$work/time" \
  sh -c 'echo $$ >"$0"; exec "$@"' "$work/pid" "$build/dipper" run -q "${eargs[@]+"${eargs[@]}"}" "$sql" \
  >"$work/dipper.out" 2>"$work/dipper.err" &
pid=$!
# Let the query start (Spark: until it runs its first trigger).
if [ "$engine" = embedded ]; then sleep 1; else sleep 15; fi
kill -0 "$pid" 2>/dev/null || { cat "$work/dipper.err" >&2; echo "bench/latency.sh: the query ended early" >&2; exit 1; }
rc=0
"$build/bench/bench_latency" --in "$in" --out "$out" --brokers "$brokers" --rate "$rate" \
  --seconds "$seconds" --warmup "$warmup" --step-ms "$step" "${dump[@]+"${dump[@]}"}" || rc=$?
kill -INT "$(cat "$work/pid")"; wait "$pid" || true; pid=""
awk '/^engine_cpu_s/ {printf "engine_cpu_s %.2f\n", $2 + $3}' "$work/time"
echo "load_after $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${DIPPER_LATENCY_STDERR:-}" ] && cp "$work/dipper.err" "$DIPPER_LATENCY_STDERR"
[ -s "$work/dipper.err" ] && { echo "--- dipper's stderr:"; tail -5 "$work/dipper.err"; }
exit $rc
