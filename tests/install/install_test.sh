#!/usr/bin/env bash
# install_test.sh — dipper as installed, used as a user would: `cmake
# --install` into a temporary prefix, the installed `dipper` run with no
# LD_LIBRARY_PATH, and a small C program built against the installed header
# and libraries through pkg-config, once shared (`pkg-config --libs dipper`,
# found at run time through the .pc file's rpath) and once static (libdipper.a
# with `pkg-config --static --libs dipper`, every library it names found).
# Each must build, run and print what is expected; anything else fails.
#   usage: install_test.sh CMAKE BUILD_DIR CC [LINK_FLAGS]
# LINK_FLAGS: what the build's own programs link with — the sanitizer flags
# in an ASan build, whose installed library is instrumented.
set -euo pipefail

cmake="$1"
build="$2"
cc="$3"
read -r -a link_flags <<<"${4:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
failures=0
checks=0
unset LD_LIBRARY_PATH

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# step NAME CMD...: runs CMD with its output in $work/NAME.log; a failure is
# recorded with the log.  Returns CMD's status.
step() {
  local name="$1" status=0
  shift
  checks=$((checks + 1))
  "$@" >"$work/$name.log" 2>&1 </dev/null || status=$?
  if [ "$status" -ne 0 ]; then
    fail "$name: '$*' exited $status"
    sed 's/^/  | /' "$work/$name.log" >&2
  fi
  return "$status"
}

# expect NAME TEXT: $work/NAME.log is exactly TEXT.
expect() {
  checks=$((checks + 1))
  if [ "$(cat "$work/$1.log")" != "$2" ]; then
    fail "$1 printed something else than '$2':"
    sed 's/^/  | /' "$work/$1.log" >&2
  fi
}

if ! step install "$cmake" --install "$build" --prefix "$prefix"; then
  echo "install_test: the install failed; nothing else to check" >&2
  exit 1
fi
# The library directory as CMake chose it (lib, lib64 or lib/<multiarch>).
pc="$(cd "$prefix" && find . -path '*/pkgconfig/dipper.pc' | head -n 1)"
if [ -z "$pc" ]; then
  fail "no dipper.pc under $prefix"
  exit 1
fi
libdir="$prefix/$(dirname "$(dirname "${pc#./}")")"
for f in bin/dipper include/dipper.h; do
  checks=$((checks + 1))
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
for f in libdipper.a libdipper.so; do
  checks=$((checks + 1))
  [ -e "$libdir/$f" ] || fail "not installed: $libdir/$f"
done

# The installed command, with no library path of any kind.
if step version "$prefix/bin/dipper" --version; then
  expect version "dipper 0.1.0"
fi
if step check "$prefix/bin/dipper" check -e 'SELECT 1'; then
  expect check ""
fi

# A program on the public header only.
cat >"$work/prog.c" <<'C'
#include <dipper.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  dipper *db;
  if (dipper_open(&db, NULL) != DIPPER_OK) return 1;
  dipper_program *prog = NULL;
  dipper_code rc = dipper_compile(db, "SELECT 1 AS one", (size_t)-1, "prog.sql", &prog);
  printf("dipper %s (header %s): compile %s\n", dipper_version(), DIPPER_VERSION,
         dipper_strerror(rc));
  dipper_program_free(prog);
  dipper_close(db);
  return rc == DIPPER_OK && strcmp(dipper_version(), DIPPER_VERSION) == 0 ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$libdir/pkgconfig"
read -r -a cflags <<<"$(pkg-config --cflags dipper)"
read -r -a libs <<<"$(pkg-config --libs dipper)"
read -r -a static_libs <<<"$(pkg-config --static --libs dipper)"

# Shared: libdipper.so found at run time through the rpath the .pc adds.
if step build_shared "$cc" "$work/prog.c" -o "$work/prog_shared" "${cflags[@]}" \
     ${link_flags[@]+"${link_flags[@]}"} "${libs[@]}"; then
  checks=$((checks + 1))
  readelf -d "$work/prog_shared" | grep -q 'NEEDED.*libdipper\.so' ||
    fail "prog_shared does not link libdipper.so"
  step run_shared "$work/prog_shared" &&
    expect run_shared "dipper 0.1.0 (header 0.1.0): compile not an error"
fi
# Static: libdipper.a, then every library --static names (each must be there:
# -lsasl2 from rdkafka.pc is one); --as-needed drops what the archive did not
# use, the -ldipper of the shared library among them.
if step build_static "$cc" "$work/prog.c" -o "$work/prog_static" "${cflags[@]}" \
     ${link_flags[@]+"${link_flags[@]}"} "$libdir/libdipper.a" -Wl,--as-needed "${static_libs[@]}"; then
  checks=$((checks + 1))
  if readelf -d "$work/prog_static" | grep -q 'NEEDED.*libdipper'; then
    fail "prog_static links libdipper.so, not libdipper.a"
  fi
  step run_static "$work/prog_static" &&
    expect run_static "dipper 0.1.0 (header 0.1.0): compile not an error"
fi

echo "install_test: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
