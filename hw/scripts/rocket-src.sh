#!/usr/bin/env bash
# Extract rocket-chip's published -sources.jar into OUT_DIR and apply our patches in order.
#
#   rocket-src.sh SOURCES_JAR PATCH_DIR OUT_DIR
#
# The result is keyed on the jar and on the exact patch set (names and contents): when either
# changes, the tree is rebuilt from scratch, so a removed or edited patch never lingers. When
# nothing changed the script returns at once without touching a file (sbt's incremental compiler
# then has nothing to do). The tree is built beside OUT_DIR and moved into place only once every
# patch applied, so a failed patch leaves no half-patched tree behind.
set -euo pipefail

jar=$1 patch_dir=$2 out=$3

[ -f "$jar" ] || { echo "rocket-src: missing $jar (run make -C hw deps)" >&2; exit 1; }

shopt -s nullglob
patches=("$patch_dir"/*.patch)   # glob order = C-locale name order: 0001-..., 0002-...
shopt -u nullglob

key=$( { sha256sum "$jar" | cut -d' ' -f1
         for p in "${patches[@]}"; do echo "$(basename "$p")"; sha256sum < "$p"; done
       } | sha256sum | cut -d' ' -f1)

if [ -f "$out/.uintr-stamp" ] && [ "$(cat "$out/.uintr-stamp")" = "$key" ]; then
  exit 0
fi

tmp="$out.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp"
(cd "$tmp" && unzip -q "$jar" -x 'META-INF/*')

for p in "${patches[@]}"; do
  echo "rocket-src: applying $(basename "$p")"
  if ! patch -d "$tmp" -p1 --batch --forward --no-backup-if-mismatch --silent < "$p"; then
    echo "rocket-src: patch $(basename "$p") does not apply to rocket-chip 1.2.6 sources" >&2
    exit 1
  fi
done

# Keep mtimes of untouched files stable across re-extractions (unzip restores the jar's times);
# zinc also compares content hashes, so only patched files are recompiled.
echo "$key" > "$tmp/.uintr-stamp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "rocket-src: $out ready (${#patches[@]} patch(es))"
