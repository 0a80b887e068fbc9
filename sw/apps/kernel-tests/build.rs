//! User programs link low in the address space; the kernel maps them from their ELF headers.
use std::{env, fs, path::PathBuf};

fn main() {
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("riscv64") {
        return;
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("user.ld"), include_str!("user.ld")).unwrap();
    println!("cargo:rustc-link-arg-bins=-T{}", out.join("user.ld").display());
    println!("cargo:rerun-if-changed=user.ld");
}
