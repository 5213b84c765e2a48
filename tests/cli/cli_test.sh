#!/usr/bin/env bash
# cli_test.sh — the `dipper` command end to end: exit statuses, what goes to
# stdout and stderr, the compiler-style diagnostics, and every example.
#   usage: cli_test.sh PATH/TO/dipper REPO_ROOT
set -euo pipefail

dipper="$1"
root="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_STATUS ARGS... — runs dipper with stdout/stderr captured in
# $work/out and $work/err; records a failure when the status differs.
run() {
  local expected="$1"
  shift
  local status=0
  NO_COLOR= "$dipper" "$@" >"$work/out" 2>"$work/err" </dev/null || status=$?
  checks=$((checks + 1))
  if [ "$status" -ne "$expected" ]; then
    fail "dipper $* exited $status, expected $expected"
    sed 's/^/  stderr: /' "$work/err" >&2
  fi
}

# contains FILE TEXT — TEXT (fixed string, may span lines) occurs in FILE.
contains() {
  checks=$((checks + 1))
  local text
  text="$(cat "$1")"
  # A quoted pattern matches literally, across lines.
  if [[ "$text" != *"$2"* ]]; then
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

# --version and --help
run 0 --version
contains "$work/out" "dipper 0.1.0"
empty "$work/err"
run 0 --help
contains "$work/out" "usage: dipper COMMAND"
contains "$work/out" "check INPUT..."
contains "$work/out" "explain INPUT..."
contains "$work/out" "--engine ADDR"
contains "$work/out" "-e 'SQL'"
run 0 -h
contains "$work/out" "usage: dipper"

# usage errors: exit 2 with a hint
run 2
contains "$work/err" "usage: dipper"
run 2 chek examples/payments.sql
contains "$work/err" "unknown command 'chek'; did you mean 'check'?"
contains "$work/err" "dipper --help"
run 2 check --frobnicate x.sql
contains "$work/err" "unknown option '--frobnicate'"
run 2 check
contains "$work/err" "needs an input"
run 2 check -e
contains "$work/err" "option '-e' needs"
run 2 check --engine
contains "$work/err" "option '--engine' needs"
run 2 check --engine http://nope -e 'SELECT 1'
contains "$work/err" "cannot use engine 'http://nope'"

# a missing file: exit 2, the file named with the system's reason
run 2 check "$work/does-not-exist.sql"
contains "$work/err" "cannot read '$work/does-not-exist.sql': No such file or directory"
run 2 check "$work"
contains "$work/err" "cannot read '$work': Is a directory"

# a clean file: exit 0, nothing printed
cat >"$work/ok.sql" <<'SQL'
CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT id, name FROM gen WHERE id > 2;
SQL
run 0 check "$work/ok.sql"
empty "$work/out"
empty "$work/err"

# a file with an error: exit 1, file:line:col, the source line and the caret
cat >"$work/bad.sql" <<'SQL'
CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT id,
       nme FROM gen;
SQL
run 1 check "$work/bad.sql"
empty "$work/out"
contains "$work/err" "$work/bad.sql:3:8: error: "
contains "$work/err" "   3 |        nme FROM gen;
     |        ^~~"
checks=$((checks + 1))
if grep -q $'\033' "$work/err"; then fail "colour codes in a pipe"; fi

# -e, and later inputs seeing the tables of earlier ones
run 0 check -e "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')" -e 'SELECT a FROM t'
empty "$work/err"
run 1 check -e 'SELECT a FROM t'
contains "$work/err" "<command line>:1:15: error: "
run 0 explain "$work/ok.sql" -e 'SELECT name FROM gen'
contains "$work/out" "Scan table=gen connector=datagen"

# stdin
status=0
NO_COLOR= "$dipper" check - <"$work/bad.sql" >"$work/out" 2>"$work/err" || status=$?
checks=$((checks + 1))
[ "$status" -eq 1 ] || fail "check - exited $status, expected 1"
contains "$work/err" "<stdin>:3:8: error: "

# --engine sc:// checks what Spark can run, with no server (port 1 is closed):
# a refusal is a compile error with its place (a streaming SELECT over an
# endless input has nowhere to show its rows on Spark); bounded inputs and
# batch mode over files pass
run 0 check --engine sc://127.0.0.1:1 "$work/ok.sql"
cat >"$work/endless.sql" <<'SQL'
CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen');
SELECT id, name FROM gen WHERE id > 2;
SQL
run 1 check --engine sc://127.0.0.1:1 "$work/endless.sql"
contains "$work/err" "endless.sql:2:32: error: on Spark, a streaming SELECT over an unbounded input"
run 0 check --engine=embedded "$work/ok.sql"
cat >"$work/spark_ok.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE f (id BIGINT, name STRING) WITH ('connector' = 'filesystem', 'path' = '/nowhere',
  'format' = 'csv');
