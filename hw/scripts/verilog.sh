#!/usr/bin/env bash
# Generate Verilog, DTS/DTB and constant copies for one SoC config into $OUT/<CONFIG>/.
#
#   verilog.sh CONFIG PREPARE_CMD
# Environment (set by hw/Makefile): HW_DIR REPO_DIR OUT GEN_PY ROCKET_JAR SBT_CMD TOP
#
# The output directory is keyed on a hash of every input (the hw/ build files and main
# sources, patches, platform/, the rocket-chip jar, the config name, the cross compiler and
# dtc versions): when the hash matches, nothing runs. Generation happens in a scratch
# directory that replaces the old output only on success.
set -euo pipefail
config=$1 prepare=$2
dest="$OUT/$config"

eval "$prepare"    # rocket-src, sbt-root, bootrom: quick when up to date

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
  echo "verilog: $dest is up to date"
  exit 0
fi

tmp="$dest.tmp"
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

# One file list for Verilator / yosys / Vivado: the top and the black boxes FIRRTL emitted.
{
  echo "$dest/$TOP.v"
  if [ -f "$tmp/firrtl_black_box_resource_files.f" ]; then
    sed "s#^$tmp/#$dest/#; s#^\([^/]\)#$dest/\1#" "$tmp/firrtl_black_box_resource_files.f" | grep -v '\.\(cc\|h\)$' || true
  fi
} > "$tmp/$TOP.f"

echo "$hash" > "$tmp/.inputs-hash"
rm -rf "$dest"
mv "$tmp" "$dest"
echo "verilog: $config done in $(( $(date +%s) - start )) s -> $dest"
