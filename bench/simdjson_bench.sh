#!/usr/bin/env bash
# bench/simdjson_bench.sh — simdjson beside dipper's JSON decoder on the
# payment records: makes (once) a venv with pysimdjson 7.0.2 under
# ${DIPPER_CACHE:-~/.cache/dipper}/simdjson-venv, writes the records with
# build/bench/bench_format_bench --write, runs bench/simdjson_bench.py on
# them, then bench_format_bench --only json on the same count.
#   bench/simdjson_bench.sh [RECORDS]      (default 1000000; needs build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
records="${1:-1000000}"
venv="${DIPPER_CACHE:-$HOME/.cache/dipper}/simdjson-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import simdjson' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check pysimdjson==7.0.2
fi
[ -x "$root/build/bench/bench_format_bench" ] || { echo "simdjson_bench: build first (scripts/build release)" >&2; exit 1; }
dir="$(mktemp -d /tmp/dipper-simdjson-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
"$root/build/bench/bench_format_bench" --records "$records" --write "$dir" >/dev/null
"$venv/bin/python" "$root/bench/simdjson_bench.py" "$dir/payments.jsonl"
"$root/build/bench/bench_format_bench" --records "$records" --only json
