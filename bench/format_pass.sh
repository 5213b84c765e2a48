#!/usr/bin/env bash
# bench/format_pass.sh — the file pass-through: `dipper run` of a SELECT of
# every column of the payments into a blackhole sink, over one JSON-lines and
# one CSV file of N payments (bench_format_bench --write), batch mode; prints
# the CPU time (user + system, GNU time; start-up included) of each run and
# MB/s per core.  Given two dipper binaries, runs them alternately (old, new,
# old, new, ...) so that both see the same load.
#
#   bench/format_pass.sh [--records N] [--rounds R] DIPPER [DIPPER2]
#   e.g. bench/format_pass.sh --records 2000000 /tmp/old/dipper build/dipper
set -euo pipefail

records=2000000
rounds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --records) records="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: bench/format_pass.sh [--records N] [--rounds R] DIPPER [DIPPER2]" >&2; exit 2; }
bins=("$@")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fb="${FORMAT_BENCH:-$root/build/bench/bench_format_bench}"
dir="$(mktemp -d /tmp/dipper-format-pass-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
"$fb" --records "$records" --write "$dir" >/dev/null

cols="createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, payPlatform INT, provinceId INT"
for fmt in json csv; do
  file="$dir/payments.$([[ $fmt == json ]] && echo jsonl || echo csv)"
  cat >"$dir/pass-$fmt.sql" <<SQL
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE payments ($cols) WITH ('connector' = 'filesystem', 'path' = '$file', 'format' = '$fmt');
CREATE TABLE sink ($cols) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM payments;
SQL
done

printf '%-6s %-5s %-40s %8s %8s\n' format round binary "CPU s" "MB/s"
for fmt in json csv; do
  file="$dir/payments.$([[ $fmt == json ]] && echo jsonl || echo csv)"
  bytes=$(stat -c %s "$file")
  for ((r = 1; r <= rounds; r++)); do
    for b in "${bins[@]}"; do
      if ! /usr/bin/time -f '%U %S' -o "$dir/time" "$b" run -q "$dir/pass-$fmt.sql" >/dev/null 2>"$dir/err"; then
        echo "format_pass: $b failed:" >&2
        cat "$dir/err" >&2
        exit 1
      fi
      cpu=$(awk '{printf "%.3f", $1 + $2}' "$dir/time")
      mbs=$(awk -v b="$bytes" -v c="$cpu" 'BEGIN {printf "%.0f", b / 1e6 / c}')
      printf '%-6s %-5s %-40s %8s %8s\n' "$fmt" "$r" "$b" "$cpu" "$mbs"
    done
  done
done
