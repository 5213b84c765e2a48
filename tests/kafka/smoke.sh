#!/usr/bin/env bash
# tests/kafka/smoke.sh — end-to-end check of scripts/kafka-local against a real
# broker: start it, create topics, produce 100 JSON records, read them back
# and compare byte for byte, then stop the broker.  Not registered in ctest
# yet: nothing in dipper needs Kafka until the connector exists.
#
# A broker that was already running before the test is used and left running;
# one started here is stopped on exit, also on failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kafka="$root/scripts/kafka-local"
work="$(mktemp -d)"
started_here=0

cleanup() {
  local status=$?
  if ((started_here)); then
    "$kafka" stop || status=1
  fi
  rm -rf "$work"
  if ((status == 0)); then echo "smoke: PASS"; else echo "smoke: FAIL" >&2; fi
  exit "$status"
}
trap cleanup EXIT

fail() { echo "smoke: $*" >&2; exit 1; }

if ! "$kafka" status >/dev/null 2>&1; then
  started_here=1
  "$kafka" start
fi
"$kafka" status

# A fresh topic each run, so records left by an earlier run cannot pass as ours.
suffix="$$-$RANDOM"

# 1. Values only, one partition: order is kept, so the output must equal the
#    input exactly.  The JSON holds quotes, spaces, unicode and a tab-free
#    nested object, as the connector's JSON format will see.
topic="dipper-smoke-$suffix"
"$kafka" create-topic "$topic" 1
for i in $(seq 1 100); do
  printf '{"id":%d,"name":"item %d","price":%d.25,"tags":["a","b"],"note":"caf\xc3\xa9 \\"%d\\"","nested":{"even":%s}}\n' \
    "$i" "$i" "$i" "$i" "$([[ $((i % 2)) == 0 ]] && echo true || echo false)"
done >"$work/sent.jsonl"
"$kafka" produce "$topic" <"$work/sent.jsonl"
"$kafka" consume "$topic" 100 >"$work/got.jsonl"
if ! cmp -s "$work/sent.jsonl" "$work/got.jsonl"; then
  diff "$work/sent.jsonl" "$work/got.jsonl" | head -n 20 >&2 || true
  fail "the 100 records read back from $topic differ from those sent"
fi
echo "smoke: 100 JSON records round-tripped through $topic in order"

# 2. Keyed records over three partitions: order holds only within a key's
#    partition, so the multiset of key/value pairs is compared.
keyed="dipper-smoke-keyed-$suffix"
"$kafka" create-topic "$keyed" 3
for i in $(seq 1 100); do
  printf 'user-%d\t{"seq":%d}\n' "$((i % 7))" "$i"
done >"$work/sent-keyed.tsv"
"$kafka" produce "$keyed" --keys <"$work/sent-keyed.tsv"
"$kafka" consume "$keyed" 100 --keys >"$work/got-keyed.tsv"
if ! cmp -s <(sort "$work/sent-keyed.tsv") <(sort "$work/got-keyed.tsv"); then
  diff <(sort "$work/sent-keyed.tsv") <(sort "$work/got-keyed.tsv") | head -n 20 >&2 || true
  fail "the 100 keyed records read back from $keyed differ from those sent"
fi
# Records of one key land in one partition, so their relative order survives.
for k in $(seq 0 6); do
  if ! cmp -s <(grep -P "^user-$k\t" "$work/sent-keyed.tsv") \
              <(grep -P "^user-$k\t" "$work/got-keyed.tsv"); then
    fail "records of key user-$k came back out of order from $keyed"
  fi
done
echo "smoke: 100 keyed records round-tripped through $keyed (3 partitions, per-key order kept)"

# 3. Asking for more records than exist must fail, not hang or pass.
if DIPPER_KAFKA_CONSUME_TIMEOUT=3 "$kafka" consume "$topic" 101 >/dev/null 2>&1; then
  fail "consume of 101 records from a 100-record topic reported success"
fi
echo "smoke: a short read is reported as a failure"
