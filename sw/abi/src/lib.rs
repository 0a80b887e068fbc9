//! The user/kernel ABI, shared by the kernel and `userlib` (one source of truth).
//!
//! System calls follow seL4's RISC-V convention: `ecall` with the (negative) syscall number in
//! a7, the capability/destination in a0, message info in a1, message registers 0..3 in a2..a5.
//! The numbers are seL4's non-MCS numbers; where we add calls, they are said to be ours.
#![no_std]

pub mod syscall {
    pub const CALL: isize = -1;
    pub const REPLY_RECV: isize = -2;
    pub const SEND: isize = -3;
    pub const NB_SEND: isize = -4;
    pub const RECV: isize = -5;
    pub const REPLY: isize = -6;
    pub const YIELD: isize = -7;
    pub const NB_RECV: isize = -8;
    pub const DEBUG_PUT_CHAR: isize = -9;
    pub const DEBUG_DUMP_SCHEDULER: isize = -10;
    /// seL4 halts the machine; ours also takes an exit status in a0 (0 = success) so test
    /// root tasks can end a QEMU or RTL run with a verdict.
    pub const DEBUG_HALT: isize = -11;
}

/// Layout of the root task's address space (the low half of Sv39; the kernel owns the top).
pub mod layout {
    /// Highest user address + 1: Sv39 low half.
    pub const USER_TOP: usize = 1 << 38;
    /// The root task's initial stack (grows down from here).
    pub const ROOT_STACK_TOP: usize = 0x3f_0000_0000;
    pub const ROOT_STACK_PAGES: usize = 16;
}
