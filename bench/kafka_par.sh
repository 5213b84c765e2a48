#!/usr/bin/env bash
# kafka_par.sh DIPPER TOOL [RECORDS] [RUNS] — the Kafka source's split by
# partition, 1 and 2 workers side by side (docs/benchmarks.md, "Kafka split
# by partition").
#
# RECORDS (default 2,000,000) JSON payments of the seed pipeline
# (examples/payments.sql: createTime 1 ms apart, orderId, payAmount,
# payPlatform, provinceId 0-5) are produced once by TOOL (ft_kafka_tool) into a
# fresh topic of 4 partitions (record i to partition i % 4), then each query
# reads the topic bounded (earliest to latest offset) with `dipper run`, on 1
# worker and on 2 ('parallelism.default'), alternating run by run, RUNS times
# each (default 3); the median by wall time is printed with its CPU (user +
# system) and peak RSS (/usr/bin/time).
#   q0: every column into a blackhole (per worker): the Kafka fetch and the
#       JSON decoding, nothing else;
#   payments: the seed pipeline's HOP 1 min / 30 s sums per province into a
#       filesystem folder (one part file per worker and batch); its rows
#       are counted and must be the same on 1 and 2 workers.
# A control first and last: a loop of shell arithmetic alone and two of them
# at once — the parallelism the machine gave at that moment, the ceiling of
# every speedup in the run.
#
# Needs a broker on 127.0.0.1:${DIPPER_KAFKA_PORT:-9092} (scripts/kafka-local
# start); run it under the services lock (flock -o /tmp/dipper-services.lock).
set -euo pipefail
dipper=$1 tool=$2
records=${3:-2000000}
runs=${4:-3}
bs=127.0.0.1:${DIPPER_KAFKA_PORT:-9092}
work=$(mktemp -d /tmp/kafka_par.XXXXXX)
trap 'rm -rf "$work"' EXIT
topic=bench-par-$(date +%s%N | tail -c 9)$$

t0=$(date +%s%N)
python3 - "$records" <<'EOF' | "$tool" produce "$bs" "$topic" 4
import sys
n = int(sys.argv[1])
out = sys.stdout
for i in range(n):
    h, rem = divmod(i // 1000, 3600)
    mi, se = divmod(rem, 60)
    ts = f"2024-01-{1 + h // 24:02d} {h % 24:02d}:{mi:02d}:{se:02d}.{i % 1000:03d}"
    out.write(f"{i % 4}\t{{\"createTime\":\"{ts}\",\"orderId\":{i},\"payAmount\":{(i * 37 % 10000) / 100},"
              f"\"payPlatform\":{i % 2},\"provinceId\":{i * 7 % 6}}}\n")
EOF
echo "produced $records records into $topic (4 partitions) in $((($(date +%s%N) - t0) / 1000000)) ms"

src="CREATE TABLE payment_msg (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,
  payPlatform INT, provinceId INT, WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND)
WITH ('connector' = 'kafka', 'topic' = '$topic', 'properties.bootstrap.servers' = '$bs',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');"
write() { # $1: query, $2: workers
  local out=$work/out-$1-$2
  case $1 in
  q0) cat <<EOF
SET 'parallelism.default' = '$2';
$src
CREATE TABLE sink (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, payPlatform INT,
  provinceId INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM payment_msg;
EOF
  ;;
  payments) cat <<EOF
SET 'parallelism.default' = '$2';
$src
CREATE TABLE sink (province_id INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  pay_amount DOUBLE) WITH ('connector' = 'filesystem', 'path' = '$out', 'format' = 'json');
INSERT INTO sink SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
EOF
  ;;
  esac
}

# One run: "cpu wall rss_mb rows".
one() { # $1: query, $2: workers
  local sql=$work/$1-$2.sql out=$work/out-$1-$2
  rm -rf "$out"
  write "$1" "$2" >"$sql"
  /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$dipper" run -q "$sql" >/dev/null 2>"$work/err" ||
    { echo "run of $1 on $2 failed: $(tail -3 "$work/err")" >&2; exit 1; }
  grep -q "runs on one thread" "$work/err" && { echo "$1 on $2: $(cat "$work/err")" >&2; exit 1; }
  local rows=-
  [ -d "$out" ] && rows=$(cat "$out"/*.json 2>/dev/null | wc -l)
  read -r u s e m <"$work/time"
  echo "$(echo "$u + $s" | bc) $e $((m / 1024)) $rows"
}

control() {
  local t0 t1 t2
  t0=$(date +%s%N)
  bash -c 'for ((i = 0; i < 300000; i++)); do :; done'
  t1=$(date +%s%N)
  bash -c 'for ((i = 0; i < 300000; i++)); do :; done' &
  bash -c 'for ((i = 0; i < 300000; i++)); do :; done'
  wait
  t2=$(date +%s%N)
  # two loops in the time of one: 2x
  echo "control ($1): one loop $(((t1 - t0) / 1000000)) ms, two at once $(((t2 - t1) / 1000000)) ms: $(echo "scale=2; 2 * ($t1 - $t0) / ($t2 - $t1)" | bc)x"
}

median() { sort -n -k2 | sed -n "$(((runs + 1) / 2))p"; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
control before
printf '| query | 1 worker: CPU s / wall s / RSS MB | 2 workers: CPU s / wall s / RSS MB | wall speedup | CPU x | rows out (both) |\n|---|---|---|---|---|---|\n'
for q in q0 payments; do
  : >"$work/r1"
  : >"$work/r2"
  for _ in $(seq "$runs"); do
    one "$q" 1 >>"$work/r1"
    one "$q" 2 >>"$work/r2"
  done
  read -r c1 w1 m1 rows1 < <(median <"$work/r1")
  read -r c2 w2 m2 rows2 < <(median <"$work/r2")
  [ "$rows1" = "$rows2" ] || { echo "$q: $rows1 rows on 1 worker, $rows2 on 2" >&2; exit 1; }
  echo "| $q | $c1 / $w1 / $m1 | $c2 / $w2 / $m2 | $(echo "scale=2; $w1 / $w2" | bc)x | $(echo "scale=2; $c2 / $c1" | bc)x | $rows1 |"
done
control after

# Idle: q0 unbounded over an empty topic of 4 partitions for 5 s, then
# SIGINT: the CPU of a run that waits on its splits' wake-up pipes (a split
# whose pipe stayed readable would spin, planning again and again).
"$tool" create "$bs" "$topic-idle" 4
for w in 1 2; do
  sed "s/'topic' = '$topic'/'topic' = '$topic-idle'/; s/, 'scan.bounded.mode' = 'latest-offset'//" \
    "$work/q0-$w.sql" >"$work/idle-$w.sql"
  /usr/bin/time -f "%U %S %e" -o "$work/time" "$dipper" run -q "$work/idle-$w.sql" >/dev/null 2>"$work/err" &
  pid=$!
  sleep 5
  kill -INT "$(pgrep -P "$pid" -x dipper || echo "$pid")" 2>/dev/null || true
  wait "$pid" || true
  read -r u s e < <(tail -1 "$work/time") # after "Command terminated by signal" or the status
  echo "idle on $w worker(s): $(echo "$u + $s" | bc) s CPU in $e s"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
