//! The one linker script for user programs. `links = "userlib"` makes the path reach the build
//! script of every app that depends on userlib as `DEP_USERLIB_LINKER_SCRIPT`; the app passes
//! it to its own link (a dependency cannot add link arguments to another crate's binaries).
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("user.ld");
    fs::write(&out, include_str!("user.ld")).unwrap();
    println!("cargo:linker_script={}", out.display());
    println!("cargo:rerun-if-changed=user.ld");
}
