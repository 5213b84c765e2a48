#!/usr/bin/env bash
# kill_test.sh DIPPER PIPELINE WORKDIR — fault tolerance of `dipper run`.
#
# project, window, join, join_rocksdb, dedup, window_rocksdb, dedup_rocksdb,
# window_values_rocksdb, session_rocksdb, distinct_rocksdb:
# 60,001 JSON rows in 20 files (a streaming
# filesystem source capped at 500 rows a batch: ~120 micro-batches) through a
# projection, a TUMBLE 10 s SUM/COUNT per key, an interval join with a second
# reading of the files (join_rocksdb: the same with 'state.backend' =
# 'rocksdb', its state in RocksDB checkpoints), or a deduplication (ROW_NUMBER() = 1)
# (window_rocksdb, dedup_rocksdb: the same with 'state.backend' = 'rocksdb';
# window_values_rocksdb: a TUMBLE 10 s COUNT(DISTINCT), COUNT and MAX of a
# string per key over RocksDB; session_rocksdb: a SESSION window (gap 1 s)
# per key over RocksDB of the rows whose id mod 1000 is below 700, so that
# each key's rows make a session per 10 s, 7 s long, closed by the 3 s
# without rows that follows; distinct_rocksdb: a TUMBLE 60 s per key of
# COUNT(DISTINCT id) (each row a new value: ~860 per group over 12 batches),
# COUNT(DISTINCT v) and SUM(DISTINCT v) over RocksDB without its write-back
# cache, so that groups and their (group, value) entries reach RocksDB every
# batch; window_par2, join_par2: the same on 2 workers,
# 'parallelism.default' = '2', each worker reading the files its names hash to), into a
# filesystem sink with a checkpoint folder.  The run is killed with SIGKILL $KILLS times (default
# 20) after a random time, each time started again on the same folder, then
# run to the end (trigger available-now).  The rows in the sink must be the
# exact answer, computed here in Python: nothing lost, nothing doubled,
# nothing wrong.  The kills' seed is printed; KILL_SEED=N replays it.
#
# edges: a clean stop and restart, a damaged commit record (the one before it
# is used), a damaged state file (refused with its path), a query changed so
# that its state no longer fits (refused, naming the change), and a second
# run on a folder in use (refused).
set -euo pipefail
dipper=$1 pipeline=$2 work=$3
kills=${KILLS:-20}
seed=${KILL_SEED:-$RANDOM}
RANDOM=$seed
rm -rf "$work"
mkdir -p "$work/in"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 60,000 rows 10 ms apart (10 minutes of event time) and one row an hour
# later, whose watermark closes every window of the others.
python3 - "$work/in" <<'EOF'
import json, sys
out = sys.argv[1]
n = 0
for f in range(20):
    with open(f"{out}/f{f:03d}.json", "w") as fh:
        for _ in range(3000):
            ms = n * 10
            ts = f"2024-01-01 00:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
            fh.write(json.dumps({"id": n, "k": n % 7, "v": n % 100, "d": n // 2, "ts": ts}) + "\n")
            n += 1
        if f == 19:
            fh.write(json.dumps({"id": n, "k": 0, "v": 1, "d": 30000, "ts": "2024-01-01 01:00:00.000"}) + "\n")
EOF

write_sql() { # $1: file, $2: the query's body
  cat >"$1" <<EOF
SET 'execution.checkpointing.dir' = '$work/ck';
SET 'dipper.max-batch-rows' = '500';
SET 'dipper.trigger' = 'available-now';
CREATE TABLE src (id BIGINT, k INT, v INT, d INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'json',
  'source.monitor-interval' = '1 s');
$2
EOF
}

# An interval join of the stream with a second reading of the same files.
join_sql="CREATE TABLE src2 (id BIGINT, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'json',
  'source.monitor-interval' = '1 s');
CREATE TABLE dst (id BIGINT, k INT, v2 INT)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT a.id, a.k, a.v + b.v FROM src a JOIN src2 b
ON a.id = b.id AND b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts + INTERVAL '1' SECOND;"

# The first row of each d: each pair of rows 10 ms apart shares one (the
# even ids and the last row pass; the state of a key goes once the watermark
# passes its first row).
dedup_sql="CREATE TABLE dst (id BIGINT, k INT, v2 INT)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT id, k, v * 2 FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY d ORDER BY ts ASC) AS rn FROM src)
WHERE rn = 1;"

project_sql="CREATE TABLE dst (id BIGINT, k INT, v2 INT)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT id, k, v * 2 FROM src;"

window_sql() { # $1: the window size in seconds
  echo "CREATE TABLE dst (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), s BIGINT, c BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT k, window_start, window_end, SUM(CAST(v AS BIGINT)), COUNT(*)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '$1' SECOND))
GROUP BY k, window_start, window_end;"
}

# window_values_rocksdb: aggregates whose state is variable-length — a
# DISTINCT count and the greatest id as a string — over RocksDB.
values_sql="CREATE TABLE dst (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), s BIGINT, c BIGINT, m STRING)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT k, window_start, window_end, COUNT(DISTINCT v), COUNT(*),
  MAX(CAST(id AS STRING))
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;"

distinct_sql="CREATE TABLE dst (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, d BIGINT, s BIGINT)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT k, window_start, window_end, COUNT(DISTINCT id), COUNT(DISTINCT v),
  SUM(DISTINCT CAST(v AS BIGINT))
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '60' SECOND))
GROUP BY k, window_start, window_end;"

