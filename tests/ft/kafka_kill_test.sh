#!/usr/bin/env bash
# kafka_kill_test.sh DIPPER TOOL KAFKA_LOCAL PIPELINE WORKDIR — fault
# tolerance of `dipper run` from Kafka to Kafka (kill_test.sh's approach).
#
# The input: 60,000 JSON rows 10 ms apart and one an hour later (whose
# watermark closes every window of the others), produced by TOOL
# (ft_kafka_tool) over 3 partitions of a fresh topic, the pair of rows 2m and
# 2m + 1 to partition m % 3 (a pair shares the deduplication's key, and the
# streaming deduplication keeps the row that comes first).  The query reads
# it from the earliest offset, 450 rows a batch (150 a partition, the
# partitions in step: ~134 micro-batches, each of 450 consecutive ids), trigger
# available-now, into a Kafka sink with a checkpoint folder; the sink topic
# is read back read_committed by TOOL and compared with the exact answer,
# computed here in Python from the same generator.
#
# window, join, dedup: a TUMBLE 10 s SUM/COUNT per key, an interval join with
#   a second reading of the topic, a deduplication (ROW_NUMBER() = 1); the
#   sink exactly-once.  The run is killed with SIGKILL $KILLS times (default
#   20) at random points, started again on the same folder each time, then run
#   to the end: 0 rows lost, 0 doubled, 0 wrong (and a run after the end
#   writes nothing more).  FT_VERBOSE=1 prints each kill.  The seed is printed;
#   KILL_SEED=N replays it.
# window_par2, dedup_par2: window and dedup on 2 workers ('parallelism.default'
#   = '2') over a topic of 4 partitions (the pair 2m, 2m + 1 to partition
#   m % 4), each worker reading its two partitions (partition i to worker
#   i mod 2), killed the same way: exact; the first run is checked to run on
#   the workers (no "runs on one thread" note), and a run on 3 workers on the
#   folder afterwards is refused, naming both counts.
# at-least-once: the projection with the sink at-least-once, killed the same
#   way: every row present; the rows written twice are counted and printed.
# broker-restart: a broker of the test's own (port $FT_PORT, default 19092,
#   state under WORKDIR) is stopped and started again (scripts/kafka-local)
#   while the window query runs, and then paused (SIGSTOP) for 5 s and
#   continued; a run that fails while the broker is away is run again: the
#   output must be exact.
# sigterm: against a broker of its own (port $FT_PORT + 100): `dipper run` of
#   an exactly-once query must exit within 1 s of SIGTERM or SIGINT (status
#   143 or 130) with no broker listening, with the broker paused before the
#   query starts, paused at random points of a run (open, plan, read, commit),
#   and stopped during a run; afterwards the run is finished and exact.  Each
#   time to exit is printed.
set -euo pipefail
dipper=$1 tool=$2 kafka_local=$3 pipeline=$4 work=$5
kills=${KILLS:-20}
seed=${KILL_SEED:-$RANDOM}
RANDOM=$seed
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

port=${DIPPER_KAFKA_PORT:-9092}
own_broker=0
case $pipeline in
broker-restart) port=${FT_PORT:-19092}; own_broker=1 ;;
sigterm) port=$((${FT_PORT:-19092} + 100)); own_broker=1 ;;
esac
bs=127.0.0.1:$port
# A broker of the test's own: its own port and state, so that stopping or
# pausing it disturbs no other test.
kl() { DIPPER_KAFKA_PORT=$port DIPPER_STATE=$work/kafka "$kafka_local" "$@"; }
broker_jvm() { cat "$work/kafka/kafka.pid"; }
cleanup() {
  if [ "$own_broker" = 1 ] && [ -e "$work/kafka/kafka.pid" ]; then
    kill -CONT "$(broker_jvm)" 2>/dev/null || true
    kl stop >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
if [ "$own_broker" = 1 ]; then
  t0=$(date +%s%N)
  kl start >/dev/null || fail "the test's broker on $bs did not start"
  echo "broker on $bs up in $((($(date +%s%N) - t0) / 1000000)) ms"
fi

tag=$(date +%s%N | tail -c 9)$$
parts=3
workers=1
case $pipeline in *_par2) parts=4 workers=2 ;; esac
export FT_PARTS=$parts
in_topic=ft-$pipeline-$tag-in
out_topic=ft-$pipeline-$tag-out

