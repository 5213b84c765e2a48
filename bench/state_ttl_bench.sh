#!/usr/bin/env bash
# state_ttl_bench.sh — the cost of 'table.exec.state.ttl' on a GROUP BY of a
# stream: 3,000,000 rows over 500,000 keys (a watched folder read with the
# available-now trigger, 23 micro-batches), without a TTL, with one that
# never fires ('1 d': the cost of keeping the keys in order of last write)
# and with one that fires every batch ('1 ms': each batch drops the groups
# of the batches before).  CPU time (user+sys) and peak memory per run.
#   usage: bench/state_ttl_bench.sh [PATH/TO/dipper] [ROUNDS]
set -euo pipefail
dipper="${1:-build/dipper}"
rounds="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/ev"
python3 - "$work/ev/ev.csv" <<'PY'
import random, sys
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    for _ in range(3000000):
        f.write("%d,%d\n" % (r.randint(1, 500000), r.randint(0, 1000)))
PY
for ttl in none '1 d' '1 ms'; do
  {
    [ "$ttl" != none ] && echo "SET 'table.exec.state.ttl' = '$ttl';"
    cat <<SQL
SET 'dipper.output-mode' = 'update';
SET 'dipper.trigger' = 'available-now';
CREATE TABLE ev (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '$work/ev',
  'format' = 'csv', 'source.monitor-interval' = '1 s');
CREATE TABLE bh (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT k, COUNT(*), SUM(v) FROM ev GROUP BY k;
SQL
  } >"$work/q-${ttl// /}.sql"
done
for r in $(seq "$rounds"); do
  for ttl in none 1d 1ms; do
    /usr/bin/time -f "ttl=$ttl cpu=%U+%S s wall=%e s peak=%M KB" \
      "$dipper" run -q "$work/q-$ttl.sql" 2>&1 | grep '^ttl='
  done
done