SELECT name, COUNT(*) AS n FROM f WHERE id > 2 GROUP BY name;
SQL
run 0 check --engine sc://127.0.0.1:1 "$work/spark_ok.sql"
empty "$work/err"

# explain of the main example
run 0 explain "$root/examples/payments.sql"
contains "$work/out" "CreateTable payment_msg connector=kafka"
contains "$work/out" "watermark=createTime delay=10 s"
contains "$work/out" "Sink table=sink connector=kafka"
contains "$work/out" "Window kind=HOP"
contains "$work/out" "Scan table=payment_msg connector=kafka"
empty "$work/err"
run 0 explain --no-schema --no-streaming "$root/examples/payments.sql"
checks=$((checks + 1))
if grep -q 'schema:\|streaming:' "$work/out"; then fail "--no-schema/--no-streaming ignored"; fi

# explain --format json: the same walk as the text, as JSON (valid, one
# object per input), with each node's schema and streaming properties
json_ok() {
  checks=$((checks + 1))
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>"$work/json_err" ||
    { fail "$(basename "$1") is not valid JSON"; sed 's/^/  | /' "$work/json_err" "$1" >&2; }
}
run 0 explain --format json "$root/examples/payments.sql"
json_ok "$work/out"
contains "$work/out" '{"input": "'"$root"'/examples/payments.sql", "statements": ['
contains "$work/out" '"summary": "CreateTable payment_msg connector=kafka format=json columns=5 watermark=createTime delay=10 s unbounded"'
contains "$work/out" '"kind": "Window",
'
contains "$work/out" '"args": "kind=HOP time=createTime size=1 min slide=30 s",'
contains "$work/out" '"schema": [{"name": "province_id", "type": "INT"}, {"name": "window_start", "type": "TIMESTAMP(3) NOT NULL"},'
contains "$work/out" '"bounded": false,'
contains "$work/out" '"modes": ["append"],'
contains "$work/out" '"changelog": "insert-only",'
contains "$work/out" '"time": [{"column": "createTime", "watermark": {"id": 0, "source": "payment_msg", "column": "createTime", "delay": "10 s"}}],'
contains "$work/out" '"state": {"kind": "watermark", "description": "'
contains "$work/out" '"kind": "Scan",
'
empty "$work/err"
run 0 explain --format=json --no-schema --no-streaming "$work/ok.sql" -e 'SELECT name FROM gen'
json_ok "$work/out"
contains "$work/out" '{"input": "<command line>", "statements": ['
checks=$((checks + 1))
if grep -q '"schema"\|"bounded"' "$work/out"; then fail "--no-schema/--no-streaming ignored in JSON"; fi
run 0 explain --format text "$work/ok.sql"
contains "$work/out" "Scan table=gen connector=datagen"

