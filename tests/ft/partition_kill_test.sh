#!/usr/bin/env bash
# partition_kill_test.sh DIPPER WORKDIR — a PARTITIONED BY filesystem sink
# (connectors/fs_partition.c) killed with SIGKILL at random points.
#
# 30,001 JSON rows in 10 files (a streaming filesystem source capped at 500
# rows a batch: ~60 micro-batches) go to a sink PARTITIONED BY (p), p being
# 'k=<id % 7>' (escaped on disk as p=k%3D<n>) or NULL for every fifth id
# (the default partition), with the success-file commit policy.  The run is
# killed $KILLS times (default 15) after a random time, each time started
# again on the same checkpoint folder, then run to the end.  Then, in every
# partition folder: the rows are exactly that partition's (each once, none
# lost, none in another folder, the partition column absent from the rows),
# a _SUCCESS file is there, and no temporary file is left.  KILL_SEED=N
# replays the kills.
set -euo pipefail
dipper=$1 work=$2
kills=${KILLS:-15}
seed=${KILL_SEED:-$RANDOM}
RANDOM=$seed
rm -rf "$work"
mkdir -p "$work/in"
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$work/in" <<'EOF'
import json, sys
n = 0
for f in range(10):
    with open(f"{sys.argv[1]}/f{f:03d}.json", "w") as fh:
        for _ in range(3000 + (f == 9)):
            fh.write(json.dumps({"id": n, "k": n % 7, "v": n % 100}) + "\n")
            n += 1
EOF

cat >"$work/p.sql" <<EOF
SET 'execution.checkpointing.dir' = '$work/ck';
SET 'dipper.max-batch-rows' = '500';
SET 'dipper.trigger' = 'available-now';
CREATE TABLE src (id BIGINT, k INT, v INT)
WITH ('connector' = 'filesystem', 'path' = '$work/in', 'format' = 'json');
CREATE TABLE dst (id BIGINT, v2 INT, p STRING) PARTITIONED BY (p)
WITH ('connector' = 'filesystem', 'path' = '$work/out', 'format' = 'json',
  'sink.partition-commit.policy.kind' = 'success-file');
INSERT INTO dst SELECT id, v * 2,
  CASE WHEN id % 5 = 0 THEN CAST(NULL AS STRING) ELSE CONCAT('k=', CAST(k AS STRING)) END FROM src;
EOF

echo "kill seed $seed, $kills kills"
for i in $(seq 1 "$kills"); do
  "$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" &
  pid=$!
  sleep "$(printf '0.%02d' $((RANDOM % 95 + 5)))"
  if [ $((RANDOM % 3)) -eq 0 ]; then sleep 0.5; fi
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
"$dipper" run -q "$work/p.sql" >/dev/null 2>>"$work/stderr" || fail "the last run failed: $(tail -5 "$work/stderr")"

python3 - "$work/out" "$seed" <<'EOF'
import collections, json, os, sys
out, seed = sys.argv[1], sys.argv[2]
want = collections.defaultdict(list)
for n in range(30001):
    folder = "p=__DEFAULT_PARTITION__" if n % 5 == 0 else f"p=k%3D{n % 7}"
    want[folder].append(json.dumps({"id": n, "v2": n % 100 * 2}, sort_keys=True))
folders = sorted(d for d in os.listdir(out) if not d.startswith("."))
if folders != sorted(want):
    sys.exit(f"FAIL: folders {folders}, expected {sorted(want)} (seed {seed})")
total = 0
for folder in folders:
    names = os.listdir(os.path.join(out, folder))
    temps = [n for n in names if n.startswith(".")]
    if temps:
        sys.exit(f"FAIL: {folder}: temporary files left: {temps} (seed {seed})")
    if "_SUCCESS" not in names:
        sys.exit(f"FAIL: {folder}: no _SUCCESS (seed {seed})")
    got = []
    for name in names:
        if name.startswith("part-"):
            with open(os.path.join(out, folder, name)) as fh:
                got += [json.dumps(json.loads(line), sort_keys=True) for line in fh]
    if sorted(got) != sorted(want[folder]):
        extra = len(got) - len(set(got))
        missing = len(set(want[folder]) - set(got))
        sys.exit(f"FAIL: {folder}: {len(got)} rows, {len(want[folder])} expected: "
                 f"{missing} missing, {extra} doubled (seed {seed})")
    total += len(got)
print(f"partitioned: {total} rows exact in {len(folders)} partitions, each committed")
EOF
