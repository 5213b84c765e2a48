#!/usr/bin/env bash
# bench/watch_idle.sh — the CPU a streaming query over a watched folder of
# many files costs while nothing new arrives.
#   bench/watch_idle.sh [DIPPER [FILES [SECONDS]]]   (defaults: build/dipper 5000 8)
# Makes FILES one-line JSON files in a scratch folder, runs
# `INSERT INTO blackhole SELECT ... FROM filesystem` on it for SECONDS
# (SIGINT then), and prints user+system CPU seconds and the share of one core.
set -euo pipefail
dipper="${1:-build/dipper}"
files="${2:-5000}"
secs="${3:-8}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/in"
python3 - "$dir/in" "$files" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/f{i:06d}.json", "w") as f:
        f.write('{"id":%d}\n' % i)
PY
cat > "$dir/q.sql" <<SQL
CREATE TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '$dir/in', 'format' = 'json',
  'source.monitor-interval' = '10 ms');
CREATE TABLE dst (id INT) WITH ('connector' = 'blackhole');
INSERT INTO dst SELECT id FROM src;
SQL
/usr/bin/time -f "%U %S" -o "$dir/time" timeout -s INT "$secs" "$dipper" run "$dir/q.sql" \
  >/dev/null 2>"$dir/err" || true
read -r user sys < <(tail -n 1 "$dir/time")
python3 - "$user" "$sys" "$secs" "$files" <<'PY'
import sys
u, s, secs, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"watch_idle: {n} files, {secs:.0f} s: {u:.2f} s user + {s:.2f} s system = "
      f"{100 * (u + s) / secs:.1f} % of a core (reading the files once included)")
PY
