#!/usr/bin/env bash
# tests/spark/e2e.sh — `dipper run --engine sc://...` end to end against the
# Spark Connect server of the spark_server fixture (127.0.0.1:15002):
#   - examples/orders_spark.sql (CSV and JSON files with declared schemas, a
#     join, a grouped aggregate) prints the right rows on Spark, the same as
#     on the embedded engine, as a table, CSV and JSON lines;
#   - a server that does not answer (port 1): a message naming the address,
#     exit 1;
#   - an error inside Spark (a filesystem table whose path does not exist):
#     Spark's error class in the message, exit 1;
#   - a result above grpc_max_message_size: a DIPPER_LIMIT message that says
#     how to raise the limit, exit 1.
#   usage: e2e.sh PATH/TO/dipper REPO_ROOT
set -euo pipefail

dipper="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$2"
spark="sc://127.0.0.1:${DIPPER_SPARK_PORT:-15002}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_STATUS ARGS... — dipper with stdout/stderr in $work/out, $work/err.
run() {
  local expected="$1"
  shift
  local status=0
  NO_COLOR= timeout 300 "$dipper" "$@" >"$work/out" 2>"$work/err" </dev/null || status=$?
  checks=$((checks + 1))
  if [ "$status" -ne "$expected" ]; then
    fail "dipper $* exited $status, expected $expected"
    sed 's/^/  stderr: /' "$work/err" >&2
  fi
}

contains() {
  checks=$((checks + 1))
  if [[ "$(cat "$1")" != *"$2"* ]]; then
    fail "$(basename "$1") lacks: $2"
    sed 's/^/  | /' "$1" >&2
  fi
}

empty() {
  checks=$((checks + 1))
  if [ -s "$1" ]; then
    fail "$(basename "$1") should be empty"
    sed 's/^/  | /' "$1" >&2
  fi
}

same() {
  checks=$((checks + 1))
  if ! diff -u "$1" "$2" >&2; then fail "$3"; fi
}

# Spark has one TIMESTAMP, of microseconds: its results print 6 digits of a
# second where the embedded engine prints the declared TIMESTAMP(3)'s 3
# (docs/spark.md).  same_values compares the two engines' rows with the
# fraction's trailing zeros and the table's padding taken out.
normalise() {
  sed -E 's/([0-9]{2}:[0-9]{2}:[0-9]{2})\.([0-9]*[1-9])?0+([^0-9]|$)/\1.\2\3/g; s/([0-9]{2})\.([^0-9]|$)/\1\2/g; s/-+/-/g; s/ +/ /g' "$1"
}
same_values() {
  checks=$((checks + 1))
  if ! diff -u <(normalise "$1") <(normalise "$2") >&2; then fail "$3"; fi
}

# ---- the example, on Spark and embedded ----
# Relative paths are read against the current directory on both engines.
cd "$root/examples"
cat >"$work/expected" <<'TEXT'
region | orders | revenue | last_order
-------+--------+---------+---------------------------
north  |      4 |  560.85 | 2024-03-03 14:10:45.000000
south  |      3 |  238.74 | 2024-03-03 09:00:00.000000
east   |      1 |   42.00 | 2024-03-02 12:30:15.000000
(3 rows)

order_id | name | amount
---------+------+-------
    1002 | Bo   | 120.00
    1004 | Cy   | 310.10
    1008 | Cy   | 150.00
(3 rows)
TEXT
run 0 run --engine "$spark" orders_spark.sql
empty "$work/err"
cp "$work/out" "$work/spark.table"
same "$work/expected" "$work/spark.table" "orders_spark.sql on Spark printed other rows"
run 0 run --format table orders_spark.sql
same_values "$work/spark.table" "$work/out" "orders_spark.sql: Spark and the embedded engine differ"

for format in csv json; do
  run 0 run --engine "$spark" --format "$format" orders_spark.sql
  cp "$work/out" "$work/spark.$format"
  run 0 run --format "$format" orders_spark.sql
  same_values "$work/spark.$format" "$work/out" "--format $format: Spark and the embedded engine differ"
done
contains "$work/spark.csv" "region,orders,revenue,last_order
north,4,560.85,2024-03-03 14:10:45.000000"
contains "$work/spark.json" '{"region": "north", "orders": 4, "revenue": 560.85, "last_order": "2024-03-03 14:10:45.000000"}'
contains "$work/spark.json" '{"order_id": 1004, "name": "Cy", "amount": 310.10}'

# an INSERT into a console table on Spark: Spark computes, dipper's console sink prints
cat >"$work/insert.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE customers (customer_id INT, name STRING, region STRING) WITH (
  'connector' = 'filesystem', 'path' = 'data/customers.json', 'format' = 'json');
CREATE TABLE shown (region STRING, n BIGINT) WITH ('connector' = 'console');
INSERT INTO shown SELECT region, COUNT(*) FROM customers GROUP BY region;
SQL
run 0 run --engine "$spark" "$work/insert.sql"
contains "$work/out" "| north|2|"
contains "$work/out" "| south|2|"
contains "$work/out" "|  east|1|"
cd "$work"

# ---- a server that does not answer ----
run 1 run --engine sc://127.0.0.1:1 "$root/examples/orders_spark.sql"
contains "$work/err" "dipper: error: cannot reach Spark Connect at 127.0.0.1:1: connection refused"
empty "$work/out"

# ---- an error inside Spark: its error class reaches the user ----
cat >"$work/nopath.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE f (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '/nonexistent/dipper-e2e',
  'format' = 'csv');
SELECT id FROM f;
SQL
run 1 run --engine "$spark" "$work/nopath.sql"
contains "$work/err" "Spark: [PATH_NOT_FOUND] Path does not exist: file:/nonexistent/dipper-e2e"
empty "$work/out"

# ---- a result above the message size limit ----
cat >"$work/big.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '100000');
SELECT id, v FROM g;
SQL
run 1 run --engine "$spark/;grpc_max_message_size=1024" --format csv "$work/big.sql"
contains "$work/err" "is above the limit of 1024 bytes"
contains "$work/err" "raise it with the grpc_max_message_size parameter"
empty "$work/out"
# and with the default limit the same result arrives whole
run 0 run --engine "$spark" --format csv "$work/big.sql"
checks=$((checks + 1))
lines=$(wc -l <"$work/out")
[ "$lines" -eq 100001 ] || fail "the 100000-row result printed $lines lines, expected 100001"

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
