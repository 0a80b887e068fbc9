//! M-mode firmware for QEMU `virt` and our Rocket SoC.
//!
//! Every hart enters `_start` in M-mode. The first one to arrive becomes the boot hart: it reads
//! the device tree (copied from the boot ROM to DRAM first), sets up the console and enters the kernel in S-mode (a0 = hart id,
//! a1 = device tree). The others configure their own CSRs and park in `wfi` until the kernel
//! starts them through SBI HSM. After that the firmware only runs in its trap handler.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod clint;
#[cfg(target_arch = "riscv64")]
mod console;
#[cfg(target_arch = "riscv64")]
mod csr;
#[cfg(target_arch = "riscv64")]
mod dtb;
#[cfg(target_arch = "riscv64")]
mod entry;
#[cfg(target_arch = "riscv64")]
mod exit;
#[cfg(target_arch = "riscv64")]
mod hart;
#[cfg(target_arch = "riscv64")]
mod hsm;
#[cfg(target_arch = "riscv64")]
mod ipi;
#[cfg(target_arch = "riscv64")]
mod machine;
#[cfg(target_arch = "riscv64")]
mod sbi;
#[cfg(target_arch = "riscv64")]
mod trap;

#[cfg(target_arch = "riscv64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    println!("[firmware] panic on hart {}: {}", csr::csrr!("mhartid"), info);
    exit::fail(1)
}
