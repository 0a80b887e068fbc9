//! The thread's IPC buffer and message registers.
//!
//! Each thread keeps the address of its own IPC buffer in `tp` (seL4 keeps it in TLS; `tp` is
//! the TLS base on RISC-V, so `TCB_SetTLSBase` or `TCB_WriteRegisters` can set it for a new
//! thread). Like libsel4, `set_mr`/`get_mr` work on the buffer's `msg` array for every index; the
//! IPC calls in this module move MR0..3 between `msg[0..4]` and a2..a5 (the abi says the kernel
//! never reads `msg[0..4]`, so they serve as the staging area for the registers), and MR4.. stay
//! in the buffer where the kernel reads and writes them.
use crate::syscall::{self, nr};
use abi::ipc::{IpcBuffer, MSG_MAX_EXTRA_CAPS, MSG_MAX_LENGTH, MSG_REGISTERS};
use abi::MessageInfo;

/// Make `addr` (1 KiB aligned, mapped) this thread's IPC buffer.
#[cfg(target_arch = "riscv64")]
pub fn set_ipc_buffer(addr: usize) {
    // SAFETY: Rust code on this target never uses tp (there is no thread-local storage), so it
    // is ours to hold the IPC buffer address.
    unsafe { core::arch::asm!("mv tp, {0}", in(reg) addr, options(nomem, nostack, preserves_flags)) };
}

/// This thread's IPC buffer address (0 when none was set).
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub fn ipc_buffer_addr() -> usize {
    let a: usize;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mv {0}, tp", out(reg) a, options(nomem, nostack, preserves_flags)) };
    a
}

#[cfg(not(target_arch = "riscv64"))]
static HOST_BUFFER: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Host stand-in (one buffer for the whole process) so code using the buffer can be unit-tested.
#[cfg(not(target_arch = "riscv64"))]
pub fn set_ipc_buffer(addr: usize) {
    HOST_BUFFER.store(addr, core::sync::atomic::Ordering::Relaxed);
}

#[cfg(not(target_arch = "riscv64"))]
pub fn ipc_buffer_addr() -> usize {
    HOST_BUFFER.load(core::sync::atomic::Ordering::Relaxed)
}

/// Raw pointer to this thread's IPC buffer.
#[inline(always)]
pub fn buffer_ptr() -> *mut IpcBuffer {
    ipc_buffer_addr() as *mut IpcBuffer
}

/// Run `f` on this thread's IPC buffer. Panics when no buffer was set.
#[inline(always)]
pub fn with_buffer<R>(f: impl FnOnce(&mut IpcBuffer) -> R) -> R {
    let p = buffer_ptr();
    assert!(!p.is_null(), "no IPC buffer set (userlib::ipc::set_ipc_buffer)");
    // SAFETY: the buffer belongs to this thread alone (set_ipc_buffer's contract); the kernel
    // only writes it while the thread is inside a system call.
    f(unsafe { &mut *p })
}

// ---- Pure routing helpers (host-tested) ----

/// Stage message registers for a send: every MR goes to `buf.msg[i]` (MR0..3 as the mirror),
/// and MR0..3 come back as the values for a2..a5.
pub fn stage(buf: &mut IpcBuffer, mrs: &[usize]) -> [usize; MSG_REGISTERS] {
    assert!(mrs.len() <= MSG_MAX_LENGTH, "message longer than {} MRs", MSG_MAX_LENGTH);
    buf.msg[..mrs.len()].copy_from_slice(mrs);
    regs_of(buf)
}

/// The register values for a2..a5 from the staging area `msg[0..4]`.
pub fn regs_of(buf: &IpcBuffer) -> [usize; MSG_REGISTERS] {
    [buf.msg[0], buf.msg[1], buf.msg[2], buf.msg[3]]
}

/// After a receive: put the a2..a5 values into `msg[0..4]` so `get_mr` sees every MR.
pub fn unstage(buf: &mut IpcBuffer, regs: [usize; MSG_REGISTERS]) {
    buf.msg[..MSG_REGISTERS].copy_from_slice(&regs);
}

/// MR `i` of a received message: from the registers for 0..3, from the buffer above.
pub fn mr_of(buf: &IpcBuffer, regs: &[usize; MSG_REGISTERS], i: usize) -> usize {
    if i < MSG_REGISTERS {
        regs[i]
    } else {
        buf.msg[i]
    }
}

/// Put extra caps (cptrs) to send into `caps_or_badges`; returns how many.
pub fn stage_caps(buf: &mut IpcBuffer, caps: &[usize]) -> usize {
    assert!(caps.len() <= MSG_MAX_EXTRA_CAPS, "more than {} extra caps", MSG_MAX_EXTRA_CAPS);
    buf.caps_or_badges[..caps.len()].copy_from_slice(caps);
    caps.len()
}

// ---- This thread's buffer ----

/// Set message register `i` (staged in the IPC buffer; MR0..3 go to registers at the next call).
pub fn set_mr(i: usize, v: usize) {
    with_buffer(|b| b.msg[i] = v);
}

/// Message register `i` of the last message received through this module's calls.
pub fn get_mr(i: usize) -> usize {
    with_buffer(|b| b.msg[i])
}

