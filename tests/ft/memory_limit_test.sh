#!/usr/bin/env bash
# memory_limit_test.sh DIPPER WORKDIR [join|aggregate] — a join (default) or
# an aggregation whose state is several times the memory the process may
# use, with 'state.backend' = 'rocksdb'.
#
# aggregate: a TUMBLE window of an hour over N keys, one row each, every
# group's LISTAGG holding the row's 2,000 bytes of padding, so that the
# groups (about N x 2 KB) wait in the state until a last row two hours on
# moves the watermark past the window (its own window stays open); the
# check is the same (N rows, each key
# once, its padding intact).
#
# A regular join (no time bound: both sides kept whole until the input
# ends) of two streaming readings of the same N keys, each row carrying
# 2,000 bytes of padding made from its key, runs in a memory cgroup whose
# limit is about a quarter of the state (cgroup v1's memory.limit_in_bytes,
# or v2's memory.max, in a child of the cgroup this script runs in).  It
# must finish with the exact answer: N rows, each key once, its padding
# read back intact (checked by the query itself), compared with seq.  The
# same query with the state in memory, under the same limit, must be
# killed: the limit is real.  The limit, the peak memory of the run and the
# peak size of the state on disk are printed.
#
# The limit cannot be set (no memory cgroup, not root, a read-only
# hierarchy): the test fails, it does not skip.  An ASan build needs more
# memory for the same work (shadow memory, a quarantine cut to 16 MB here),
# so it gets a larger limit and a larger state.
set -euo pipefail
dipper=$1 work=$2 what=${3:-join}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/in" "$work/tmp"

# (grep without -q: it reads to the end, so readelf gets no SIGPIPE under pipefail)
if readelf -d "$dipper" 2>/dev/null | grep libasan >/dev/null; then
  limit_mb=${LIMIT_MB:-300}
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
else
  limit_mb=${LIMIT_MB:-192}
fi
pad=2000
# keys per side: the state (2 sides x N rows x ~pad bytes) about 4x the limit
# (the aggregation: N groups of ~pad bytes)
sides=2
[ "$what" = aggregate ] && sides=1
n=${ROWS:-$((limit_mb * 1024 * 1024 * 4 / (sides * (pad + 48))))}

# ---- the cgroup ----
cg=""
cleanup() {
  [ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true
  [ -n "$cg" ] && [ -d "$cg" ] && rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || fail "needs root to make a memory cgroup (running as uid $(id -u))"
if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
  cg=/sys/fs/cgroup/memory${own%/}/dipper-memtest-$$
  limit_file=memory.limit_in_bytes peak_file=memory.max_usage_in_bytes
  mkdir "$cg" || fail "cannot make the cgroup $cg"
  echo $((limit_mb << 20)) >"$cg/memory.limit_in_bytes" || fail "cannot set $cg/memory.limit_in_bytes"
  # no swap to fall back on (where the kernel counts it)
  if [ -f "$cg/memory.memsw.limit_in_bytes" ]; then
    echo $((limit_mb << 20)) >"$cg/memory.memsw.limit_in_bytes" ||
      fail "cannot set $cg/memory.memsw.limit_in_bytes"
  fi
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  own=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
  cg=/sys/fs/cgroup${own%/}/dipper-memtest-$$
  limit_file=memory.max peak_file=memory.peak
  mkdir "$cg" || fail "cannot make the cgroup $cg (is the memory controller enabled in ${cg%/*}/cgroup.subtree_control?)"
  echo $((limit_mb << 20)) >"$cg/memory.max" || fail "cannot set $cg/memory.max"
  [ -f "$cg/memory.swap.max" ] && { echo 0 >"$cg/memory.swap.max" || fail "cannot set $cg/memory.swap.max"; }
else
  fail "no memory cgroup controller under /sys/fs/cgroup (v1 memory/ or v2 with memory)"
fi
got=$(cat "$cg/$limit_file")
[ "$got" = $((limit_mb << 20)) ] || fail "the limit reads back as $got, not $((limit_mb << 20))"

# Run "$@" inside the cgroup: the shell joins it, then becomes the command.
in_cgroup() {
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# ---- the input and the query ----
if [ "$what" = aggregate ]; then
  # and a last row two hours on, whose watermark closes the others' window
  seq 1 "$n" | awk '{ print $1 ",2024-01-01 00:00:00" } END { print NR + 1 ",2024-01-01 02:00:00" }' |
    split -l 10000 -d -a 4 --additional-suffix=.csv - "$work/in/f"
else
  seq 1 "$n" | split -l 10000 -d -a 4 --additional-suffix=.csv - "$work/in/f"
fi
write_agg_sql() { # $1 file, $2 'rocksdb' or 'hashmap', $3 sink folder
  cat >"$1" <<EOF
SET 'state.backend' = '$2';
SET 'dipper.max-batch-rows' = '2000';
SET 'dipper.trigger' = 'available-now';
CREATE TABLE g (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'csv',
  'source.monitor-interval' = '1 s');
CREATE TABLE out (k BIGINT, rk BIGINT, intact BOOLEAN)
WITH ('connector' = 'filesystem', 'path' = '$3', 'format' = 'csv');
INSERT INTO out
SELECT k, c * k, l = RPAD(CAST(k AS STRING), $pad, 'l') FROM (
  SELECT k, COUNT(*) AS c, LISTAGG(RPAD(CAST(k AS STRING), $pad, 'l'), ',') AS l
  FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(ts), INTERVAL '1' HOUR))
  GROUP BY k, window_start, window_end);
EOF
}
write_sql() { # $1 file, $2 'rocksdb' or 'hashmap', $3 sink folder
  if [ "$what" = aggregate ]; then
    write_agg_sql "$@"
    return
  fi
  cat >"$1" <<EOF
SET 'state.backend' = '$2';
SET 'dipper.max-batch-rows' = '2000';
SET 'dipper.trigger' = 'available-now';
CREATE TABLE gl (k BIGINT) WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'csv',
  'source.monitor-interval' = '1 s');
CREATE TABLE gr (k BIGINT) WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'csv',
  'source.monitor-interval' = '1 s');
