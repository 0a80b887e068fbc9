//! Raw system calls (seL4 RISC-V convention, see the `abi` crate): a7 = number, a0 = cptr,
//! a1 = message info, a2..a5 = message registers 0..3; the kernel answers in the same registers
//! (a0 = badge). Every other register is preserved by the kernel.
//!
//! The IPC calls here take and return MR0..3 explicitly ([`SysRet`]); [`crate::ipc`] has the
//! versions that stage them in the thread's IPC buffer (libsel4's `seL4_Call(dest, info)` style).
//! They are `#[inline]`: out of line, each was a call across crates, and the caller decoded a
//! message info and moved registers it never read.
pub use abi::syscall as nr;
use abi::MessageInfo;

/// What an IPC system call returns: (badge / a0, message info, MR0..3).
pub type SysRet = (usize, MessageInfo, [usize; 4]);

/// `ecall` with up to six argument registers; returns a0 (a1..a5 are inputs only; use
/// [`sys`] when the call returns values in them).
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub fn raw(number: isize, args: [usize; 6]) -> usize {
    sys6(number, args)[0]
}

/// `ecall` with a0..a5 in and out, a7 = number.
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub fn sys6(number: isize, args: [usize; 6]) -> [usize; 6] {
    let mut r = args;
    // SAFETY: the kernel preserves every register but a0..a5, which are declared in/out; the
    // kernel may write the IPC buffer, so the asm is not `nomem`.
    unsafe {
        core::arch::asm!("ecall",
            inlateout("a0") r[0], inlateout("a1") r[1], inlateout("a2") r[2], inlateout("a3") r[3],
            inlateout("a4") r[4], inlateout("a5") r[5], in("a7") number, options(nostack));
    }
    r
}

#[cfg(not(target_arch = "riscv64"))]
pub fn raw(number: isize, args: [usize; 6]) -> usize {
    sys6(number, args)[0]
}

#[cfg(not(target_arch = "riscv64"))]
pub fn sys6(_number: isize, _args: [usize; 6]) -> [usize; 6] {
    unimplemented!("system calls only exist on the RISC-V target")
}

/// An IPC-shaped system call: a0 = cptr, a1 = info, a2..a5 = MR0..3.
#[inline(always)]
pub fn sys(number: isize, cptr: usize, info: MessageInfo, mrs: [usize; 4]) -> SysRet {
    let r = sys6(number, [cptr, info.to_word(), mrs[0], mrs[1], mrs[2], mrs[3]]);
    (r[0], MessageInfo::from_word(r[1]), [r[2], r[3], r[4], r[5]])
}

/// seL4_Send: blocking send on an endpoint (or Signal on a notification).
#[inline]
pub fn send(dest: usize, info: MessageInfo, mrs: [usize; 4]) {
    sys(nr::SEND, dest, info, mrs);
}

/// seL4_NBSend: send only if a receiver is waiting (dropped otherwise).
#[inline]
pub fn nb_send(dest: usize, info: MessageInfo, mrs: [usize; 4]) {
    sys(nr::NB_SEND, dest, info, mrs);
}

/// seL4_Call: send and wait for the reply (also how every kernel invocation is made).
#[inline]
pub fn call(dest: usize, info: MessageInfo, mrs: [usize; 4]) -> SysRet {
    sys(nr::CALL, dest, info, mrs)
}

/// seL4_Reply: answer the thread whose Call this thread last received.
#[inline]
pub fn reply(info: MessageInfo, mrs: [usize; 4]) {
    sys(nr::REPLY, 0, info, mrs);
}

/// seL4_Recv: wait on an endpoint or notification; returns the badge in `.0`.
#[inline]
pub fn recv(src: usize) -> SysRet {
    sys(nr::RECV, src, MessageInfo::default(), [0; 4])
}

/// seL4_NBRecv: poll; with nothing to receive the badge and info are 0.
#[inline]
pub fn nb_recv(src: usize) -> SysRet {
    sys(nr::NB_RECV, src, MessageInfo::default(), [0; 4])
}

/// seL4_ReplyRecv: reply to the last caller, then wait on `src`.
#[inline]
pub fn reply_recv(src: usize, info: MessageInfo, mrs: [usize; 4]) -> SysRet {
    sys(nr::REPLY_RECV, src, info, mrs)
}

pub fn yield_now() {
    raw(nr::YIELD, [0; 6]);
}

/// seL4_Signal: a Send of an empty message on a notification cap.
#[inline]
pub fn signal(ntfn: usize) {
    send(ntfn, MessageInfo::default(), [0; 4]);
}

/// seL4_Wait: block until the notification is signalled; returns the accumulated badge.
#[inline]
pub fn wait(ntfn: usize) -> usize {
    recv(ntfn).0
}

/// seL4_Poll: the accumulated badge, or 0 if the notification was not signalled.
#[inline]
pub fn poll(ntfn: usize) -> usize {
    nb_recv(ntfn).0
}

/// DebugPutChar with the Console cap `console`: 1 if the kernel's console ring took the byte,
/// 0 if it is full (try again later), `usize::MAX` if `console` is not a Console cap.
pub fn debug_put_char(console: usize, c: u8) -> usize {
    raw(nr::DEBUG_PUT_CHAR, [c as usize, console, 0, 0, 0, 0])
}

/// DebugPutString with the Console cap `console`: up to `len` bytes of the IPC buffer's
/// message area from byte `offset` (already placed there); returns how many the console ring
/// took (a few per call; 0: it is full, try again later), `usize::MAX` without an IPC buffer
/// or the cap.
pub fn debug_put_string_raw(console: usize, len: usize, offset: usize) -> usize {
    raw(nr::DEBUG_PUT_STRING, [len, offset, console, 0, 0, 0])
}