/// Extra cap `i` to send with the next message.
pub fn set_cap(i: usize, cptr: usize) {
    with_buffer(|b| b.caps_or_badges[i] = cptr);
}

/// Badge of received cap `i` that was unwrapped (see `MessageInfo::caps_unwrapped`).
pub fn get_badge(i: usize) -> usize {
    with_buffer(|b| b.caps_or_badges[i])
}

/// Where the next received cap goes: CNode `cnode` (a cptr in this thread's CSpace), slot
/// `index` resolved to `depth` bits in it. `(0, 0, 0)` accepts no caps.
pub fn set_receive_path(cnode: usize, index: usize, depth: usize) {
    with_buffer(|b| {
        b.receive_cnode = cnode;
        b.receive_index = index;
        b.receive_depth = depth;
    });
}

/// `user_data` word of the buffer (free for the program).
pub fn user_data() -> usize {
    with_buffer(|b| b.user_data)
}

fn buffered(number: isize, cptr: usize, info: MessageInfo) -> (usize, MessageInfo) {
    let regs = with_buffer(|b| regs_of(b));
    let (badge, info, regs) = syscall::sys(number, cptr, info, regs);
    with_buffer(|b| unstage(b, regs));
    (badge, info)
}

/// seL4_Send with the MRs staged by `set_mr`.
pub fn send(dest: usize, info: MessageInfo) {
    buffered(nr::SEND, dest, info);
}

/// seL4_NBSend with the MRs staged by `set_mr`.
pub fn nb_send(dest: usize, info: MessageInfo) {
    buffered(nr::NB_SEND, dest, info);
}

/// seL4_Call: the reply's MRs are then readable with `get_mr`. Returns (badge, info).
pub fn call(dest: usize, info: MessageInfo) -> (usize, MessageInfo) {
    buffered(nr::CALL, dest, info)
}

/// seL4_Reply with the MRs staged by `set_mr`.
pub fn reply(info: MessageInfo) {
    buffered(nr::REPLY, 0, info);
}

/// seL4_Recv; the message's MRs are then readable with `get_mr`. Returns (badge, info).
pub fn recv(src: usize) -> (usize, MessageInfo) {
    buffered(nr::RECV, src, MessageInfo::default())
}

/// seL4_NBRecv; (0, empty info) when there was nothing to receive.
pub fn nb_recv(src: usize) -> (usize, MessageInfo) {
    buffered(nr::NB_RECV, src, MessageInfo::default())
}

/// seL4_ReplyRecv with the MRs staged by `set_mr`; then like `recv`.
pub fn reply_recv(src: usize, info: MessageInfo) -> (usize, MessageInfo) {
    buffered(nr::REPLY_RECV, src, info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> IpcBuffer {
        IpcBuffer::zeroed()
    }

    #[test]
    fn first_four_mrs_become_registers_the_rest_stay_in_the_buffer() {
        let mut b = empty();
        let mrs: [usize; 7] = [10, 11, 12, 13, 14, 15, 16];
        let regs = stage(&mut b, &mrs);
        assert_eq!(regs, [10, 11, 12, 13]);
        assert_eq!(&b.msg[4..7], &[14, 15, 16]);
        assert_eq!(b.msg[7], 0, "nothing past the message is touched");
    }

    #[test]
    fn short_message_leaves_unused_registers_from_the_staging_area() {
        let mut b = empty();
        b.msg[2] = 99;
        let regs = stage(&mut b, &[1, 2]);
        assert_eq!(regs, [1, 2, 99, 0]);
    }

    #[test]
    fn received_mrs_come_from_registers_then_buffer() {
        let mut b = empty();
        b.msg[4] = 44;
        b.msg[0] = 1234; // stale mirror: must not be read for MR0
        let regs = [7, 8, 9, 10];
        assert_eq!(mr_of(&b, &regs, 0), 7);
        assert_eq!(mr_of(&b, &regs, 3), 10);
        assert_eq!(mr_of(&b, &regs, 4), 44);
        unstage(&mut b, regs);
        assert_eq!(&b.msg[..5], &[7, 8, 9, 10, 44]);
    }

    #[test]
    fn extra_caps_go_to_caps_or_badges() {
        let mut b = empty();
        assert_eq!(stage_caps(&mut b, &[5, 6]), 2);
        assert_eq!(b.caps_or_badges, [5, 6, 0]);
    }

    #[test]
    #[should_panic]
    fn too_many_extra_caps_panics() {
        let mut b = empty();
        stage_caps(&mut b, &[1, 2, 3, 4]);
    }

    #[test]
    fn set_and_get_mr_through_the_thread_buffer() {
        let mut b = Box::new(empty());
        set_ipc_buffer(&mut *b as *mut IpcBuffer as usize);
        set_mr(0, 5);
        set_mr(9, 6);
        set_cap(1, 77);
        set_receive_path(2, 300, 64);
        assert_eq!(get_mr(0), 5);
        assert_eq!(get_mr(9), 6);
        assert_eq!(get_badge(1), 77);
        set_ipc_buffer(0);
        assert_eq!((b.receive_cnode, b.receive_index, b.receive_depth), (2, 300, 64));
    }
}