python3 - <<'EOF' | "$tool" produce "$bs" "$in_topic" "$parts" || fail "producing the input"
import json, os, sys
out = sys.stdout
parts = int(os.environ["FT_PARTS"])
for n in range(60000):
    ms = n * 10
    ts = f"2024-01-01 00:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
    out.write(f"{n // 2 % parts}\t" + json.dumps({"id": n, "k": n % 7, "v": n % 100, "d": n // 2, "ts": ts}) + "\n")
out.write("0\t" + json.dumps({"id": 60000, "k": 0, "v": 1, "d": 30000, "ts": "2024-01-01 01:00:00.000"}) + "\n")
EOF
"$tool" create "$bs" "$out_topic" 3 || fail "creating the sink topic"

guarantee=exactly-once
[ "$pipeline" = at-least-once ] && guarantee=at-least-once

src_table() { # $1: name, $2: columns
  echo "CREATE TABLE $1 ($2,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'kafka', 'topic' = '$in_topic', 'properties.bootstrap.servers' = '$bs',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');"
}
dst_table() { # $1: columns
  echo "CREATE TABLE dst ($1)
WITH ('connector' = 'kafka', 'topic' = '$out_topic', 'properties.bootstrap.servers' = '$bs',
  'format' = 'json', 'sink.delivery-guarantee' = '$guarantee',
  'sink.transactional-id-prefix' = 'ft-$tag-');"
}
write_sql() { # $1: file, $2: the query
  cat >"$1" <<EOF
SET 'execution.checkpointing.dir' = '$work/ck';
SET 'dipper.max-batch-rows' = '450';
SET 'dipper.trigger' = 'available-now';
SET 'parallelism.default' = '$workers';
$(src_table src "id BIGINT, k INT, v INT, d INT, ts TIMESTAMP(3)")
$2
EOF
}

window_sql="$(dst_table "k INT, ws TIMESTAMP(3), we TIMESTAMP(3), s BIGINT, c BIGINT")
INSERT INTO dst SELECT k, window_start, window_end, SUM(CAST(v AS BIGINT)), COUNT(*)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;"
join_sql="$(src_table src2 "id BIGINT, v INT, ts TIMESTAMP(3)")
$(dst_table "id BIGINT, k INT, v2 INT")
INSERT INTO dst SELECT a.id, a.k, a.v + b.v FROM src a JOIN src2 b
ON a.id = b.id AND b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts + INTERVAL '1' SECOND;"
dedup_sql="$(dst_table "id BIGINT, k INT, v2 INT")
INSERT INTO dst SELECT id, k, v * 2 FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY d ORDER BY ts ASC) AS rn FROM src)
WHERE rn = 1;"
project_sql="$(dst_table "id BIGINT, k INT, v2 INT")
INSERT INTO dst SELECT id, k, v * 2 FROM src;"

# The exact answer of each query, as sorted JSON lines.
expected() {
  python3 - "$1" <<'EOF'
import json, sys
rows = [{"id": n, "k": n % 7, "v": n % 100, "ms": n * 10} for n in range(60000)]
rows.append({"id": 60000, "k": 0, "v": 1, "ms": 3600 * 1000})
def ts(ms):
    return f"2024-01-01 {ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}"
out = []
if sys.argv[1] in ("project", "join"):
    out = [{"id": r["id"], "k": r["k"], "v2": r["v"] * 2} for r in rows]
elif sys.argv[1] == "dedup":
    out = [{"id": r["id"], "k": r["k"], "v2": r["v"] * 2} for r in rows if r["id"] % 2 == 0]
else:
    groups = {}
    for r in rows[:-1]:  # the last row's window stays open
        w = r["ms"] // 10000 * 10000
        g = groups.setdefault((r["k"], w), [0, 0])
        g[0] += r["v"]
        g[1] += 1
    out = [{"k": k, "ws": ts(w), "we": ts(w + 10000), "s": s, "c": c}
           for (k, w), (s, c) in groups.items()]
for line in sorted(json.dumps(o, sort_keys=True) for o in out):
    print(line)
EOF
}

# The sink topic as a read_committed consumer sees it, normalised the same
# way (".000" millis dropped), sorted.
actual() {
  "$tool" consume "$bs" "$out_topic" read_committed >"$work/consumed" || fail "reading the sink topic"
  python3 - "$work/consumed" <<'EOF'
import json, sys
lines = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    for key in ("ws", "we"):
        if key in o and o[key].endswith(".000"):
            o[key] = o[key][:-4]
    lines.append(json.dumps(o, sort_keys=True))
for line in sorted(lines):
    print(line)
EOF
}

compare() { # $1: the query
  expected "$1" >"$work/expected"
  actual >"$work/actual"
  local want got lost dup wrong
  want=$(wc -l <"$work/expected")
  got=$(wc -l <"$work/actual")
  lost=$(comm -23 "$work/expected" "$work/actual" | wc -l)
  dup=$(uniq -d <"$work/actual" | wc -l)
  wrong=$(comm -13 "$work/expected" <(uniq "$work/actual") | wc -l)
  if [ "$guarantee" = at-least-once ]; then
    [ "$lost" = 0 ] && [ "$wrong" = 0 ] ||
      fail "$1: $got rows in the sink, $want expected: $lost missing, $wrong wrong (seed $seed; see $work)"
    echo "$1 at-least-once: all $want rows present, $((got - want)) written more than once ($dup distinct rows doubled)"
    return
  fi
  cmp -s "$work/expected" "$work/actual" ||
    fail "$1: $got rows in the sink, $want expected: $lost missing, $dup doubled, $wrong wrong (seed $seed; see $work)"
  echo "$1: $got rows exact"
}

run_to_end() { # $1: sql file
  "$dipper" run -q "$1" >/dev/null 2>>"$work/stderr" || fail "the last run failed: $(tail -5 "$work/stderr")"
}

hits=0
run_killed() { # $1: sql file; kills at random points, then a run to the end
  local sql=$1 i pid st
  for i in $(seq 1 "$kills"); do
    "$dipper" run -q "$sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    # 0.05 to 0.6 s, one time in five 0.4 s more (a run starts its first
    # batch after some 0.3 s, then runs 50 to 80 a second): in open (the
    # sink's init_transactions, its marker), in a batch, in a commit, at the end
    sleep "0.$(printf '%02d' $((RANDOM % 55 + 5)))"
    [ $((RANDOM % 5)) -ne 0 ] || sleep 0.4
    kill -9 "$pid" 2>/dev/null || true
    st=0
    wait "$pid" 2>/dev/null || st=$?
    case $st in
    137) hits=$((hits + 1)) ;;
    0) ;;
    *) fail "run $i failed on its own (exit $st): $(tail -3 "$work/stderr")" ;;
    esac
    [ -z "${FT_VERBOSE:-}" ] || echo "  kill $i: exit $st, last commit $(ls "$work/ck/dst/commits" 2>/dev/null | sort -n | tail -1)"
  done
  run_to_end "$sql"
}

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# SIGTERM or SIGINT to a run, which must end within 1 s with 143 or 130.
# $1: pid, $2: signal, $3: what the run was doing.
stop_within_1s() {
  local pid=$1 sig=$2 what=$3 t0 took st=0
  t0=$(date +%s%N)
  kill -"$sig" "$pid"
  # wait returns at the exit, however long; a watchdog ends a hung run
  (sleep 10; kill -9 "$pid" 2>/dev/null) &
  local dog=$!
  wait "$pid" || st=$?
  took=$(ms_since "$t0")
  kill "$dog" 2>/dev/null || true
  wait "$dog" 2>/dev/null || true
  echo "  $what: SIG$sig -> exit $st in $took ms"
  [ "$took" -le 1000 ] || fail "$what: the run took $took ms to exit after SIG$sig (seed $seed; see $work/stderr)"
  case $st in
  130 | 143) ;;
  1) grep -q "interrupted" "$work/stderr" || fail "$what: exit 1 after SIG$sig, not an interrupt: $(tail -3 "$work/stderr")" ;;
  *) fail "$what: exit status $st after SIG$sig" ;;
  esac
}

