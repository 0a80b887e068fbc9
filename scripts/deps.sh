#!/usr/bin/env bash
# Install what the build needs from the package registries, one phase per kind of work.
# Idempotent and quick when nothing is missing, so every make target that needs tools can call it;
# each phase prints one line saying what it found or installs.
#   scripts/deps.sh sw           what the software and QEMU need (make run, make sw, make test-net)
#   scripts/deps.sh hw           what the hardware build, the RTL simulation and the FPGA checks need
#   scripts/deps.sh debug        GDB, OpenOCD and yosys (make area)
#   scripts/deps.sh rust         only the pinned Rust toolchain (part of sw)
#   scripts/deps.sh all          sw and hw (the default)
#   scripts/deps.sh --rustup-url the rustup-init download for this host, printed
# RUSTUP_INIT_URL overrides where rustup-init comes from (any URL curl reads, file:// included).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Software: the emulator and its bundled OpenSBI (the OpenSBI boot tests), the device-tree
# compiler (devtree's host tests), Python for the image builder and test drivers, matplotlib for
# the benchmark plots, a host C compiler (Rust build scripts and the load client link with it),
# curl for rustup-init.
APT_SW=(
  qemu-system-misc opensbi
  device-tree-compiler
  python3 python3-matplotlib
  make gcc libc6-dev curl ca-certificates
)
# Hardware: the bare-metal RISC-V C toolchain (boot ROM, RTL tests, the no-FP check), the RTL
# simulator with zlib and libslirp (+ the glib headers its pkg-config file requires) for the
# simulated NIC, JDK + Maven for the Chisel build, Tcl for the FPGA scripts' checks, the aarch64
# cross compiler for the board's PS-side loader.
APT_HW=(
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  verilator g++ zlib1g-dev
  libslirp-dev libglib2.0-dev pkg-config
  default-jdk-headless maven
  tcl
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)
# Debugging and estimates: GDB for QEMU's and the simulator's stubs, OpenOCD for JTAG (the
# simulator's DEBUG=1 build and the board), yosys for make area.
APT_DEBUG=(gdb-multiarch openocd yosys)
RUST_TARGETS=(riscv64imac-unknown-none-elf riscv64gc-unknown-none-elf)
RUST_COMPONENTS=(rustfmt clippy)

# The Rust host triple of this machine: rustup-init is built per host.
host_triple() {
  local arch
  arch=$(uname -m)
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    riscv64) arch=riscv64gc ;;
    *) echo "deps: no rustup-init for machine type $arch" >&2; return 1 ;;
  esac
  [ "$(uname -s)" = Linux ] || { echo "deps: a Linux host is needed (found $(uname -s))" >&2; return 1; }
  echo "$arch-unknown-linux-gnu"
}

rustup_url() {
  echo "${RUSTUP_INIT_URL:-https://static.rust-lang.org/rustup/dist/$(host_triple)/rustup-init}"
}

# install_apt PHASE PACKAGE...
install_apt() {
  local phase=$1 missing=() p sudo=""
  shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: $phase: Debian packages present ($#)"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install Debian packages" >&2; exit 1; }
    sudo=sudo
  fi
  echo "deps: $phase: apt-get update, then installing ${#missing[@]} Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  # apt's own progress, one line per package set up: enough to see it move.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" |
    { grep --line-buffered '^Setting up ' || true; } | sed -u 's/^/deps:   /'
  echo "deps: $phase: Debian packages installed"
}

# rustup and the pinned toolchain (rust-toolchain.toml) with its components and targets.
# rustup-init puts rustup's binaries in $CARGO_HOME/bin; the Makefile exports CARGO_HOME for the
# crate cache only, so the binaries go to the usual ~/.cargo/bin (RUSTUP_BIN_HOME overrides), the
# directory the Makefile puts on PATH and a shell set up by rustup already has.
install_rust() {
  local pinned bin_home installed comps t c
  pinned=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$ROOT/rust-toolchain.toml")
  bin_home=${RUSTUP_BIN_HOME:-$HOME/.cargo}
  export PATH="$bin_home/bin:$PATH"
  if ! command -v rustup >/dev/null; then
    local url tmp
    url=$(rustup_url)
    tmp=$(mktemp -d)
    echo "deps: rust: installing rustup and Rust $pinned from $url"
    curl -sSfL --proto '=https,file' -o "$tmp/rustup-init" "$url"
    chmod +x "$tmp/rustup-init"
    CARGO_HOME="$bin_home" "$tmp/rustup-init" -y --no-modify-path --profile minimal --default-toolchain "$pinned" \
      --component "$(IFS=,; echo "${RUST_COMPONENTS[*]}")" --target "$(IFS=,; echo "${RUST_TARGETS[*]}")"
    rm -rf "$tmp"
    command -v rustup >/dev/null || { echo "deps: rustup-init ran but rustup is not in $bin_home/bin" >&2; exit 1; }
  fi
  rustup toolchain list | grep -q "^$pinned-" || {
    echo "deps: rust: installing Rust $pinned"
    rustup toolchain install "$pinned" --profile minimal --component "$(IFS=,; echo "${RUST_COMPONENTS[*]}")"
  }
  installed=$(rustup +"$pinned" target list --installed)
  for t in "${RUST_TARGETS[@]}"; do
    grep -qx "$t" <<<"$installed" || rustup +"$pinned" target add "$t"
  done
  comps=$(rustup +"$pinned" component list --installed)
  for c in "${RUST_COMPONENTS[@]}"; do
    grep -q "^$c" <<<"$comps" || rustup +"$pinned" component add "$c"
  done
  echo "deps: rust: $pinned with ${RUST_TARGETS[*]}, ${RUST_COMPONENTS[*]}"
}

[ $# -gt 0 ] || set -- all
for phase in "$@"; do
  case "$phase" in
    --rustup-url) rustup_url ;;
    rust) install_rust ;;
    sw) install_apt sw "${APT_SW[@]}"; install_rust ;;
    hw) install_apt hw "${APT_HW[@]}" ;;
    debug) install_apt debug "${APT_DEBUG[@]}" ;;
    all) install_apt sw "${APT_SW[@]}"; install_rust; install_apt hw "${APT_HW[@]}" ;;
    *) echo "usage: scripts/deps.sh [sw|hw|debug|rust|all|--rustup-url]..." >&2; exit 2 ;;
  esac
done