# session_rocksdb: sessions that grow batch by batch (a key's rows are 70 ms
# apart, a batch is 5 s of event time) and close as the watermark passes
# their end, their keys moving in RocksDB's time index.
session_sql="CREATE TEMPORARY VIEW gapped AS SELECT * FROM src WHERE MOD(id, 1000) < 700;
CREATE TABLE dst (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), s BIGINT, c BIGINT, m STRING)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json');
INSERT INTO dst SELECT k, window_start, window_end, SUM(CAST(v AS BIGINT)), COUNT(*),
  MAX(CAST(id AS STRING))
FROM TABLE(SESSION(TABLE gapped PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY k, window_start, window_end;"

# The exact answer of each pipeline, as sorted JSON lines.
expected() {
  python3 - "$1" <<'EOF'
import json, sys
rows = [{"id": n, "k": n % 7, "v": n % 100, "ms": n * 10} for n in range(60000)]
rows.append({"id": 60000, "k": 0, "v": 1, "ms": 3600 * 1000})
def ts(ms):
    s = f"2024-01-01 {ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}"
    return s + (f".{ms % 1000:03d}" if ms % 1000 else "")
out = []
if sys.argv[1] in ("project", "join", "join_rocksdb", "join_par2"):
    out = [{"id": r["id"], "k": r["k"], "v2": r["v"] * 2} for r in rows]
elif sys.argv[1] in ("dedup", "dedup_rocksdb"):
    out = [{"id": r["id"], "k": r["k"], "v2": r["v"] * 2} for r in rows if r["id"] % 2 == 0]
elif sys.argv[1] == "session_rocksdb":
    sessions = {}
    for r in rows[:-1]:  # the last row's session stays open
        if r["id"] % 1000 >= 700:
            continue
        g = sessions.setdefault((r["k"], r["id"] // 1000), [r["ms"], 0, 0, 0, ""])
        g[1] = r["ms"] + 1000
        g[2] += r["v"]
        g[3] += 1
        g[4] = max(g[4], str(r["id"]))
    out = [{"k": k, "ws": ts(a), "we": ts(b), "s": s, "c": c, "m": m}
           for (k, _), (a, b, s, c, m) in sessions.items()]
elif sys.argv[1] == "distinct_rocksdb":
    groups = {}
    for r in rows[:-1]:  # the last row's window stays open
        w = r["ms"] // 60000 * 60000
        g = groups.setdefault((r["k"], w), [set(), set()])
        g[0].add(r["id"])
        g[1].add(r["v"])
    out = [{"k": k, "ws": ts(w), "we": ts(w + 60000), "n": len(a), "d": len(b), "s": sum(b)}
           for (k, w), (a, b) in groups.items()]
elif sys.argv[1] == "window_values_rocksdb":
    groups = {}
    for r in rows[:-1]:  # the last row's window stays open
        w = r["ms"] // 10000 * 10000
        g = groups.setdefault((r["k"], w), [set(), 0, ""])
        g[0].add(r["v"])
        g[1] += 1
        g[2] = max(g[2], str(r["id"]))
    out = [{"k": k, "ws": ts(w), "we": ts(w + 10000), "s": len(s), "c": c, "m": m}
           for (k, w), (s, c, m) in groups.items()]
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

# What the sink holds, normalised the same way (".000" millis dropped).
actual() {
  python3 - "$work/out" <<'EOF'
import glob, json, os, sys
lines = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "part-*"))):
    with open(f) as fh:
        for line in fh:
            o = json.loads(line)
            for key in ("ws", "we"):
                if key in o and o[key].endswith(".000"):
                    o[key] = o[key][:-4]
            lines.append(json.dumps(o, sort_keys=True))
for line in sorted(lines):
    print(line)
EOF
}

compare() {
  expected "$1" >"$work/expected"
  actual >"$work/actual"
  local want got
  want=$(wc -l <"$work/expected")
  got=$(wc -l <"$work/actual")
  if ! cmp -s "$work/expected" "$work/actual"; then
    local lost dup
    lost=$(comm -23 "$work/expected" "$work/actual" | wc -l)
    dup=$(sort "$work/actual" | uniq -d | wc -l)
    fail "$1: $got rows in the sink, $want expected: $lost missing or wrong, $dup doubled (seed $seed; see $work)"
  fi
  echo "$1: $got rows exact"
}

run_killed() { # $1: sql file; kills at random points, then a run to the end
  local sql=$1 i pid
  for i in $(seq 1 "$kills"); do
    "$dipper" run -q "$sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    # 0.05 to 1.5 s: before the first batch, in the middle, at the end
    sleep "$(printf '0.%02d' $((RANDOM % 95 + 5)))"
    if [ $((RANDOM % 3)) -eq 0 ]; then sleep 0.5; fi
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  "$dipper" run -q "$sql" >/dev/null 2>>"$work/stderr" || fail "the last run failed: $(tail -5 "$work/stderr")"
}

case $pipeline in
project | window | join | join_rocksdb | dedup | window_rocksdb | dedup_rocksdb | window_values_rocksdb | session_rocksdb | distinct_rocksdb | window_par2 | join_par2)
  echo "kill seed $seed, $kills kills"
  case $pipeline in
  project) write_sql "$work/p.sql" "$project_sql" ;;
  window) write_sql "$work/p.sql" "$(window_sql 10)" ;;
  join) write_sql "$work/p.sql" "$join_sql" ;;
  join_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
