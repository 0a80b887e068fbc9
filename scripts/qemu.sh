#!/usr/bin/env bash
# Boot an image under QEMU virt. Used by `make run` and the boot tests.
#   scripts/qemu.sh IMAGE [extra qemu args...]          our firmware: IMAGE is firmware+kernel
#   FIRMWARE=opensbi scripts/qemu.sh KERNEL_BIN [...]   QEMU's bundled OpenSBI, kernel via -kernel
# SMP (default 4) and MEM (default 256M) select the machine. Works with stdin not a terminal.
# TCG=single|multi|auto (default auto) picks QEMU's TCG threads; an -accel argument wins.
set -euo pipefail
image=$1; shift
smp=${SMP:-4}
mem=${MEM:-256M}
if [ "${FIRMWARE:-ours}" = opensbi ]; then
  boot=(-bios default -kernel "$image")
else
  boot=(-bios "$image")
fi

# QEMU gives each vCPU a host thread of its own; with fewer free host cores than harts those
# threads preempt one another in the middle of cross-hart hand-shakes and the system crawls
# (the network system served ~25 requests/s that way on a busy 2-core host). One thread running
# every vCPU in turn is then faster and steadier. Free cores: the host's cores less its 1-minute
# load average.
accel=()
if [[ " $* " != *" -accel "* ]]; then
  tcg=${TCG:-auto}
  if [ "$tcg" = auto ]; then
    cores=$(nproc)
    free=$(awk -v c="$cores" '{ f = c - $1; print (f < 0 ? 0 : int(f + 0.5)) }' /proc/loadavg)
    tcg=multi
    if [ "$free" -lt "$smp" ]; then
      tcg=single
      echo "qemu.sh: $smp harts, $free of $cores host cores free: one TCG thread runs every vCPU (TCG=multi: one each)" >&2
    fi
  fi
  case "$tcg" in
    single) accel=(-accel tcg,thread=single) ;;
    multi) accel=(-accel tcg,thread=multi) ;;
    *) echo "qemu.sh: TCG=$tcg: single, multi or auto" >&2; exit 2 ;;
  esac
fi
exec qemu-system-riscv64 -machine virt -smp "$smp" -m "$mem" -nographic -serial mon:stdio \
  "${accel[@]}" "${boot[@]}" "$@"