case $pipeline in
window | join | dedup | at-least-once | window_par2 | dedup_par2)
  query=${pipeline%_par2}
  [ "$pipeline" = at-least-once ] && query=project
  echo "kill seed $seed, $kills kills; topics $in_topic ($parts partitions, $workers workers) -> $out_topic"
  sql_var=${query}_sql
  write_sql "$work/p.sql" "${!sql_var}"
  if [ "$workers" -gt 1 ]; then
    # On the workers, not on one thread with a note (notes go to stderr
    # without -q, at open): a first run, killed once it has said anything
    # (one more kill on the folder).
    "$dipper" run "$work/p.sql" >"$work/first.out" 2>"$work/first.err" &
    pid=$!
    for _ in $(seq 300); do [ -s "$work/first.out" ] || [ -s "$work/first.err" ] && break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if grep -q "runs on one thread" "$work/first.err"; then fail "not on workers: $(cat "$work/first.err")"; fi
  fi
  t0=$(date +%s%N)
  run_killed "$work/p.sql"
  echo "$kills kills, $hits of them while the query ran (the others once it had finished); all runs $(ms_since "$t0") ms"
  compare "$query"
  # A run after the end reads nothing new and writes nothing more.
  run_to_end "$work/p.sql"
  compare "$query"
  if [ "$workers" -gt 1 ]; then
    # another number of workers is refused, naming both
    sed "s/'parallelism.default' = '2'/'parallelism.default' = '3'/" "$work/p.sql" >"$work/p3.sql"
    if out=$("$dipper" run -q "$work/p3.sql" 2>&1 >/dev/null); then fail "a run on 3 workers was not refused"; fi
    echo "$out" | grep -q "on 2 workers, and this run has 3" || fail "3 workers: $out"
    compare "$query"
  fi
  ;;
