#!/usr/bin/env bash
# kill_test.sh DIPPER WORKDIR — `dipper run` from Kinesis to Kinesis killed
# with SIGKILL at random points and run again on the same checkpoint folder,
# against the emulator of scripts/kinesis-local run (DIPPER_KINESIS_ENDPOINT).
#
# The input: 4,000 JSON records {"id": n, "k": "k<n % 20>"} under partition
# key k<n % 20>, over 3 shards, put in four parts: one before the first run,
# the others between kills, and one shard split after the second kill (so the
# runs meet a closed parent and its children).  The query copies the input to
# an output stream, 150 rows a batch, trigger available-now, checkpointed.
# Killed $KILLS times (default 8) after a random 0.1 to 1.5 s, then run to
# the end; the output stream, read back raw, must hold every id (the sink is
# at-least-once: the doubled ones are counted and printed, and only batches
# cut short by a kill may double), nothing else, and per key in the order
# written for the first copy of each id; a run after the end writes nothing.
# The seed is printed; KILL_SEED=N replays it.
set -euo pipefail
dipper=$1 work=$2
kills=${KILLS:-8}
seed=${KILL_SEED:-$RANDOM}
RANDOM=$seed
endpoint=${DIPPER_KINESIS_ENDPOINT:?run me as scripts/kinesis-local run -- $0 ...}
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
echo "kill_test (kinesis): seed $seed, $kills kills"

tag="$$-$(date +%s)"
in_stream="ft-in-$tag" out_stream="ft-out-$tag"

# Plain API calls (curl signs them; the emulator does not check the signature).
api() { # api ACTION JSON
  curl -sS -f -X POST "$endpoint/" --aws-sigv4 "aws:amz:us-east-1:kinesis" -u AKIDFT:ftsecret \
    -H 'Content-Type: application/x-amz-json-1.1' -H "X-Amz-Target: Kinesis_20131202.$1" \
    --data-binary "$2"
}

wait_active() {
  for _ in $(seq 1 100); do
    api DescribeStreamSummary "{\"StreamName\":\"$1\"}" | grep -q '"ACTIVE"' && return 0
    sleep 0.1
  done
  fail "stream $1 did not become ACTIVE"
}

put() { # put FROM TO: records FROM..TO-1, 500 a call
  python3 - "$1" "$2" "$in_stream" >"$work/put.lines" <<'EOF'
import base64, json, sys
lo, hi, stream = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for s in range(lo, hi, 500):
    recs = [{"Data": base64.b64encode(json.dumps({"id": n, "k": "k%d" % (n % 20)}).encode()).decode(),
             "PartitionKey": "k%d" % (n % 20)} for n in range(s, min(hi, s + 500))]
    print(json.dumps({"StreamName": stream, "Records": recs}))
EOF
  while IFS= read -r body; do
    api PutRecords "$body" | grep -q '"FailedRecordCount":0' || fail "PutRecords failed"
  done <"$work/put.lines"
}

api CreateStream "{\"StreamName\":\"$in_stream\",\"ShardCount\":3}" >/dev/null
api CreateStream "{\"StreamName\":\"$out_stream\",\"ShardCount\":2}" >/dev/null
wait_active "$in_stream"
wait_active "$out_stream"

cat >"$work/q.sql" <<EOF
CREATE TABLE kin (id BIGINT, k STRING) WITH ('connector' = 'kinesis', 'stream' = '$in_stream',
  'aws.region' = 'us-east-1', 'aws.endpoint' = '$endpoint', 'format' = 'json',
  'scan.shard.getrecords.intervalmillis' = '0');
CREATE TABLE kout (id BIGINT, k STRING) PARTITIONED BY (k) WITH ('connector' = 'kinesis',
  'stream' = '$out_stream', 'aws.region' = 'us-east-1', 'aws.endpoint' = '$endpoint',
  'format' = 'json');
SET 'execution.checkpointing.dir' = '$work/ck';
SET 'dipper.max-batch-rows' = '150';
SET 'dipper.trigger' = 'available-now';
INSERT INTO kout SELECT id, k FROM kin;
EOF
export AWS_ACCESS_KEY_ID=AKIDFT AWS_SECRET_ACCESS_KEY=ftsecret

