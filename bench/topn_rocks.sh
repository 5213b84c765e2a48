#!/usr/bin/env bash
# topn_rocks.sh [ROWS] [PARTITIONS] — the update-mode Top-N (ROW_NUMBER() ...
# <= 10 per partition, the rank emitted, no window) in memory and over
# RocksDB ('state.backend' = 'rocksdb', exec/topn_rocks.c), side by side.
#
# The input: ROWS JSON rows {k, item, x} in 20 files, k uniform over
# PARTITIONS partitions, x random, read as a stream (a filesystem source with
# 'source.monitor-interval', so the plan is a stream and the Top-N runs in
# update mode; 'dipper.trigger' = 'available-now' ends the run once the files
# are read) in micro-batches of 20,000 rows into a blackhole sink.  The
# nexmark bench's source is bounded (its 'events.num'), which would make the
# Top-N rank once at the end: not this operator.  Each backend runs RUNS
# times (default 1); printed: CPU s (user + system, every thread), wall s,
# peak RSS and the rows out, which must be the same in every run.
# Backends: hashmap; rocksdb (32 MB write-back cache, the default); rocksdb
# with a 1 MB cache (the option's most, for now: 1,000,000); rocksdb with a one-byte cache (every batch writes its
# changed partitions and the next reads them back).
#   scripts/build release && bench/topn_rocks.sh 2000000 200000
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dipper=${DIPPER:-$root/build/dipper}
rows=${1:-2000000} parts=${2:-200000} runs=${RUNS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/topn-rocks-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
python3 - "$work/in" "$rows" "$parts" <<'PY'
import json, random, sys
out, rows, parts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(7)
per = (rows + 19) // 20
n = 0
for f in range(20):
    with open(f"{out}/f{f:03d}.json", "w") as fh:
        for _ in range(min(per, rows - n)):
            fh.write(json.dumps({"k": rnd.randrange(parts), "item": f"i{n}", "x": rnd.randrange(1 << 30)}) + "\n")
            n += 1
PY
run() { # $1: label, $2: extra SET lines
  cat >"$work/q.sql" <<SQL
$2
SET 'dipper.max-batch-rows' = '20000';
SET 'dipper.trigger' = 'available-now';
SET 'dipper.output-mode' = 'update';
CREATE TABLE src (k BIGINT, item STRING, x BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'json',
  'source.monitor-interval' = '1 s');
CREATE TABLE dst (k BIGINT, rn BIGINT, item STRING, x BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT k, rn, item, x FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM src) WHERE rn <= 10;
SQL
  for _ in $(seq 1 "$runs"); do
    /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$dipper" run "$work/q.sql" >"$work/out" 2>&1 ||
      { tail -5 "$work/out"; exit 1; }
    read -r u s e m <"$work/time"
    out=$(grep -o '[0-9]* rows out' "$work/out" | tail -1)
    batches=$(grep -o 'after [0-9]* batches' "$work/out" | tail -1)
    printf '%-22s CPU %6.2f s  wall %6.2f s  peak RSS %5d MB  %s, %s\n' "$1" \
      "$(echo "$u + $s" | bc)" "$e" $((m / 1024)) "$out" "$batches"
  done
}
echo "topn_rocks: $rows rows, $parts partitions, top 10 each; load $(cut -d' ' -f1 /proc/loadavg)"
run hashmap ""
run "rocksdb" "SET 'state.backend' = 'rocksdb';"
run "rocksdb, 1 MB cache" "SET 'state.backend' = 'rocksdb';
SET 'dipper.rocksdb.aggregate-cache-bytes' = '1000000';"
run "rocksdb, 1-byte cache" "SET 'state.backend' = 'rocksdb';
SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';"
