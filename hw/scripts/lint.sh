#!/usr/bin/env bash
# Verilator lint of every generated top under OUT (one per config directory).
#   lint.sh OUT TOP
# The only expected warning is the latch in EICG_wrapper.v (-Wno-LATCH); --no-timing because
# some rocket-chip sim sources contain delays.
set -euo pipefail
out=$1 top=$2
shopt -s nullglob
lists=("$out"/*/"$top.f")
if [ ${#lists[@]} -eq 0 ]; then
  echo "lint: no generated Verilog under $out (run make verilog first)" >&2
  exit 1
fi
pass=0 fail=0
for f in "${lists[@]}"; do
  dir=$(dirname "$f")
  if verilator --lint-only --no-timing -Wno-LATCH -Wno-fatal --top-module "$top" -f "$f" \
       > "$dir/lint.log" 2>&1 && ! grep -q '%Error' "$dir/lint.log"; then
    echo "lint: $(basename "$dir") ok ($(grep -c '%Warning' "$dir/lint.log" || true) warning(s), see $dir/lint.log)"
    pass=$((pass + 1))
  else
    echo "lint: $(basename "$dir") FAILED:" >&2
    grep '%Error' "$dir/lint.log" | head -20 >&2 || tail -20 "$dir/lint.log" >&2
    fail=$((fail + 1))
  fi
done
echo "lint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
