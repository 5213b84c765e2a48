#!/usr/bin/env bash
# shell_test.sh — `dipper shell`: statements through a pipe (multi-line, a
# caret error then a good statement on the same catalog, the dot-commands,
# a bounded streaming query) and Ctrl-C on a terminal (a pty from python3's
# standard library): the running query stops, the shell stays and answers.
#   usage: shell_test.sh PATH/TO/dipper
set -euo pipefail

dipper="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# same FILE EXPECTED — FILE holds exactly EXPECTED.
same() {
  checks=$((checks + 1))
  if [ "$(cat "$1")" != "$2" ]; then
    fail "$(basename "$1") differs"
    diff <(printf '%s\n' "$2") "$1" | sed 's/^/  | /' >&2 || true
  fi
}

cat >"$work/in.sql" <<'SQL'
CREATE TABLE t (a INT, b STRING)
  WITH ('connector' = 'datagen', 'number-of-rows' = '3',
        'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');
SELECT nope
  FROM t;
SELECT a, 'x;y' AS s -- a comment; with a semicolon
FROM t
WHERE a < 3;
.tables
.schema t
.mode csv
SELECT a FROM t /* ; */ WHERE a > 1;
CREATE TABLE p (a INT) WITH ('connector' = 'print');
INSERT INTO p SELECT a * 10 FROM t;
SQL
status=0
NO_COLOR= "$dipper" shell <"$work/in.sql" >"$work/out" 2>"$work/err" || status=$?
checks=$((checks + 1))
[ "$status" -eq 1 ] || fail "a piped script with an error exited $status, expected 1"
same "$work/out" 'a | s
--+----
1 | x;y
2 | x;y
(2 rows)
t
CREATE TABLE `t` (
  `a` INT,
  `b` STRING
) WITH (
  '\''connector'\'' = '\''datagen'\'',
  '\''number-of-rows'\'' = '\''3'\'',
  '\''fields.a.kind'\'' = '\''sequence'\'',
  '\''fields.a.start'\'' = '\''1'\'',
  '\''fields.a.end'\'' = '\''3'\''
);
a
2
3
-------------------------------------------
Batch: 0
-------------------------------------------
+--+
| a|
+--+
|10|
|20|
|30|
+--+'
checks=$((checks + 1))
grep -q '^p: finished after .*: 3 rows in, 3 rows out' "$work/err" || fail "no summary of the INSERT"
grep -v '^p: ' "$work/err" >"$work/diag"
same "$work/diag" '<shell>:1:8: error: unknown column `nope`
   1 | SELECT nope
     |        ^~~~'

# .mode json, .help, an unknown dot-command, a statement without its ';' at the end
printf '.mode json\nSELECT 1 AS one, CAST(NULL AS INT) AS n;\n.help\n.nope\nSELECT 2 AS two' |
  "$dipper" shell >"$work/out" 2>"$work/err" || true
checks=$((checks + 1))
grep -qx '{"one": 1, "n": null}' "$work/out" || fail ".mode json: $(cat "$work/out")"
checks=$((checks + 1))
grep -q '^.schema \[NAME\]' "$work/out" || fail ".help lacks .schema"
checks=$((checks + 1))
grep -qx '{"two": 2}' "$work/out" || fail "the last statement without ';' did not run"
checks=$((checks + 1))
grep -q "unknown command '.nope'" "$work/err" || fail ".nope: $(cat "$work/err")"

# Ctrl-C on a terminal: an unbounded query stops, the shell answers the next
# statement, Ctrl-C at the prompt drops the half-typed line, .quit leaves 0.
checks=$((checks + 1))
if ! HOME="$work" timeout 60 python3 - "$dipper" >"$work/pty.log" 2>&1 <<'PY'; then
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1]])  # `dipper` alone on a terminal: the shell
out = b''
seen = 0
def until(token, timeout=20):
    """Wait for token after what the previous call consumed."""
    global out, seen
    end = time.time() + timeout
    while time.time() < end:
        at = out.find(token, seen)
        if at >= 0:
            seen = at + len(token)
            return
        if select.select([fd], [], [], 0.2)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    sys.exit('no %r in:\n%s' % (token, out.decode(errors='replace')))
until(b'dipper> ')
os.write(fd, b"CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');\n")
until(b'dipper> ')
os.write(fd, b"SELECT id\n FROM g;\n")
until(b'Batch: 3')
os.write(fd, b'\x03')
until(b'select#1: stopped after')
mark = seen
until(b'dipper> ')
os.write(fd, b"SELECT 41 + 1 AS answer;\n")
until(b'(1 row)')
if b'    42' not in out[mark:]:
    sys.exit('no answer 42')
os.write(fd, b"SELECT 'half typed")
time.sleep(0.3)
os.write(fd, b'\x03')
time.sleep(0.3)
os.write(fd, b'.quit\n')
_, status = os.waitpid(pid, 0)
if status != 0:
    sys.exit('status %d after .quit' % status)
PY
  fail "Ctrl-C on a terminal: $(cat "$work/pty.log")"
fi
checks=$((checks + 1))
grep -q "SELECT.04041.040+.0401" "$work/.dipper_history" 2>/dev/null || fail "no history in ~/.dipper_history (vis(3)-encoded by libedit)"

# The live progress line on a terminal: a steady 100 rows/s shows about
# 100 rows/s out on every redraw after the first second (a rate over a few
# seconds, not over the 100 ms between redraws).
cat >"$work/steady.sql" <<'SQL'
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');
CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT id FROM g;
SQL
checks=$((checks + 1))
if ! timeout 30 python3 - "$dipper" "$work/steady.sql" >"$work/rate.log" 2>&1 <<'PY'; then
import os, pty, re, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], 'run', sys.argv[2]])
out, end = b'', time.time() + 4
while time.time() < end:
    if select.select([fd], [], [], 0.1)[0]:
        out += os.read(fd, 65536)
os.kill(pid, signal.SIGINT)
os.waitpid(pid, 0)
rates = [int(r) for r in re.findall(rb'(\d+) rows/s out', out)]
late = rates[len(rates) // 3:]
if not late or min(late) < 50 or max(late) > 200:
    sys.exit('rows/s out over the run: %s' % rates)
PY
  fail "steady rate: $(cat "$work/rate.log")"
fi

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
