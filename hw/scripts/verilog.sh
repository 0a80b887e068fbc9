#!/usr/bin/env bash
# Generate Verilog, DTS/DTB and constant copies for one SoC config into $OUT/<CONFIG>/.
#
#   verilog.sh CONFIG PREPARE_CMD
# Environment (set by hw/Makefile): HW_DIR REPO_DIR OUT GEN_PY ROCKET_JAR SBT_CMD TOP
#   VERILOG_CACHE   directory of outputs keyed on the input hash (default: none)
#
# The output directory is keyed on a hash of every input (the hw/ build files and main
# sources, patches, platform/, the rocket-chip jar, the config name, the cross compiler and
# dtc versions): when the hash matches, nothing runs. Otherwise the output for that hash is
# copied from $VERILOG_CACHE/<CONFIG>-<hash> if there (a fresh clone with a warm cache does not
# run sbt at all), else generated and stored there. Generation happens in a scratch directory
# that replaces the old output only on success.
set -euo pipefail
config=$1 prepare=$2
dest="$OUT/$config"
cache=${VERILOG_CACHE:-}
keep=8    # cache entries kept (each ~45 MB), newest first

# One file list for Verilator / yosys / Vivado with absolute paths into $dest: the top and the
# black boxes FIRRTL emitted (they lie beside the top; the list FIRRTL wrote names the scratch
# directory it ran in, so only the file names are taken from it).
filelist() {
  local dir=$1
  {
    echo "$dest/$TOP.v"
    if [ -f "$dir/firrtl_black_box_resource_files.f" ]; then
      grep -v '^\s*$' "$dir/firrtl_black_box_resource_files.f" | grep -v '\.\(cc\|h\)$' | xargs -rn1 basename | sed "s#^#$dest/#" || true
    fi
  } > "$dir/$TOP.f"
}

[ -f "$ROCKET_JAR" ] || { echo "verilog: missing $ROCKET_JAR (run make -C hw deps)" >&2; exit 1; }
hash=$( {
  echo "config=$config top=$TOP"
  # Only what feeds the generator: not hw/sim, hw/fpga, tests or docs.
  (cd "$HW_DIR" && find Makefile build.sbt project/build.properties sbt scripts patches bootrom \
     uintc/src/main soc/src/main -type f ! -name '*.md' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  sha256sum "$REPO_DIR/platform/platform.toml" "$GEN_PY" "$ROCKET_JAR" | cut -d' ' -f1
  riscv64-unknown-elf-gcc --version | head -1
  dtc --version
} | sha256sum | cut -d' ' -f1)

if [ -f "$dest/.inputs-hash" ] && [ "$(cat "$dest/.inputs-hash")" = "$hash" ] && [ -f "$dest/$TOP.v" ]; then
  # A build directory copied from elsewhere still lists the other place's files.
  [ "$(head -1 "$dest/$TOP.f" 2>/dev/null)" = "$dest/$TOP.v" ] || filelist "$dest"
  echo "verilog: $dest is up to date"
  exit 0
fi

tmp="$dest.tmp"
entry="$cache/$config-$hash"
if [ -n "$cache" ] && [ -f "$entry/$TOP.v" ] && [ -f "$entry/.inputs-hash" ]; then
  rm -rf "$tmp"
  mkdir -p "$OUT"
  cp -a "$entry" "$tmp"
  filelist "$tmp"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  touch "$entry"    # recently used: kept by the pruning below
  echo "verilog: $config from the cache ($entry)"
  exit 0
fi

eval "$prepare"    # rocket-src, sbt-root, bootrom: quick when up to date

log="$OUT/logs/verilog-$config.log"
mkdir -p "$OUT/logs"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "verilog: generating $config (log: $log)"
start=$(date +%s)
if ! eval "$SBT_CMD \"soc/runMain uintr.soc.Generator $tmp $config $OUT/bootrom/bootrom.img\"" > "$log" 2>&1; then
  tail -40 "$log" >&2
  echo "verilog: generation of $config failed (full log: $log)" >&2
  exit 1
fi

# The DTB the ROM carries is compiled by rocket-chip from this same DTS; keep a copy beside it.
dtc -q -I dts -O dtb -o "$tmp/$TOP.dtb" "$tmp/$TOP.dts"
cp "$OUT/bootrom/bootrom.img" "$OUT/bootrom/bootrom.elf" "$tmp/"
python3 "$GEN_PY" --c "$tmp/platform.h" --scala "$tmp/Platform.scala" --tcl "$tmp/platform.tcl" \
  --dts "$tmp/platform.dtsi" --rust "$tmp/platform.rs"

filelist "$tmp"

echo "$hash" > "$tmp/.inputs-hash"
rm -rf "$dest"
mv "$tmp" "$dest"
echo "verilog: $config done in $(( $(date +%s) - start )) s -> $dest"

# Into the cache (written aside, then renamed: a concurrent reader never sees half an entry),
# and only the newest $keep entries stay.
if [ -n "$cache" ]; then
  mkdir -p "$cache"
  part="$cache/.tmp.$$"
  rm -rf "$part"
  if cp -a "$dest" "$part" && { [ -e "$entry" ] || mv -T "$part" "$entry"; }; then
    echo "verilog: cached as $entry"
  fi
  rm -rf "$part"
  ls -1dt "$cache"/*-* 2>/dev/null | tail -n +$((keep + 1)) | xargs -r rm -rf
fi
