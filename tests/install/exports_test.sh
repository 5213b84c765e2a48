#!/usr/bin/env bash
# exports_test.sh — libdipper.so exports exactly the functions dipper.h
# declares: every one of them, and nothing else (no dp_*, no generated
# spark__connect__*, no data).  The declared list comes from the header as
# the compiler sees it (preprocessed, so comments and macros do not count);
# the exported one from the library's dynamic symbol table.
#   usage: exports_test.sh CC HEADER LIBRARY
# Before the verdict the comparison is tried on two doctored lists — one
# declaration removed (the library then leaks a symbol), one invented (the
# library then misses it) — and each must fail, so a check that cannot fail
# fails itself.
set -euo pipefail

cc="$1"
header="$2"
lib="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Every dipper_* name followed by "(" in the preprocessed header is a
# function declaration: the callback typedefs read "(*dipper_x_fn)(".
"$cc" -E -P -x c "$header" -o "$work/header.i"
grep -oE '\bdipper_[a-z0-9_]+[[:space:]]*\(' "$work/header.i" |
  sed -E 's/[[:space:]]*\($//' | sort -u >"$work/declared"
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u >"$work/exported"

# compare DECLARED EXPORTED: 0 when the lists agree; else each difference on stderr.
compare() {
  local leaked missing
  leaked="$(comm -13 "$1" "$2")"
  missing="$(comm -23 "$1" "$2")"
  [ -z "$leaked" ] && [ -z "$missing" ] && return 0
  [ -n "$leaked" ] &&
    echo "exported but not declared in dipper.h ($(wc -l <<<"$leaked")):" &&
    head -n 20 <<<"$leaked" | sed 's/^/  /'
  [ -n "$missing" ] &&
    echo "declared in dipper.h but not exported ($(wc -l <<<"$missing")):" &&
    sed 's/^/  /' <<<"$missing"
  return 1
}

status=0
n_declared="$(wc -l <"$work/declared")"
if [ "$n_declared" -lt 30 ]; then
  echo "FAIL: only $n_declared functions found in $header: the extraction is broken" >&2
  status=1
fi
# The checker's own check: a leak and a missing symbol, each made on purpose.
grep -vx dipper_version "$work/declared" >"$work/declared_minus"
{ cat "$work/declared"; echo dipper_no_such_function; } | sort >"$work/declared_plus"
if compare "$work/declared_minus" "$work/exported" >/dev/null; then
  echo "FAIL: the comparison missed a leaked symbol (dipper_version undeclared)" >&2
  status=1
fi
if compare "$work/declared_plus" "$work/exported" >/dev/null; then
  echo "FAIL: the comparison missed a missing symbol (dipper_no_such_function)" >&2
  status=1
fi
if ! compare "$work/declared" "$work/exported" >&2; then
  echo "FAIL: $lib does not export exactly what $header declares" >&2
  status=1
fi
echo "exports_test: $n_declared declared, $(wc -l <"$work/exported") exported"
exit "$status"
