//! Writes the linker script from the shared platform constants (firmware at the start of DRAM).
use std::{env, fs, path::PathBuf};

fn main() {
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("riscv64") {
        return;
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let script = include_str!("link.ld.in")
        .replace("@FIRMWARE_BASE@", &format!("{:#x}", platform::image::FIRMWARE_BASE))
        .replace("@FIRMWARE_SIZE@", &format!("{:#x}", platform::image::FIRMWARE_SIZE));
    fs::write(out.join("firmware.ld"), script).unwrap();
    println!("cargo:rustc-link-arg-bins=-T{}", out.join("firmware.ld").display());
    println!("cargo:rerun-if-changed=link.ld.in");
}