$join_sql" ;;
  dedup) write_sql "$work/p.sql" "$dedup_sql" ;;
  window_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
$(window_sql 10)" ;;
  dedup_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
$dedup_sql" ;;
  window_values_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
$values_sql" ;;
  session_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
$session_sql" ;;
  distinct_rocksdb) write_sql "$work/p.sql" "SET 'state.backend' = 'rocksdb';
SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';
$distinct_sql" ;;
  window_par2) write_sql "$work/p.sql" "SET 'parallelism.default' = '2';
$(window_sql 10)" ;;
  join_par2) write_sql "$work/p.sql" "SET 'parallelism.default' = '2';
$join_sql" ;;
  esac
  if [[ $pipeline == *_par2 ]]; then
    # On the workers, not on one thread with a note (notes go to stderr
    # without -q, at open): a first run, killed once it has said anything.
    "$dipper" run "$work/p.sql" >"$work/first.out" 2>"$work/first.err" &
    pid=$!
    for _ in $(seq 300); do [ -s "$work/first.out" ] || [ -s "$work/first.err" ] && break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ -s "$work/first.out" ] || [ -s "$work/first.err" ] || fail "the first run said nothing in 30 s"
    if grep -q "runs on one thread" "$work/first.err"; then fail "not on workers: $(cat "$work/first.err")"; fi
  fi
  if [ "$pipeline" = join_rocksdb ]; then
    # A second run on the folder while one runs is refused, and leaves the
    # running one's RocksDB folder alone; the running one is then killed.
    grep -v available-now "$work/p.sql" >"$work/p_forever.sql"
    "$dipper" run -q "$work/p_forever.sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    for _ in $(seq 600); do [ -e "$work/ck/dst/rocksdb/join-0/live/CURRENT" ] && break; sleep 0.1; done
    [ -e "$work/ck/dst/rocksdb/join-0/live/CURRENT" ] || fail "the first run opened no rocksdb state"
    if out=$("$dipper" run -q "$work/p.sql" 2>&1 >/dev/null); then fail "a second run was not refused"; fi
    echo "$out" | grep -q "in use by another running query" || fail "second writer: $out"
    [ -e "$work/ck/dst/rocksdb/join-0/live/CURRENT" ] ||
      fail "a refused second run removed the running one's rocksdb state"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  run_killed "$work/p.sql"
  compare "$pipeline"
  if [[ $pipeline == *_rocksdb ]]; then
    # RocksDB checkpoints go with the state files that name them (none is
    # left without one); the live copy goes when the query ends.
    case $pipeline in join_rocksdb) rk=join-0 ;; window_rocksdb | window_values_rocksdb | session_rocksdb | distinct_rocksdb) rk=agg-0 ;; *) rk=dedup-0 ;; esac
    rk="$work/ck/dst/rocksdb/$rk"
    [ -d "$rk" ] || fail "no rocksdb state in $rk"
    [ -e "$rk/$(ls "$work/ck/dst/state" | sort -n | tail -1)/CURRENT" ] ||
      fail "no rocksdb checkpoint for the last state file"
    for ck in $(ls "$rk"); do
      [ -e "$work/ck/dst/state/$ck" ] || fail "rocksdb checkpoint $ck outlived its state file"
    done
    [ "$(ls "$rk" | wc -l)" -le "$(ls "$work/ck/dst/state" | wc -l)" ] || fail "more rocksdb checkpoints than state files"
  fi
  # A run after the end reads nothing new and writes nothing more.
  "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" || fail "a run after the end failed"
  compare "$pipeline"
  if [[ $pipeline == *_par2 ]]; then
    # each worker wrote part files of its own, named by batch and worker
    ls "$work/out" | grep -q -- '-000\.json$' || fail "no part file of worker 0: $(ls "$work/out" | head -3)"
    ls "$work/out" | grep -q -- '-001\.json$' || fail "no part file of worker 1: $(ls "$work/out" | head -3)"
    # another number of workers is refused, naming both
    sed "s/'parallelism.default' = '2'/'parallelism.default' = '3'/" "$work/p.sql" >"$work/p3.sql"
    if out=$("$dipper" run -q "$work/p3.sql" 2>&1 >/dev/null); then fail "a run on 3 workers was not refused"; fi
    echo "$out" | grep -q "on 2 workers, and this run has 3" || fail "3 workers: $out"
    compare "$pipeline"
  fi
  ;;
