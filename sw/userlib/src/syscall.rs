//! Raw system calls (seL4 RISC-V convention, see the `abi` crate).
pub use abi::syscall as nr;

/// `ecall` with up to six argument registers; returns a0.
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub fn raw(number: isize, args: [usize; 6]) -> usize {
    let ret: usize;
    // SAFETY: the kernel preserves every register but a0 (and those listed per call).
    unsafe {
        core::arch::asm!("ecall",
            inlateout("a0") args[0] => ret, in("a1") args[1], in("a2") args[2], in("a3") args[3],
            in("a4") args[4], in("a5") args[5], in("a7") number, options(nostack));
    }
    ret
}

#[cfg(not(target_arch = "riscv64"))]
pub fn raw(_number: isize, _args: [usize; 6]) -> usize {
    unimplemented!("system calls only exist on the RISC-V target")
}

pub fn yield_now() {
    raw(nr::YIELD, [0; 6]);
}

pub fn debug_put_char(c: u8) {
    raw(nr::DEBUG_PUT_CHAR, [c as usize, 0, 0, 0, 0, 0]);
}

/// End the whole system (debug builds of the kernel): status 0 is success.
pub fn debug_halt(status: usize) -> ! {
    raw(nr::DEBUG_HALT, [status, 0, 0, 0, 0, 0]);
    #[allow(clippy::empty_loop)]
    loop {}
}
