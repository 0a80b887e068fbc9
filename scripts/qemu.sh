#!/usr/bin/env bash
# Boot an image under QEMU virt. Used by `make run` and the boot tests.
#   scripts/qemu.sh IMAGE [extra qemu args...]          our firmware: IMAGE is firmware+kernel
#   FIRMWARE=opensbi scripts/qemu.sh KERNEL_BIN [...]   QEMU's bundled OpenSBI, kernel via -kernel
# SMP (default 4) and MEM (default 256M) select the machine. Works with stdin not a terminal.
set -euo pipefail
image=$1; shift
smp=${SMP:-4}
mem=${MEM:-256M}
if [ "${FIRMWARE:-ours}" = opensbi ]; then
  boot=(-bios default -kernel "$image")
else
  boot=(-bios "$image")
fi
exec qemu-system-riscv64 -machine virt -smp "$smp" -m "$mem" -nographic -serial mon:stdio \
  "${boot[@]}" "$@"
