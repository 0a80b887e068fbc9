//! Linked like every user program, with userlib's script (see sw/userlib/build.rs).
fn main() {
    // The point filter (src/points.rs) is compiled in.
    println!("cargo:rerun-if-env-changed=IPC_BENCH_ONLY");
    println!("cargo:rerun-if-env-changed=IPC_BENCH_PROFILE");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("riscv64") {
        return;
    }
    let ld = std::env::var("DEP_USERLIB_LINKER_SCRIPT").expect("userlib exports its linker script");
    println!("cargo:rustc-link-arg-bins=-T{ld}");
}
