//! Writes the kernel linker script from the shared platform constants: loaded at
//! KERNEL_PHYS_BASE, linked in the Sv39 kernel window at KERNEL_WINDOW + KERNEL_PHYS_BASE.
use std::{env, fs, path::PathBuf};

fn main() {
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("riscv64") {
        return;
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let script = include_str!("link.ld.in")
        .replace("@KERNEL_PHYS_BASE@", &format!("{:#x}", platform::image::KERNEL_PHYS_BASE))
        .replace("@KERNEL_WINDOW@", &format!("{:#x}", platform::image::KERNEL_WINDOW));
    fs::write(out.join("kernel.ld"), script).unwrap();
    println!("cargo:rustc-link-arg-bins=-T{}", out.join("kernel.ld").display());
    println!("cargo:rerun-if-changed=link.ld.in");
}
