#!/usr/bin/env bash
# Install everything the build needs from the package registries. Idempotent and quick when
# nothing is missing, so every make target that needs tools can call it.
#   scripts/deps.sh              all of it
#   scripts/deps.sh rust         only the pinned Rust toolchain (rustup on a machine without it)
#   scripts/deps.sh --rustup-url the rustup-init download for this host, printed
#   CACHE_DIR=... scripts/deps.sh
# RUSTUP_INIT_URL overrides where rustup-init comes from (any URL curl reads, file:// included).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Debian packages: cross toolchain, emulator + its bundled OpenSBI, device-tree compiler,
# RTL simulator, JDK + Maven for the Chisel build, Tcl for the FPGA scripts' checks, and the
# aarch64 cross compiler for the board's PS-side loader, matplotlib for the benchmark plots,
# libslirp (+ glib headers its pkg-config file requires) for the simulated NIC's host network.
APT_PACKAGES=(
  qemu-system-misc opensbi
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  device-tree-compiler
  verilator
  default-jdk-headless maven
  tcl
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  python3 python3-matplotlib
  make g++ zlib1g-dev curl ca-certificates
  libslirp-dev libglib2.0-dev pkg-config
)
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

install_apt() {
  local missing=() p sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install Debian packages" >&2; exit 1; }
    sudo=sudo
  fi
  echo "deps: installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
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
    echo "deps: installing rustup and Rust $pinned from $url"
    curl -sSfL --proto '=https,file' -o "$tmp/rustup-init" "$url"
    chmod +x "$tmp/rustup-init"
    CARGO_HOME="$bin_home" "$tmp/rustup-init" -y --no-modify-path --profile minimal --default-toolchain "$pinned" \
      --component "$(IFS=,; echo "${RUST_COMPONENTS[*]}")" --target "$(IFS=,; echo "${RUST_TARGETS[*]}")"
    rm -rf "$tmp"
    command -v rustup >/dev/null || { echo "deps: rustup-init ran but rustup is not in $bin_home/bin" >&2; exit 1; }
  fi
  rustup toolchain list | grep -q "^$pinned-" || {
    echo "deps: installing Rust $pinned"
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
}

case "${1:-all}" in
  --rustup-url) rustup_url ;;
  rust) install_rust ;;
  all) install_apt "${APT_PACKAGES[@]}"; install_rust ;;
  *) echo "usage: scripts/deps.sh [all|rust|--rustup-url]" >&2; exit 2 ;;
esac