CREATE VIEW l AS SELECT k, RPAD(CAST(k AS STRING), $pad, 'l') AS pad FROM gl;
CREATE VIEW r AS SELECT k, RPAD(CAST(k AS STRING), $pad, 'r') AS pad FROM gr;
CREATE TABLE out (k BIGINT, rk BIGINT, intact BOOLEAN)
WITH ('connector' = 'filesystem', 'path' = '$3', 'format' = 'csv');
INSERT INTO out
SELECT l.k, r.k, l.pad = RPAD(CAST(r.k AS STRING), $pad, 'l') AND r.pad = RPAD(CAST(l.k AS STRING), $pad, 'r')
FROM l JOIN r ON l.k = r.k;
EOF
}
write_sql "$work/rocks.sql" rocksdb "$work/out-rocks"
write_sql "$work/memory.sql" hashmap "$work/out-memory"
echo "$what: limit ${limit_mb} MB ($cg/$limit_file); $n keys a side, $pad bytes of padding a row:" \
  "about $(((sides * n * (pad + 48)) >> 20)) MB of state"

# ---- RocksDB: finishes, exact ----
peak_state=0
( while :; do du -sb "$work/tmp" 2>/dev/null | cut -f1; sleep 0.5; done ) >"$work/du.log" &
sampler=$!
start=$(date +%s)
if ! TMPDIR="$work/tmp" in_cgroup "$dipper" run -q "$work/rocks.sql" >"$work/rocks.log" 2>&1; then
  tail -n 5 "$work/rocks.log" >&2
  dmesg 2>/dev/null | grep -i "memory cgroup out of memory" | tail -n 1 >&2 || true
  fail "the rocksdb run did not finish under the limit (status above)"
fi
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=""
peak_state=$(sort -n "$work/du.log" | tail -n 1)
peak_mem=$(cat "$cg/$peak_file" 2>/dev/null || echo 0)
echo "rocksdb: finished in $(($(date +%s) - start)) s; peak memory of the cgroup (page cache included) $((peak_mem >> 20)) MB of ${limit_mb} MB;" \
  "peak state on disk $((peak_state >> 20)) MB ($((peak_state / (limit_mb << 20)))x the limit)"
[ "$peak_state" -ge $((3 * (limit_mb << 20))) ] ||
  fail "the state on disk peaked at $((peak_state >> 20)) MB: not several times the ${limit_mb} MB limit"
cat "$work"/out-rocks/*.csv | sort -t, -k1,1n >"$work/got.csv"
seq 1 "$n" | awk '{ print $1 "," $1 ",true" }' >"$work/want.csv"
if ! cmp -s "$work/got.csv" "$work/want.csv"; then
  echo "rows: $(wc -l <"$work/got.csv") of $n; first differences:" >&2
  diff "$work/want.csv" "$work/got.csv" | head -n 5 >&2
  fail "the rocksdb $what's answer is not exact"
fi
echo "rocksdb: $n rows, exact"

# ---- in memory, same limit: killed ----
if TMPDIR="$work/tmp" in_cgroup "$dipper" run -q "$work/memory.sql" >"$work/memory.log" 2>&1; then
  fail "the in-memory $what finished under the ${limit_mb} MB limit: the limit does not bind"
else
  echo "in memory: stopped under the limit (status $?), as it must"
fi
echo "PASS"