/// The cycle counter of the hart the caller runs on, and that hart's id.
pub fn debug_get_clock() -> (usize, usize) {
    let r = sys6(nr::DEBUG_GET_CLOCK, [0; 6]);
    (r[0], r[1])
}

/// Kernel event counter `which` (see `abi::stat`), summed over harts.
pub fn debug_stat(which: usize) -> usize {
    raw(nr::DEBUG_STAT, [which, 0, 0, 0, 0, 0])
}

/// Read counter `which` and start its measurement over (`abi::stat::RESET`; LOCK_HOLD_MAX):
/// needs the debug capability, usize::MAX if `debug_cap` is not one.
pub fn debug_stat_reset(debug_cap: usize, which: usize) -> usize {
    raw(nr::DEBUG_STAT, [which | abi::stat::RESET, debug_cap, 0, 0, 0, 0])
}

/// Counter `which` of the hart at index `hart` alone (`abi::stat::ONE_HART`); `usize::MAX` for
/// an unknown hart or a counter that is not per hart.
pub fn debug_stat_hart(which: usize, hart: usize) -> usize {
    raw(nr::DEBUG_STAT, [which | abi::stat::ONE_HART, hart, 0, 0, 0, 0])
}

/// Print the kernel's scheduler state; needs the debug capability (the root task's is at
/// `abi::init_cap::DEBUG`). False if `debug_cap` is not one.
pub fn debug_dump_scheduler(debug_cap: usize) -> bool {
    raw(nr::DEBUG_DUMP_SCHEDULER, [debug_cap, 0, 0, 0, 0, 0]) == 0
}

/// The object type (`abi::object`) of the cap at `cptr`, or `None` for an empty/invalid slot.
pub fn debug_cap_identify(cptr: usize) -> Option<usize> {
    match raw(nr::DEBUG_CAP_IDENTIFY, [cptr, 0, 0, 0, 0, 0]) {
        0 => None,
        t => Some(t - 1),
    }
}

/// The kernel's consistency check (`abi::syscall::DEBUG_CHECK_INVARIANTS`): `(violations,
/// slots checked, truncated)`, or None if `debug_cap` is not the debug capability.
pub fn debug_check_invariants(debug_cap: usize) -> Option<(usize, usize, bool)> {
    let [v, s, t, ..] = sys6(nr::DEBUG_CHECK_INVARIANTS, [debug_cap, 0, 0, 0, 0, 0]);
    (v != usize::MAX).then_some((v, s, t != 0))
}

/// The checker over what is reachable from the CNode at `cnode` only (its slots, the TCBs and
/// CNodes found there, the VSpaces whose root cap is there): cheaper than the full check.
pub fn debug_check_invariants_in(debug_cap: usize, cnode: usize) -> Option<(usize, usize, bool)> {
    debug_check_invariants_timed(debug_cap, Some(cnode)).map(|(v, s, t, _)| (v, s, t))
}

/// Either check (`scope`: None = everything), also returning the timebase ticks the kernel
/// spent checking (a3).
pub fn debug_check_invariants_timed(debug_cap: usize, scope: Option<usize>) -> Option<(usize, usize, bool, usize)> {
    let [v, s, t, ticks, ..] =
        sys6(nr::DEBUG_CHECK_INVARIANTS, [debug_cap, scope.is_some() as usize, scope.unwrap_or(0), 0, 0, 0]);
    (v != usize::MAX).then_some((v, s, t != 0, ticks))
}

/// End the whole system with the root task's debug capability: status 0 is success.
pub fn debug_halt(status: usize) -> ! {
    try_debug_halt(abi::init_cap::DEBUG, status);
    #[allow(clippy::empty_loop)]
    loop {}
}

/// End the whole system if `debug_cap` is the debug capability; returns only if it is not.
pub fn try_debug_halt(debug_cap: usize, status: usize) {
    raw(nr::DEBUG_HALT, [status, debug_cap, 0, 0, 0, 0]);
}

/// How many times the thread `tcb` entered the kernel by itself (system calls, faults, trapped
/// instructions), or None if `tcb` is not a TCB cap or `debug_cap` not the debug capability.
pub fn debug_thread_entries(debug_cap: usize, tcb: usize) -> Option<usize> {
    match raw(nr::DEBUG_THREAD_ENTRIES, [tcb, debug_cap, 0, 0, 0, 0]) {
        usize::MAX => None,
        n => Some(n),
    }
}

/// Why SetDeadline refused (`abi::deadline`): an `abi::error` code and its detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineError {
    pub code: usize,
    pub detail: u64,
}

impl core::fmt::Display for DeadlineError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (detail {:#x})", crate::invoke::error_name(self.code), self.detail)
    }
}

/// SetDeadline: arm the calling thread's kernel deadline at `at` (timebase ticks; 0 =
/// `abi::deadline::CANCEL`), raising `vector` on its U-notification when it passes (at once if
/// it has). Returns the deadline it replaced (0: none).
pub fn set_deadline(at: u64, vector: usize) -> Result<u64, DeadlineError> {
    let r = sys6(nr::SET_DEADLINE, [at as usize, vector, 0, 0, 0, 0]);
    match r[0] {
        0 => Ok(r[1] as u64),
        code => Err(DeadlineError { code, detail: r[1] as u64 }),
    }
}