total=4000
parts=(0 1000 2000 3000 4000)
put 0 1000
next_part=1
for i in $(seq 1 "$kills"); do
  "$dipper" run -q "$work/q.sql" >/dev/null 2>>"$work/stderr" &
  pid=$!
  ms=$((RANDOM % 1400 + 100))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "${FT_VERBOSE:-}" ] && echo "kill $i"
  if [ "$next_part" -lt 4 ] && [ $((i % 2)) -eq 0 ]; then
    put "${parts[$next_part]}" "${parts[$((next_part + 1))]}"
    next_part=$((next_part + 1))
  fi
  if [ "$i" -eq 2 ]; then
    # shard 0 of 3 covers [0, 2^128 / 3): split it in the middle
    api SplitShard "{\"StreamName\":\"$in_stream\",\"ShardToSplit\":\"shardId-000000000000\",\"NewStartingHashKey\":\"56713727820156410577229101238628035242\"}" >/dev/null
    wait_active "$in_stream"
  fi
done
while [ "$next_part" -lt 4 ]; do
  put "${parts[$next_part]}" "${parts[$((next_part + 1))]}"
  next_part=$((next_part + 1))
done
"$dipper" run -q "$work/q.sql" >/dev/null 2>>"$work/stderr" || fail "the last run failed: $(tail -5 "$work/stderr")"

# Read the output stream back, every shard from TRIM_HORIZON.
read_out() {
  python3 - "$endpoint" "$out_stream" <<'EOF'
import base64, json, subprocess, sys
ep, stream = sys.argv[1], sys.argv[2]
def api(action, body):
    out = subprocess.run(["curl", "-sS", "-f", "-X", "POST", ep + "/", "--aws-sigv4",
                          "aws:amz:us-east-1:kinesis", "-u", "AKIDFT:ftsecret",
                          "-H", "Content-Type: application/x-amz-json-1.1",
                          "-H", "X-Amz-Target: Kinesis_20131202." + action,
                          "--data-binary", json.dumps(body)], check=True, capture_output=True)
    return json.loads(out.stdout)
shards = api("ListShards", {"StreamName": stream})["Shards"]
for sh in shards:
    it = api("GetShardIterator", {"StreamName": stream, "ShardId": sh["ShardId"],
                                  "ShardIteratorType": "TRIM_HORIZON"})["ShardIterator"]
    empty = 0
    while it and empty < 2:
        r = api("GetRecords", {"ShardIterator": it, "Limit": 10000})
        empty = empty + 1 if not r["Records"] else 0
        for rec in r["Records"]:
            v = json.loads(base64.b64decode(rec["Data"]))
            print(v["id"], v["k"], rec["PartitionKey"])
        it = r.get("NextShardIterator")
EOF
}
read_out >"$work/out.txt"
python3 - "$work/out.txt" "$total" "$((kills * 150))" <<'EOF' || fail "the output is wrong (see above)"
import sys
lines = [l.split() for l in open(sys.argv[1])]
total = int(sys.argv[2])
seen, bad, order = {}, 0, 0
last = {}
for ident, k, pk in lines:
    n = int(ident)
    if not (0 <= n < total) or k != "k%d" % (n % 20) or pk != k:
        bad += 1
        continue
    if n not in seen:
        # the first copy of each id comes after the first copies of the key's earlier ids
        if n < last.get(k, -1):
            order += 1
        last[k] = max(last.get(k, -1), n)
    seen[n] = seen.get(n, 0) + 1
missing = [n for n in range(total) if n not in seen]
doubled = sum(c - 1 for c in seen.values())
print("kill_test (kinesis): %d records out, %d ids, %d missing, %d doubled, %d wrong, %d out of order"
      % (len(lines), len(seen), len(missing), doubled, bad, order))
# each kill cuts short at most the one batch under way (150 rows), whose
# rows the run after it writes again
sys.exit(1 if missing or bad or order or doubled > int(sys.argv[3]) else 0)
EOF
before=$(wc -l <"$work/out.txt")
"$dipper" run -q "$work/q.sql" >/dev/null 2>>"$work/stderr" || fail "the run after the end failed"
read_out >"$work/out2.txt"
after=$(wc -l <"$work/out2.txt")
[ "$before" -eq "$after" ] || fail "a run after the end wrote $((after - before)) more records"
echo "kill_test (kinesis): ok"