edges)
  write_sql "$work/w.sql" "$(window_sql 10)"
  # Clean stops: three runs that each stop on their own part-way (SIGTERM).
  for i in 1 2 3; do
    "$dipper" run -q "$work/w.sql" >/dev/null 2>>"$work/stderr" &
    pid=$!
    sleep 0.4
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  # A second run on a folder in use is refused (the first, without
  # available-now, watches the folder until it is killed).
  grep -v available-now "$work/w.sql" >"$work/w_forever.sql"
  "$dipper" run -q "$work/w_forever.sql" >/dev/null 2>&1 &
  pid=$!
  sleep 1
  if out=$("$dipper" run -q "$work/w.sql" 2>&1 >/dev/null); then
    kill -9 "$pid" 2>/dev/null || true
    fail "a second run on the same checkpoint folder was not refused"
  fi
  echo "$out" | grep -q "in use by another running query" || fail "second writer: $out"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The newest commit record damaged: the one before it is used.
  newest=$(ls "$work/ck/dst/commits" | sort -n | tail -1)
  printf 'X' | dd of="$work/ck/dst/commits/$newest" bs=1 seek=30 conv=notrunc 2>/dev/null
  "$dipper" run -q "$work/w.sql" >/dev/null 2>>"$work/stderr" || fail "a damaged commit record was not passed over: $(tail -3 "$work/stderr")"
  compare window
  # A changed window: refused, naming what changed.
  write_sql "$work/w20.sql" "$(window_sql 20)"
  if out=$("$dipper" run -q "$work/w20.sql" 2>&1 >/dev/null); then fail "a changed window was accepted"; fi
  echo "$out" | grep -q "does not fit this one" || fail "changed window: $out"
  echo "$out" | grep -q "size=20 s" || fail "changed window, no new size named: $out"
  # A damaged state file: refused with its path.
  state=$(ls "$work/ck/dst/state" | sort -n | tail -1)
  commits=$(ls "$work/ck/dst/commits" | sort -n)
  size=$(stat -c %s "$work/ck/dst/state/$state")
  printf 'X' | dd of="$work/ck/dst/state/$state" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
  if out=$("$dipper" run -q "$work/w.sql" 2>&1 >/dev/null); then fail "a damaged state file was accepted"; fi
  echo "$out" | grep -q "state/$state' is damaged" || fail "damaged state: $out"
  echo "edges: clean stops exact, second writer refused, damaged commit passed over, changed query and damaged state refused"
  ;;