broker-restart)
  write_sql "$work/p.sql" "$window_sql"
  runs=0 failed=0
  # Slower batches (100 rows) so that the run outlasts the outages.
  sed -i "s/'dipper.max-batch-rows' = '450'/'dipper.max-batch-rows' = '150'/" "$work/p.sql"
  "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" &
  pid=$!
  at() { # what the run is doing: its last committed batch
    local c
    c=$(ls "$work/ck/dst/commits" 2>/dev/null | sort -n | tail -1)
    if kill -0 "$pid" 2>/dev/null; then echo "running, at batch ${c:-none}"; else echo "ended, at batch ${c:-none}"; fi
  }
  sleep 2
  kill -0 "$pid" 2>/dev/null || fail "the run ended before the broker was stopped: make the test's run longer"
  echo "broker stopped ($(at))"
  t0=$(date +%s%N)
  kl stop >/dev/null
  echo "  in $(ms_since "$t0") ms"
  sleep 2
  t0=$(date +%s%N)
  kl start >/dev/null || fail "the broker did not start again"
  echo "broker started again in $(ms_since "$t0") ms ($(at))"
  sleep 2
  echo "broker paused for 5 s ($(at))"
  kill -STOP "$(broker_jvm)"
  sleep 5
  kill -CONT "$(broker_jvm)"
  echo "broker continued ($(at))"
  st=0
  wait "$pid" || st=$?
  runs=1
  if [ "$st" != 0 ]; then
    failed=1
    echo "the run failed while the broker was away (exit $st): $(grep -v '^%' "$work/stderr" | tail -2 | tr '\n' ' ')"
  fi
  # Whatever the first run did, runs on the same folder finish the query.
  until "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr"; do
    runs=$((runs + 1))
    [ "$runs" -lt 5 ] || fail "the query did not finish in 5 runs: $(tail -5 "$work/stderr")"
  done
  runs=$((runs + 1))
  echo "broker-restart: $runs runs on the folder, $failed of them failed while the broker was away (the last one: a run after the end)"
  compare window
  ;;
sigterm)
  write_sql "$work/p.sql" "$window_sql"
  # Batches of 45 rows (1,334 of them, ~25 s): every run below is cut mid-query.
  sed -i "s/'dipper.max-batch-rows' = '450'/'dipper.max-batch-rows' = '45'/" "$work/p.sql"
  # 1. No broker listening at all (a port nobody uses): stuck in open.
  sed "s/$bs/127.0.0.1:$((port + 50))/g; s|$work/ck|$work/ck-none|" "$work/p.sql" >"$work/none.sql"
  for sig in TERM INT; do
    "$dipper" run -q "$work/none.sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    sleep 1.5
    stop_within_1s "$pid" "$sig" "no broker listening"
  done
  # 2. The broker paused before the query starts: connections open, no answer.
  kill -STOP "$(broker_jvm)"
  for sig in TERM INT; do
    "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    sleep 1.5
    stop_within_1s "$pid" "$sig" "broker paused before the start"
  done
  kill -CONT "$(broker_jvm)"
  # 3. Paused at random points of a run: in open (init_transactions, the
  # marker), plan (offsets), read, commit (the transaction), close.
  for i in $(seq 1 8); do
    "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    at="0.$(printf '%02d' $((RANDOM % 100)))"
    sleep "$at"
    sleep "$((RANDOM % 3))"
    kill -STOP "$(broker_jvm)"
    sleep 1.2
    sig=TERM
    [ $((i % 2)) -eq 0 ] && sig=INT
    if kill -0 "$pid" 2>/dev/null; then
      stop_within_1s "$pid" "$sig" "broker paused during a run ($i)"
    else
      st=0
      wait "$pid" || st=$?
      echo "  broker paused during a run ($i): the run had ended (exit $st) before the signal"
    fi
    kill -CONT "$(broker_jvm)"
  done
  # 4. The broker stopped during a run.
  "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" &
  pid=$!
  sleep 1
  kl stop >/dev/null
  sleep 1
  if kill -0 "$pid" 2>/dev/null; then
    stop_within_1s "$pid" TERM "broker stopped during a run"
  else
    st=0
    wait "$pid" || st=$?
    echo "  broker stopped during a run: the run had ended (exit $st) before the signal"
  fi
  kl start >/dev/null || fail "the broker did not start again"
  run_to_end "$work/p.sql"
  compare window
  ;;
*) fail "unknown pipeline $pipeline" ;;
esac
