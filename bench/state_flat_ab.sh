#!/usr/bin/env bash
# state_flat_ab.sh — bench/state_flat.c on two builds side by side: the
# operators of commit OLD (default: the first parent of this branch's first
# commit past main, i.e. main where the branch left it) and of the work tree,
# both release builds (-O2) of the same benchmark source, run alternately case
# by case so that the machine's load falls on both alike.
#   usage: bench/state_flat_ab.sh [OLD_COMMIT] [MAX_STATE] [MEASURED] [CASES...]
#   e.g.   bench/state_flat_ab.sh main 10000000 21 group window dedup distinct dedupfirst sort groupttl topn topnwindow
#          bench/state_flat_ab.sh main 1000000 21 overrun overlag overrows overpending
# Builds in build-ab/ (old tree exported with git archive) and build/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
old="${1:-$(git merge-base HEAD main)}"
max="${2:-10000000}"
measured="${3:-21}"
shift $(( $# > 3 ? 3 : $# ))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(group window dedup distinct dedupfirst sort groupttl topn topnwindow overrun overlag overrows overpending)

src="build-ab/old-src"
rev="$(git rev-parse "$old")"
if [ "$(cat "$src/.commit" 2>/dev/null)" != "$rev" ]; then
  rm -rf "$src" && mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  echo "$rev" >"$src/.commit"
fi
cmp -s bench/state_flat.c "$src/bench/state_flat.c" || cp bench/state_flat.c "$src/bench/"
opts=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DDIPPER_TESTS=OFF)
cmake -S "$src" -B build-ab/old "${opts[@]}" >/dev/null
ninja -C build-ab/old bench_state_flat >/dev/null
cmake -S . -B build "${opts[@]}" >/dev/null
ninja -C build bench_state_flat >/dev/null

echo "old: $(git rev-parse --short "$old")  new: $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${cases[@]}"; do
  for v in old new; do
    bin=build-ab/old/bench/bench_state_flat
    [ "$v" = new ] && bin=build/bench/bench_state_flat
    "$bin" "$c" "$max" "$measured" | sed "s/^/$v  /"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