# check --format json: diagnostics for editors, [] when clean
run 0 check --format json "$work/ok.sql"
contains "$work/out" "[]"
empty "$work/err"
run 1 check --format json "$work/bad.sql" -e 'SELECT 1 +'
json_ok "$work/out"
contains "$work/out" '[
  {"file": "'"$work"'/bad.sql", "line": 3, "column": 8, "end_line": 3, "end_column": 11, "severity": "error", "code": "NAME", "message": "unknown column `nme`'
contains "$work/out" '},
  {"file": "<command line>", "line": 1, "column": 11,'
contains "$work/out" '"code": "SYNTAX"'
empty "$work/err"

# an option that does not apply to the command: exit 2 with what it is for
run 2 check -q "$work/ok.sql"
contains "$work/err" "option '-q' does not apply to 'check': it belongs to run"
run 2 --quiet explain "$work/ok.sql"
contains "$work/err" "option '--quiet' does not apply to 'explain'"
run 2 run --no-schema "$work/ok.sql"
contains "$work/err" "option '--no-schema' does not apply to 'run': it belongs to explain"
run 2 check --no-streaming "$work/ok.sql"
contains "$work/err" "option '--no-streaming' does not apply to 'check'"
run 2 check --format csv "$work/ok.sql"
contains "$work/err" "format 'csv' is for the rows of run; check prints text (the default) or json"
run 2 --format table explain "$work/ok.sql"
contains "$work/err" "format 'table' is for the rows of run; explain prints text (the default) or json"
run 2 explain --format yaml "$work/ok.sql"
contains "$work/err" "unknown format 'yaml' for explain; write text or json"
run 2 run --format text "$work/ok.sql"
contains "$work/err" "unknown format 'text' for run; write table, csv or json"

# every example passes check
for example in "$root"/examples/*.sql; do
  run 0 check "$example"
  empty "$work/err"
done

# The examples run where they can run here, from a copy of examples/ (their
# paths are relative to it, and the file sinks write under out/), their output
# checked.  payments_local.sql is the main job, at the end.  payments.sql
# (Kafka) runs end to end in tests/spark/e2e_stream.sh and tests/connectors
# (kafka_test); orders_spark.sql on Spark in tests/spark/e2e.sh and here on the
# embedded engine; joins.sql and sessions.sql read Kafka topics and the first
# half of dedup.sql too: for those, check above and their plans here.
cp -r "$root/examples" "$work/ex"
# in_examples ARGS... — `run ARGS...` from the copy (not in a subshell: the
# counts must add up)
in_examples() {
  local here="$PWD"
  cd "$work/ex"
  run "$@"
  cd "$here"
}
in_examples 0 run -q batch_report.sql
empty "$work/out"
cat "$work/ex/out/region_report/"*.csv >"$work/report.csv" 2>/dev/null || true
# revenue per region and day, largest first: the refund (-15.00) left out by
# WHERE, sale 8 of store 9 (no such store) by the join
contains "$work/report.csv" "south,2024-03-02,1,300.00
east,2024-03-01,1,200.00
north,2024-03-01,2,160.00
south,2024-03-01,1,80.50
north,2024-03-02,1,60.25
east,2024-03-02,1,10.00"
in_examples 0 run -q orders_spark.sql
contains "$work/out" "| north|     4| 560.85|2024-03-03 14:10:45.000|
| south|     3| 238.74|2024-03-03 09:00:00.000|
|  east|     1|  42.00|2024-03-02 12:30:15.000|"
contains "$work/out" "|    1002|  Bo|120.00|
|    1004|  Cy|310.10|
|    1008|  Cy|150.00|"
# dedup.sql's batch half (from its SET of batch mode): DISTINCT over the archive
sed -n "/^SET 'execution.runtime-mode' = 'batch';/,\$p" "$work/ex/dedup.sql" >"$work/ex/dedup_batch.sql"
in_examples 0 run -q dedup_batch.sql
cat "$work/ex/out/user_kinds/"* >"$work/kinds.json" 2>/dev/null || true
contains "$work/kinds.json" '{"user_id":7,"kind":"view"}
{"user_id":7,"kind":"cart"}
{"user_id":8,"kind":"view"}
{"user_id":8,"kind":"buy"}'
checks=$((checks + 1))
[ "$(wc -l <"$work/kinds.json")" -eq 4 ] || fail "dedup.sql's DISTINCT wrote $(wc -l <"$work/kinds.json") rows, expected 4"
# Nexmark q5 on the built-in generator: 1,000,000 events read by both sides
in_examples 0 run nexmark_q5.sql
contains "$work/err" "hot_items: finished after"
contains "$work/err" "2000000 rows in, 64 rows out"
# joins.sql: the interval join keeps state until the watermark passes the
# bound, the stream-static join keeps only the bounded product side, the
# temporal join the versions of each rate
in_examples 0 explain --no-schema joins.sql
contains "$work/out" "Scan table=products connector=kafka alias=p
        streaming: bounded"
contains "$work/out" "state=bounded-input (every row of the bounded right side; stream rows are not kept)"
contains "$work/out" "Join kind=INNER keys=[currency=currency]"
in_examples 0 explain --no-schema sessions.sql
contains "$work/out" "Window kind=SESSION time=click_time gap=5 min"

# ---- run ----
run 0 --help
contains "$work/out" "run INPUT..."
contains "$work/out" "--quiet"

# a bare SELECT goes to the console; one summary line per query on stderr
run 0 run -e "SELECT a * 10 AS tens, b FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b) WHERE a > 1"
contains "$work/out" "Batch: 0"
contains "$work/out" "tens"
contains "$work/out" "20"
contains "$work/err" "select#1: finished after 2 batches"
contains "$work/err" "2 rows in, 1 rows out"
run 0 run --quiet -e "SELECT 1"
empty "$work/err"
run 0 run -q -e "SELECT 1"
empty "$work/err"

# a bounded generator through a filter into a blackhole: the run ends by itself
cat >"$work/gen.sql" <<'SQL'
CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5000',
  'fields.v.min' = '1', 'fields.v.max' = '10');
CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT id FROM g WHERE v > 0;
SQL
run 0 run "$work/gen.sql"
contains "$work/err" "bh: finished after"
contains "$work/err" "5000 rows in, 5000 rows out"
empty "$work/out"

# a GROUP BY over a bounded generator emits every group at its final batch:
# over RocksDB (every group written to it: a cache of one byte) by a pass
# over its entries in slices (9,000 groups: three), the rows those in memory
cat >"$work/groups.sql" <<'SQL'
SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';
CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
  'fields.v.min' = '1', 'fields.v.max' = '5', 'seed' = '7');
SELECT id % 9000 AS k, COUNT(*) AS c, MAX(CAST(id AS STRING)) AS m, COUNT(DISTINCT v) AS d
FROM g GROUP BY id % 9000;
SQL
{ echo "SET 'state.backend' = 'rocksdb';"; cat "$work/groups.sql"; } >"$work/groups_rocks.sql"
run 0 run -q "$work/groups.sql"
grep '^|' "$work/out" | sort >"$work/groups_mem"
run 0 run -q "$work/groups_rocks.sql"
grep '^|' "$work/out" | sort >"$work/groups_rocks"
checks=$((checks + 1))
[ "$(wc -l <"$work/groups_mem")" -eq 9001 ] || fail "the GROUP BY in memory gave $(wc -l <"$work/groups_mem") lines, not 9,000 groups and a header"
cmp -s "$work/groups_mem" "$work/groups_rocks" || fail "the GROUP BY over rocksdb differs from memory"

# a bad engine address: exit 2 with what is wrong in it
run 2 run --engine 'sc://localhost:15002/;tokn=x' -e "SELECT 1"
contains "$work/err" "dipper: error: cannot use engine 'sc://localhost:15002/;tokn=x': connection string"
contains "$work/err" "unknown parameter 'tokn'"
empty "$work/out"
run 2 check --engine spark "$work/ok.sql"
contains "$work/err" "cannot use engine 'spark'"

# --format: each statement runs to completion and SELECT rows are printed by
# the command's own printer (table, csv, json)
cat >"$work/fmt.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE out (a BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT 1;
SELECT a, b, d, ts, arr, r FROM (VALUES
  (1, 'x', CAST(1.5 AS DECIMAL(6, 2)), TIMESTAMP '2024-01-31 12:30:00', ARRAY[1, 2], ROW('p', 3)),
  (20, CAST(NULL AS STRING), CAST(-0.25 AS DECIMAL(6, 2)), TIMESTAMP '2024-02-29 00:00:00.000123',
   ARRAY[CAST(NULL AS INT)], ROW('q"', 4))) AS t(a, b, d, ts, arr, r);
SQL
run 0 run --format table "$work/fmt.sql"
contains "$work/out" " a | b    |     d | ts                         | arr    | r"
contains "$work/out" "---+------+-------+----------------------------+--------+-"
contains "$work/out" " 1 | x    |  1.50 | 2024-01-31 12:30:00.000000 | [1, 2] | {p, 3}"
contains "$work/out" "20 | NULL | -0.25 | 2024-02-29 00:00:00.000123 | [NULL] | {q\", 4}"
contains "$work/out" "(2 rows)"
empty "$work/err"
run 0 run --format csv "$work/fmt.sql"
contains "$work/out" "a,b,d,ts,arr,r
1,x,1.50,2024-01-31 12:30:00.000000,\"[1, 2]\",\"{p, 3}\"
20,NULL,-0.25,2024-02-29 00:00:00.000123,[NULL],\"{q\"\", 4}\""
run 0 run --format=json "$work/fmt.sql"
contains "$work/out" '{"a": 1, "b": "x", "d": 1.50, "ts": "2024-01-31 12:30:00.000000", "arr": [1,2], "r": {"f0":"p","f1":3}}'
contains "$work/out" '{"a": 20, "b": null, "d": -0.25,'
run 2 run --format xml "$work/fmt.sql"
contains "$work/err" "unknown format 'xml' for run; write table, csv or json"
# --format on an unbounded streaming SELECT: refused, with the way out on the
# command line (not the C API's dipper_execute / dipper_query_start)
run 1 run --format csv -e "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen');
SELECT id FROM g;"
contains "$work/err" "<command line>:2:16: error: --format csv prints each statement's complete result, but this one runs in streaming mode and reads an unbounded input: run it without --format (the rows of each micro-batch print as it ends, until the input ends or Ctrl-C), or, when its inputs are bounded, put SET 'execution.runtime-mode' = 'batch' before it
   2 | SELECT id FROM g;
     |                ^"
checks=$((checks + 1))
if grep -q 'dipper_' "$work/err"; then fail "a CLI message names the C API"; fi

# SHOW, DESCRIBE, SET alone and EXPLAIN answer with rows, printed like a
# SELECT's: on the console before the queries start (the ones before the
# first query) or once they end, and in every --format
cat >"$work/show.sql" <<'SQL'
CREATE TABLE t (a INT, b STRING NOT NULL, ts TIMESTAMP(3), c AS a + 1,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (b) NOT ENFORCED)
  WITH ('connector' = 'datagen', 'number-of-rows' = '3');
SHOW TABLES;
DESCRIBE t;
SELECT COUNT(*) AS n FROM t;
CREATE VIEW v AS SELECT a FROM t;
SHOW VIEWS;
SQL
run 0 run -q "$work/show.sql"
contains "$work/out" "table_name
----------
t
(1 row)

name | type                   | null  | key    | extras     | watermark
-----+------------------------+-------+--------+------------+---------------------------
a    | INT                    | true  | NULL   | NULL       | NULL
b    | STRING                 | false | PRI(b) | NULL       | NULL
ts   | TIMESTAMP(3) *ROWTIME* | true  | NULL   | NULL       | (ts - INTERVAL '5' SECOND)
c    | INT                    | true  | NULL   | AS (a + 1) | NULL
(4 rows)
"
contains "$work/out" "|n|
+-+
|3|"
contains "$work/out" "view_name
---------
v
(1 row)"
checks=$((checks + 1))
[ "$(grep -n 'view_name' "$work/out" | cut -d: -f1)" -gt "$(grep -n '^|3|' "$work/out" | cut -d: -f1)" ] ||
  fail "SHOW VIEWS after the SELECT printed before the query ran"
run 0 run --format csv -e "CREATE TABLE t (a INT) WITH ('connector' = 'datagen'); SHOW TABLES; DESC t;
SET 'dipper.trigger' = 'once'; SET; SHOW FUNCTIONS;"
contains "$work/out" "table_name
t
name,type,null,key,extras,watermark
a,INT,true,NULL,NULL,NULL
key,value
dipper.trigger,once
function_name,kind,signature
abs,scalar,abs(NUMERIC|INTERVAL)"
contains "$work/out" "count,aggregate,"
contains "$work/out" "row_number,window,"
run 0 run --format json -e "CREATE TABLE t (a INT) WITH ('connector' = 'datagen'); EXPLAIN SELECT a FROM t WHERE a > 1;"
contains "$work/out" '{"plan": "Filter cond=(a > 1)"}
{"plan": "  schema: (a INT)"}'
contains "$work/out" '{"plan": "  Scan table=t connector=datagen"}'
run 0 run -q -e "CREATE TABLE t (a INT) WITH ('connector' = 'blackhole'); EXPLAIN INSERT INTO t SELECT 1;"
contains "$work/out" "Sink table=t connector=blackhole"

# a connector the engine has no source for: exit 1 with the place
cat >"$work/sock.sql" <<'SQL'
CREATE TABLE k (a INT) WITH ('connector' = 'socket', 'hostname' = 'h', 'port' = '9',
  'format' = 'csv');
SELECT a FROM k;
SQL
run 1 run "$work/sock.sql"
contains "$work/err" "$work/sock.sql:3:"
contains "$work/err" "no source for connector 'socket'"

# SQL errors: nothing runs
run 1 run "$work/bad.sql"
contains "$work/err" "$work/bad.sql:3:8: error: "
empty "$work/out"

# SIGINT and SIGTERM stop an endless run cleanly, after the summary: 130, 143
cat >"$work/endless.sql" <<'SQL'
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT id FROM g;
SQL
for sig in INT:130 TERM:143; do
  status=0
  "$dipper" run "$work/endless.sql" >"$work/out" 2>"$work/err" </dev/null &
  pid=$!
  sleep 0.7
  kill "-${sig%%:*}" "$pid"
  wait "$pid" || status=$?
  checks=$((checks + 1))
  [ "$status" -eq "${sig##*:}" ] || fail "run stopped by SIG${sig%%:*} exited $status, expected ${sig##*:}"
  contains "$work/err" "bh: stopped after"
done

# The library's messages (dipper_set_log): the Kafka client's own log lines
# only with -v; a streaming INSERT into files without a checkpoint folder
# says once that a run again writes its input again (not with -q).
cat >"$work/kafka_down.sql" <<'SQL'
CREATE TABLE k (v STRING) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'raw',
  'properties.bootstrap.servers' = '127.0.0.1:1', 'scan.startup.mode' = 'earliest-offset');
CREATE TABLE o (v STRING) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT v FROM k;
SQL
for flag in -v none; do
  status=0
  if [ "$flag" = -v ]; then
    timeout --preserve-status -s INT 2 "$dipper" run -v "$work/kafka_down.sql" >/dev/null 2>"$work/err" || status=$?
  else
    timeout --preserve-status -s INT 2 "$dipper" run "$work/kafka_down.sql" >/dev/null 2>"$work/err" || status=$?
  fi
  checks=$((checks + 1))
  [ "$status" -eq 130 ] || fail "a run over a Kafka broker that is down, stopped by SIGINT, exited $status"
  checks=$((checks + 1))
  if [ "$flag" = -v ]; then
    grep -q '^dipper: debug: kafka .*Connect to ipv4#127.0.0.1:1 failed' "$work/err" ||
      fail "-v did not show the Kafka client's log lines: $(head -3 "$work/err")"
  else
    ! grep -q 'debug\|Connect to' "$work/err" || fail "the Kafka client's log lines showed without -v"
  fi
done
mkdir -p "$work/notes_out"
cat >"$work/notes.sql" <<SQL
CREATE TABLE g (a BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE f (a BIGINT) WITH ('connector' = 'filesystem', 'path' = '$work/notes_out', 'format' = 'json');
INSERT INTO f SELECT a FROM g;
SQL
run 0 run "$work/notes.sql"
contains "$work/err" "dipper: note: query \`f\` runs without a checkpoint folder"
run 0 run -q "$work/notes.sql"
empty "$work/err"
run 2 check -v "$work/notes.sql"
contains "$work/err" "-v"

# one value formatter: the same TIMESTAMP(3), TIMESTAMP(6), DECIMAL, DOUBLE,
# NULL, ROW, ARRAY and MAP read the same in the console sink (a bare SELECT
# of run), in --format table and csv, and the progress line's watermark
cat >"$work/values.sql" <<'SQL'
SET 'execution.runtime-mode' = 'batch';
SELECT CAST('2024-01-01 00:00:00.5' AS TIMESTAMP(3)) AS t3,
  CAST('2024-01-01 00:00:00.5' AS TIMESTAMP(6)) AS t6, CAST(1.5 AS DECIMAL(10, 2)) AS d,
  CAST(0.1 AS DOUBLE) AS x, CAST(NULL AS INT) AS n, ROW(1, 'a') AS r, ARRAY[1, 2] AS a,
  MAP['k', 1] AS m;
SQL
values='2024-01-01 00:00:00.500|2024-01-01 00:00:00.500000|1.50|0.1|NULL|{1, a}|[1, 2]|{k -> 1}'
run 0 run -q "$work/values.sql"
checks=$((checks + 1))
got="$(grep '^|2024' "$work/out" | sed 's/^|//; s/|$//')"
[ "$got" = "$values" ] || fail "console sink printed '$got', expected '$values'"
run 0 run --format table "$work/values.sql"
checks=$((checks + 1))
got="$(grep '^2024' "$work/out" | sed 's/ *| */|/g; s/ *$//')"
[ "$got" = "$values" ] || fail "--format table printed '$got', expected '$values'"
run 0 run --format csv "$work/values.sql"
contains "$work/out" '2024-01-01 00:00:00.500,2024-01-01 00:00:00.500000,1.50,0.1,NULL,"{1, a}","[1, 2]",{k -> 1}'
printf '1,2024-01-01 00:00:00.500\n' >"$work/wm.csv"
cat >"$work/wm.sql" <<SQL
SET 'dipper.trigger' = 'available-now';
CREATE TABLE src (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$work/wm.csv', 'format' = 'csv');
CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT id FROM src;
SQL
run 0 run "$work/wm.sql"
contains "$work/err" "bh: batch 0, "
contains "$work/err" ", watermark 2024-01-01 00:00:00.500, state 0"

# state that grows forever: accepted, with a warning naming the operator and
# the option, from check and explain (after the diagnostics' caret form) and
# once when run starts; none once 'table.exec.state.ttl' bounds it
printf '1,a\n2,b\n1,c\n' >"$work/grow.csv"
cat >"$work/grow.sql" <<SQL
SET 'dipper.trigger' = 'available-now';
CREATE TABLE src (k INT, s STRING)
WITH ('connector' = 'filesystem', 'path' = '$work/grow.csv', 'format' = 'csv', 'source.monitor-interval' = '1 s');
CREATE TABLE bh (k INT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT k, COUNT(*) FROM src GROUP BY k;
SQL
run 0 check "$work/grow.sql"
contains "$work/err" "grow.sql:5:44: warning: the aggregation keeps one row per group (k)"
contains "$work/err" "SET 'table.exec.state.ttl' = '1 d'"
contains "$work/err" "   5 | INSERT INTO bh SELECT k, COUNT(*) FROM src GROUP BY k;"
run 0 explain "$work/grow.sql"
contains "$work/err" "grow.sql:5:44: warning: the aggregation"
contains "$work/out" "never dropped, grows with the number of groups"
run 0 run "$work/grow.sql"
contains "$work/err" "dipper: warning: $work/grow.sql:5:44: the aggregation keeps one row per group (k)"
checks=$((checks + 1))
[ "$(grep -c 'warning:' "$work/err")" -eq 1 ] || fail "run warned $(grep -c 'warning:' "$work/err") times, expected once"
run 0 check --engine sc://localhost:15002 "$work/grow.sql"
contains "$work/err" "warning: the aggregation"
{ echo "SET 'table.exec.state.ttl' = '1 h';"; cat "$work/grow.sql"; } >"$work/ttl.sql"
run 0 check "$work/ttl.sql"
empty "$work/err"
run 0 explain "$work/ttl.sql"
contains "$work/out" "a group not written for 1 h is dropped (table.exec.state.ttl)"
# on Spark, which has no idle state retention: refused with the reason
run 1 check --engine sc://localhost:15002 "$work/ttl.sql"
contains "$work/err" "Spark Structured Streaming has no idle state retention"
# SELECT DISTINCT over an insert-only stream without a watermark or TTL: the
# same (Flink accepts it), with the warning from check, explain and run
cat >"$work/distinct.sql" <<SQL
SET 'dipper.trigger' = 'available-now';
CREATE TABLE src (k INT, s STRING)
WITH ('connector' = 'filesystem', 'path' = '$work/grow.csv', 'format' = 'csv', 'source.monitor-interval' = '1 s');
CREATE TABLE bh (k INT, s STRING) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT DISTINCT k, s FROM src;
SQL
run 0 check "$work/distinct.sql"
contains "$work/err" "distinct.sql:5:16: warning: SELECT DISTINCT keeps one row per distinct row"
contains "$work/err" "SET 'table.exec.state.ttl' = '1 d'"
contains "$work/err" "to drop a row not seen for that long"
run 0 explain "$work/distinct.sql"
contains "$work/err" "distinct.sql:5:16: warning: SELECT DISTINCT"
run 0 run "$work/distinct.sql"
contains "$work/err" "dipper: warning: $work/distinct.sql:5:16: SELECT DISTINCT keeps one row per distinct row"
{ echo "SET 'table.exec.state.ttl' = '1 h';"; cat "$work/distinct.sql"; } >"$work/distinct_ttl.sql"
run 0 check "$work/distinct_ttl.sql"
empty "$work/err"

# the main job: sliding 1-minute windows every 30 s, per province, on the console
run 0 run "$root/examples/payments_local.sql"
contains "$work/out" "province_id"
contains "$work/out" "window_start"
contains "$work/err" "sink: finished after"
contains "$work/err" "100000 rows in"
checks=$((checks + 1))
# 6 provinces (0..5), each in 18 windows: the 100,000 payments 5 ms apart span
# 8 min 20 s, which 1-minute windows sliding by 30 s cover 18 times
rows=$(grep -cE '^\|[[:space:]]+[0-5]\|' "$work/out" || true)
[ "$rows" -eq 108 ] || fail "payments_local printed $rows window rows, expected 108"

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
