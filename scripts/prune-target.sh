#!/usr/bin/env bash
# Removes from the shared CARGO_TARGET_DIR the build output of this workspace's own crates that no
# build has touched for three hours. Each clone builds those crates again under a hash of its own
# path, so a machine that runs CI on fresh clones into one target dir would otherwise gain about
# 10 GB a run until its disk is full. Third-party crates stay: every clone reuses them.
#
#   CARGO_TARGET_DIR=… bash scripts/prune-target.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
deps="$target/debug/deps"
[ -d "$deps" ] || exit 0
own="$(cargo metadata --no-deps --format-version 1 --offline 2>/dev/null | python3 -c '
import json, sys
meta = json.load(sys.stdin)
print("\n".join(sorted({t["name"].replace("-", "_") for p in meta["packages"] for t in p["targets"]})))')" ||
  { echo "prune-target: cannot list the workspace's crates; nothing removed" >&2; exit 0; }
removed=0
while IFS= read -r -d '' file; do
  name="$(basename "$file")"
  name="${name#lib}"
  name="${name%%-*}"
  if grep -qx "$name" <<<"$own"; then
    rm -f "$file"
    removed=$((removed + 1))
  fi
done < <(find "$deps" -maxdepth 1 -type f -mmin +180 -print0)
echo "prune-target: removed $removed stale build outputs of this workspace from $deps" >&2
