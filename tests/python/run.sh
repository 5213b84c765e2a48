#!/usr/bin/env bash
# tests/python/run.sh MARKS LOG — run the Python package's tests (pytest, in
# the pinned venv of scripts/python-venv) whose markers match MARKS, output
# also to LOG (scripts/test shows its closing line).  ctest runs it
# (tests/python/CMakeLists.txt) with DIPPER_LIBRARY naming the build tree's
# libdipper.so and, for a sanitized build, DIPPER_PYTEST_PRELOAD naming the
# ASan runtime: a Python process must load it first (LD_PRELOAD), and only
# pytest's process (and the children it starts) gets it.
set -euo pipefail
marks="$1"
log="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="$("$root/scripts/python-venv")"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
preload=()
if [ -n "${DIPPER_PYTEST_PRELOAD:-}" ]; then
  # Leak checking stays with the C tests: CPython and pyarrow keep memory
  # to the end by design, and LSan cannot tell theirs from the library's.
  preload=(env "LD_PRELOAD=$DIPPER_PYTEST_PRELOAD"
           "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
           "UBSAN_OPTIONS=print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}")
fi
cd "$here"
set +e
"${preload[@]}" "$python" -m pytest -q -m "$marks" . 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
exit "$status"
