//! Runs the single generator (platform/gen.py) so Rust sees exactly what Scala, C++ and Tcl see.
use std::{env, path::PathBuf, process::Command};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../../platform");
    let spec = root.join("platform.toml");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("platform.rs");
    let status = Command::new("python3")
        .arg(root.join("gen.py"))
        .arg("--spec")
        .arg(&spec)
        .arg("--rust")
        .arg(&out)
        .status()
        .expect("python3 is needed to generate the platform constants (make deps installs it)");
    assert!(status.success(), "platform/gen.py failed");
    println!("cargo:rerun-if-changed={}", spec.display());
    println!("cargo:rerun-if-changed={}", root.join("gen.py").display());
}
