#!/usr/bin/env bash
# upsert_state_ab.sh — bench/upsert_state.c on two builds side by side: the
# upsert-kafka source of commit OLD (default: where this branch left main)
# and of the work tree, release builds (-O2) of the same benchmark source,
# run one after the other against the same broker.
#   usage: bench/upsert_state_ab.sh [OLD_COMMIT] [KEYS] [MEASURED] [CHANGED]
#   e.g.   flock -o /tmp/dipper-services.lock bench/upsert_state_ab.sh main 1000000 21 100
# Starts the broker (scripts/kafka-local) when none answers on 9092 and stops
# what it started.  Builds in build-ab/ (old tree exported with git archive) and build/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
old="${1:-$(git merge-base HEAD main)}"
keys="${2:-1000000}"
measured="${3:-21}"
changed="${4:-100}"

src="build-ab/old-src"
rev="$(git rev-parse "$old")"
if [ "$(cat "$src/.commit" 2>/dev/null)" != "$rev" ]; then
  rm -rf "$src" && mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  echo "$rev" >"$src/.commit"
fi
cmp -s bench/upsert_state.c "$src/bench/upsert_state.c" || cp bench/upsert_state.c "$src/bench/"
opts=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DDIPPER_TESTS=OFF)
cmake -S "$src" -B build-ab/old "${opts[@]}" >/dev/null
ninja -C build-ab/old bench_upsert_state >/dev/null
cmake -S . -B build "${opts[@]}" >/dev/null
ninja -C build bench_upsert_state >/dev/null

started=0
if ! (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null; then
  scripts/kafka-local start
  started=1
fi
trap '[ "$started" = 1 ] && scripts/kafka-local stop' EXIT

echo "old: $(git rev-parse --short "$old")  new: $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty')"
echo "keys $keys, $measured measured batches of $changed updated keys each"
for v in old new; do
  bin=build-ab/old/bench/bench_upsert_state
  [ "$v" = new ] && bin=build/bench/bench_upsert_state
  echo "== $v"
  "$bin" "$keys" "$measured" "$changed"
done