diskfull)
  # Checkpoint and sink on a 512 KB tmpfs: the run stops with a clear error
  # when the disk is full, leaves no temporary file, and once there is room
  # again a run ends with the exact answer.  Mounting needs root (as CI and
  # the developers' machines run): without it this fails, it does not skip.
  disk="$work/disk"
  mkdir -p "$disk"
  mount -t tmpfs -o size=512k tmpfs "$disk" || fail "cannot mount a tmpfs on $disk (root is needed)"
  trap 'umount "$disk" 2>/dev/null || true' EXIT
  write_sql "$work/p.sql" "$project_sql"
  sed -i "s|$work/ck|$disk/ck|; s|'path' = '$work/out'|'path' = '$disk/out'|" "$work/p.sql"
  if out=$("$dipper" run -q "$work/p.sql" 2>&1 >/dev/null); then fail "a full disk went unnoticed"; fi
  echo "$out" | grep -q "No space left on device" || fail "disk full: $out"
  leftovers=$(find "$disk" -name '*.tmp' -o -name '*.inprogress' | wc -l)
  [ "$leftovers" -eq 0 ] || fail "a full disk left $leftovers temporary files: $(find "$disk" -name '*.tmp' -o -name '*.inprogress')"
  mount -o remount,size=64m "$disk" || fail "cannot grow the tmpfs"
  "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" || fail "the run after the disk had room failed: $(tail -3 "$work/stderr")"
  ln -sfn "$disk/out" "$work/out"
  compare project
  echo "diskfull: stopped with '$(echo "$out" | head -1)', no temporary file left, exact after room was made"
  ;;
*) fail "unknown pipeline $pipeline" ;;
esac
