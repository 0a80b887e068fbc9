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

/// Invocation results, numbered as seL4's `seL4_Error`.
pub mod error {
    pub const NO_ERROR: usize = 0;
    pub const INVALID_ARGUMENT: usize = 1;
    pub const INVALID_CAPABILITY: usize = 2;
    pub const ILLEGAL_OPERATION: usize = 3;
    pub const RANGE_ERROR: usize = 4;
    pub const ALIGNMENT_ERROR: usize = 5;
    pub const FAILED_LOOKUP: usize = 6;
    pub const TRUNCATED_MESSAGE: usize = 7;
    pub const DELETE_FIRST: usize = 8;
    pub const REVOKE_FIRST: usize = 9;
    pub const NOT_ENOUGH_MEMORY: usize = 10;
}

/// Kernel object types for Untyped_Retype, numbered as seL4 on RISC-V (non-MCS).
pub mod object {
    pub const UNTYPED: usize = 0;
    pub const TCB: usize = 1;
    pub const ENDPOINT: usize = 2;
    pub const NOTIFICATION: usize = 3;
    pub const CNODE: usize = 4;
    pub const GIGA_PAGE: usize = 5;
    pub const PAGE_4K: usize = 6;
    pub const MEGA_PAGE: usize = 7;
    pub const PAGE_TABLE: usize = 8;
}
