#!/usr/bin/env bash
# A scripted GDB session on the 4-hart RTL through the debug module (hw/sim/README.md, "GDB"):
# boots IMAGE on the debug model, attaches OpenOCD (remote bitbang) and GDB once the kernel has
# booted, and runs: halt, registers of every hart, memory, a hardware breakpoint in the kernel,
# continue to it, step, resume. Everything goes to OUT (the transcript).
#   hw/sim/gdb-session.sh SIM IMAGE KERNEL_ELF OUT [BREAK_SYMBOL]
# Needs openocd and gdb-multiarch (Debian packages). Run it through the RTL lock.
set -euo pipefail
sim=$1 image=$2 elf=$3 out=$4 sym=${5:-kernel_trap_vector}
port=${JTAG_PORT:-9823}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/gdb-session.XXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

: > "$out"
log() { echo "# $*" | tee -a "$out"; }

log "sim: $sim +image=$image +jtag-port=$port"
"$sim" +image="$image" +jtag-port="$port" +progress=1000000 > "$tmp/sim.log" 2>&1 &
pids+=($!)
# wait for the kernel to finish booting (console line), at most ~20 min of host time
for _ in $(seq 1 1200); do
  grep -q "boot complete" "$tmp/sim.log" && break
  sleep 1
done
grep -q "boot complete" "$tmp/sim.log" || { log "kernel did not boot"; tail -20 "$tmp/sim.log" | tee -a "$out"; exit 1; }
log "kernel booted: $(grep -m1 'boot complete' "$tmp/sim.log")"

log "openocd -f hw/sim/openocd.cfg (JTAG_PORT=$port)"
JTAG_PORT=$port openocd -f "$here/openocd.cfg" > "$tmp/openocd.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  grep -q "Listening on port 3333" "$tmp/openocd.log" && break
  sleep 1
done
sed 's/^/openocd| /' "$tmp/openocd.log" | tee -a "$out"
grep -q "Listening on port 3333" "$tmp/openocd.log" || { log "openocd did not come up"; exit 1; }

cat > "$tmp/cmds.gdb" <<EOF
set pagination off
set confirm off
set remotetimeout 600
target extended-remote :3333
info threads
thread 1
info registers pc sp ra a0 a1 gp tp
x/2i \$pc
p/x \$priv
thread 2
info registers pc sp ra
x/4gx 0x80000000
x/4wx 0x80200000
hbreak $sym
continue
info registers pc ra sp
x/2i \$pc
bt 3
stepi
info registers pc
stepi
info registers pc
delete
info threads
detach
EOF
log "gdb-multiarch -batch -x cmds.gdb $elf"
sed 's/^/gdb-cmd| /' "$tmp/cmds.gdb" >> "$out"
timeout 1800 gdb-multiarch -q -batch -x "$tmp/cmds.gdb" "$elf" 2>&1 | tee -a "$out"
sleep 5
log "after detach: the harts run on (sim progress and console after the session)"
tail -5 "$tmp/sim.log" | tee -a "$out"
sed 's/^/openocd| /' "$tmp/openocd.log" | tail -15 >> "$out"
