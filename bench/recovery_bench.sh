#!/usr/bin/env bash
# recovery_bench.sh DIPPER [KEYS] [BACKEND...] — the time a restart after a
# kill takes, per GB of state, with each state backend (hashmap, rocksdb).
#
# A GROUP BY k over KEYS distinct keys (default 5,000,000; COUNT and SUM per
# key, kept for ever, update mode into a blackhole sink) reads KEYS rows of
# CSV (100 files) through a streaming filesystem source (its folder watched:
# source.monitor-interval), with a checkpoint
# folder.  Once the input is consumed (the process's CPU time stops growing)
# it is killed with SIGKILL.  Then a file of one row is added and `dipper
# run` (trigger available-now) is timed: it restores the state (in memory:
# the state chain, full state and deltas, read back into the hash table;
# RocksDB: the checkpoint's files copied or hard-linked into a fresh live
# copy and opened, the killed run's live copy removed first), runs the batch
# of that row and writes its checkpoint.  The same query on a fresh folder
# over that one file alone (no state) is the fixed cost, subtracted.  Printed per backend: the state's
# size on disk (the state files the restart reads; RocksDB: its last
# checkpoint folder), the peak RSS of the restart, the restart's wall and
# CPU time less the fixed cost, and CPU seconds per GB of each size (the
# wall time follows the machine's load).
set -euo pipefail
dipper=$1
keys=${2:-5000000}
shift $(($# >= 2 ? 2 : $#))
backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(hashmap rocksdb)
work=$(mktemp -d "${TMPDIR:-/tmp}/dipper-recovery-XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/in"
seq 1 "$keys" | awk '{ print $1 "," ($1 % 1000) }' >"$work/all.csv"
split -n l/100 -d -a 3 --additional-suffix=.csv "$work/all.csv" "$work/in/f"
rm "$work/all.csv"

write_sql() { # $1 file, $2 backend, $3 checkpoint folder, $4 trigger line, [$5 input folder]
  cat >"$1" <<SQL
SET 'state.backend' = '$2';
SET 'execution.checkpointing.dir' = '$3';
$4
CREATE TABLE src (k BIGINT, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = '${5:-$work/in}', 'format' = 'csv',
  'source.monitor-interval' = '1 s');
CREATE TABLE dst (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
SQL
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo -1; }

# "wall cpu rss_kb" of one run of $1
timed_run() {
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$dipper" run -q "$1" >/dev/null 2>>"$work/stderr"
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/time"
}

printf '%-8s %10s %12s %10s %10s %10s %14s %14s\n' backend keys "state MB" "RSS MB" "wall s" "CPU s" \
  "CPU s/GB disk" "CPU s/GB RSS"
for be in "${backends[@]}"; do
  rm -f "$work/in/zz"*.csv
  ck="$work/ck-$be"
  write_sql "$work/run.sql" "$be" "$ck" ""
  write_sql "$work/restart.sql" "$be" "$ck" "SET 'dipper.trigger' = 'available-now';"
  write_sql "$work/fresh.sql" "$be" "$work/fresh-$be" "SET 'dipper.trigger' = 'available-now';" "$work/in1"
  # the first run: until its CPU time stops growing, then SIGKILL
  "$dipper" run -q "$work/run.sql" >/dev/null 2>>"$work/stderr" &
  pid=$!
  last=-2 idle=0
  while [ "$idle" -lt 3 ]; do
    sleep 1
    now=$(cpu_ticks "$pid")
    [ "$now" -ge 0 ] || { echo "the first run ($be) ended: $(tail -3 "$work/stderr")" >&2; exit 1; }
    if [ $((now - last)) -le 3 ]; then idle=$((idle + 1)); else idle=0; fi
    last=$now
  done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  if [ "$be" = rocksdb ]; then
    r=$(ls -d "$ck"/dst/rocksdb/agg-0/[0-9]* | sort -t/ -k1 -V | tail -1)
    size=$(du -sb "$r" | cut -f1)
  else
    size=$(du -sb "$ck"/dst/state | cut -f1)
  fi
  echo "$keys,1" >"$work/in/zz000.csv"
  mkdir -p "$work/in1"
  cp "$work/in/zz000.csv" "$work/in1/"
  read -r wall cpu rss <<<"$(timed_run "$work/restart.sql")"
  read -r fwall fcpu _ <<<"$(timed_run "$work/fresh.sql")"
  awk -v be="$be" -v k="$keys" -v size="$size" -v rss="$rss" -v w="$wall" -v c="$cpu" \
    -v fw="$fwall" -v fc="$fcpu" 'BEGIN {
      dw = w - fw; dc = c - fc; if (dw < 0) dw = 0; if (dc < 0) dc = 0
      printf "%-8s %10d %12.1f %10.1f %10.2f %10.2f %14.2f %14.2f\n", be, k, size / 1048576,
        rss / 1024, dw, dc, dc / (size / 1073741824), dc / (rss / 1048576)
    }'
  rm -rf "$ck" "$work/fresh-$be"
done
