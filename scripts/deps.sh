#!/usr/bin/env bash
# Install everything the build needs from the package registries. Idempotent and quick when
# nothing is missing, so every make target that needs tools can call it.
#   scripts/deps.sh            all of it
#   CACHE_DIR=... scripts/deps.sh
set -euo pipefail

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

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install Debian packages" >&2; exit 1; }
  SUDO=sudo
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v rustup >/dev/null; then
  echo "deps: installing rustup (stable toolchain) from static.rust-lang.org"
  curl -sSf -o /tmp/rustup-init https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init
  chmod +x /tmp/rustup-init
  /tmp/rustup-init -y --profile minimal --default-toolchain stable --no-modify-path
fi
# The pinned toolchain (rust-toolchain.toml), with its components and targets.
pinned=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$(dirname "$0")/../rust-toolchain.toml")
rustup toolchain list | grep -q "^$pinned-" || rustup toolchain install "$pinned" --profile minimal --component rustfmt,clippy
installed=$(rustup +"$pinned" target list --installed)
for t in "${RUST_TARGETS[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup +"$pinned" target add "$t"
done
comps=$(rustup +"$pinned" component list --installed)
for c in rustfmt clippy; do
  grep -q "^$c" <<<"$comps" || rustup +"$pinned" component add "$c"
done
