//! The user/kernel ABI, shared by the kernel and `userlib` (one source of truth). The prose
//! version, with every place we differ from seL4 and why, is `sw/abi/README.md`.
//!
//! System calls follow seL4's RISC-V convention: `ecall` with the (negative) syscall number in
//! a7, the capability/destination in a0, message info in a1, message registers 0..3 in a2..a5;
//! the kernel returns the badge in a0, message info in a1 and message registers in a2..a5.
//! Further message registers, extra caps and the receive slot are in the IPC buffer.
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
    /// a0 = the byte, a1 = a console cptr ([`super::console`]); returns a0 = 1 if the kernel's
    /// console ring took it, 0 if the ring is full (try again later), usize::MAX if a1 is not
    /// a Console cap.
    pub const DEBUG_PUT_CHAR: isize = -9;
    pub const DEBUG_DUMP_SCHEDULER: isize = -10;
    /// seL4 halts the machine; ours also takes an exit status in a0 (0 = success) so test
    /// root tasks can end a QEMU or RTL run with a verdict.
    pub const DEBUG_HALT: isize = -11;
    /// seL4's: a0 = cptr; returns the cap's object type + 1 in a0 (0 = empty or invalid).
    pub const DEBUG_CAP_IDENTIFY: isize = -12;
    /// Ours: print a0 bytes from the caller's IPC buffer message area starting at byte a1 (no
    /// user pointer is ever dereferenced by the kernel), a2 = a console cptr ([`super::console`]);
    /// at most [`super::console::PUT_STRING_MAX`] per call. Returns in a0 how many the
    /// console ring took (0 for a0 > 0: the ring is full, try again later), usize::MAX without
    /// an IPC buffer or if a2 is not a Console cap.
    pub const DEBUG_PUT_STRING: isize = -32;
    /// Ours: the cycle counter of the hart the caller runs on, in a0 (and the hart id in a1).
    pub const DEBUG_GET_CLOCK: isize = -33;
    /// Ours: kernel event counter number a0 (see [`super::stat`]) summed over harts, in a0.
    pub const DEBUG_STAT: isize = -34;
    /// Ours: a0 = a TCB cptr; returns in a0 how many times that thread entered the kernel by
    /// itself (system calls, faults, trapped instructions; interrupts do not count), or
    /// `usize::MAX` if a0 is not a TCB cap. It shows that user-interrupt delivery needs no
    /// kernel entry on the hardware path.
    pub const DEBUG_THREAD_ENTRIES: isize = -35;
    /// Ours: run the kernel's consistency checker (derivation tree, Untyped watermarks, object
    /// overlap, every user mapping vouched for by a cap). a0 = the debug cap, a1 = 0 for the
    /// whole system or 1 for what is reachable from the CNode at cptr a2 (its slots, the TCBs
    /// and CNodes found there, the VSpaces whose root cap is there); returns a0 = the number of
    /// violations (usize::MAX without the cap or with a2 not a CNode), a1 = slots checked, a2 =
    /// 1 if a bounded table filled up, a3 = timebase ticks the check took.
    pub const DEBUG_CHECK_INVARIANTS: isize = -36;
    /// Ours: arm the caller's kernel deadline (see [`super::deadline`]): a0 = absolute time in
    /// timebase ticks (0 = cancel), a1 = the vector raised on the caller's own U-notification
    /// when it passes. Returns a0 = 0 or an `error` code, a1 = the deadline it replaced (0 =
    /// none) or the error's detail.
    pub const SET_DEADLINE: isize = -37;
    /// Ours (async system calls, see [`super::asys`]): wake the kernel handler of the caller's
    /// syscall buffer. a0 = 0 or an error code, a1 = requests run inside this call.
    pub const WAKE_SYSCALL_HANDLER: isize = -38;
}

/// Kernel deadlines (`syscall::SET_DEADLINE`): each thread has at most one, kept in its TCB and
/// queued on its hart, which multiplexes them over its timer. When the time passes, the kernel
/// raises the vector on the thread's U-notification receiver slot (the kernel as sender), as a
/// Signal would. Arming replaces the previous deadline; a time already past fires at once.
pub mod deadline {
    /// a0 = CANCEL disarms (a1 ignored).
    pub const CANCEL: usize = 0;
    /// The furthest a deadline may lie ahead of now, in timebase ticks (2^50: years at any
    /// plausible timebase); further is a RANGE_ERROR with a1 = the latest time accepted now.
    pub const MAX_AHEAD: u64 = 1 << 50;
    // Errors (`super::error` codes in a0, detail in a1): RANGE_ERROR, the deadline lies more
    // than MAX_AHEAD ahead (a1 = the latest accepted now); INVALID_ARGUMENT, the vector is not
    // 0..=uintr::MAX_VECTOR (a1 = 1, the argument's index); ILLEGAL_OPERATION, the caller has
    // no U-notification receiver slot (a1 = 0).
}

/// Counters read by `DEBUG_STAT`.
pub mod stat {
    /// IPCs that took the Call fastpath.
    pub const FASTPATH_CALL: usize = 0;
    /// IPCs that took the ReplyRecv fastpath.
    pub const FASTPATH_REPLY_RECV: usize = 1;
    /// IPCs (Call, Send, Reply, ReplyRecv) that went the slow path.
    pub const SLOWPATH_IPC: usize = 2;
    /// Kernel entries from user mode (system calls, faults, interrupts).
    pub const KERNEL_ENTRIES: usize = 3;
    /// Thread switches.
    pub const SWITCHES: usize = 4;
    /// Reschedule IPIs sent to other harts.
    pub const RESCHED_IPIS: usize = 5;
    /// TLB shootdowns (each one may reach several harts).
    pub const SHOOTDOWNS: usize = 6;
    /// Bytes of Untyped memory currently retyped into objects (all harts, all Untyped).
    pub const OBJECT_BYTES: usize = 7;
    /// Timer ticks that ended a time slice.
    pub const SLICE_ENDS: usize = 8;
    /// UINTC receiver slots in use (gauge).
    pub const UINTR_SLOTS_USED: usize = 9;
    /// Sender-table entries in use over all threads (gauge).
    pub const UINTR_ENTRIES_USED: usize = 10;
    /// Sender tables (one page per thread that has senders) in use (gauge).
    pub const UINTR_TABLES_USED: usize = 11;
    /// User-interrupt instructions and CSR accesses emulated by the kernel (no UINTC).
    pub const UINTR_EMULATED: usize = 12;
    /// User interrupts the kernel raised itself (Signal or an IRQ on a U-notification).
    pub const UINTR_KERNEL_SENDS: usize = 13;
    /// Threads woken from a blocking Wait on a U-notification.
    pub const UINTR_WAIT_WAKEUPS: usize = 14;
    /// Invocations stopped at a preemption point and restarted (a long Retype or Revoke).
    pub const PREEMPTIONS: usize = 15;
    /// The longest the kernel lock was held at once, in cycles, since the last read with
    /// `RESET` set (`DebugStat(LOCK_HOLD_MAX | RESET)` reads and starts over; it needs the debug
    /// capability, its cptr in a1, and returns usize::MAX without it). Measured only
    /// from the first such read on (0 before it): the kernel does not time its holds unasked.
    pub const LOCK_HOLD_MAX: usize = 16;
    /// Kernel deadlines that fired (raised their vector).
    pub const DEADLINES_FIRED: usize = 17;
    /// Kernel deadlines armed now, over every hart's queue (gauge).
    pub const DEADLINES_ARMED: usize = 18;
    /// Async system calls ([`super::asys`]): requests executed by kernel handlers.
    pub const ASYS_REQUESTS: usize = 19;
    /// WakeSyscallHandler calls, and how they were served: on another hart through an IPI,
    /// or inside the call itself (no hart with a lower execution priority).
    pub const ASYS_WAKES: usize = 20;
    pub const ASYS_WAKE_REMOTE: usize = 21;
    pub const ASYS_WAKE_INLINE: usize = 22;
    /// Completions that had to raise the thread's vector (its reply-ring flag said asleep).
    pub const ASYS_NOTIFIES: usize = 23;
    /// Buffers closed by the kernel because the thread broke a ring (an impossible index).
    pub const ASYS_FAULTS: usize = 24;
    /// Registered syscall buffers (a gauge).
    pub const ASYS_HANDLERS: usize = 25;
    /// Kernel entries from user mode that were interrupts (the rest are system calls and
    /// faults).
    pub const ENTRIES_INTERRUPT: usize = 26;
    /// Address-space switches: `satp` written on the way to user mode.
    pub const SATP_WRITES: usize = 27;
    /// Times an idle hart slept in `wfi`.
    pub const IDLE_SLEEPS: usize = 28;
    /// Threads woken by IPC or a signal and handed straight to their idle hart, which entered
    /// user mode with them without the kernel lock.
    pub const HANDOFFS: usize = 29;
    /// Call and ReplyRecv fastpaths to a partner of another hart (woken there, not switched
    /// to: `FASTPATH_CALL` and `FASTPATH_REPLY_RECV` count the direct switches on one hart).
    pub const FASTPATH_CROSS: usize = 30;
    /// User-TLB flushes on the way to user mode: every satp write without hardware ASIDs;
    /// with them, only an address space whose mappings changed since the hart last flushed it.
    pub const TLB_FLUSHES: usize = 31;
    /// Blocking Waits on a notification that, with nothing else for their hart to run, spun
    /// for the signal without the kernel lock before deciding to block (or not).
    pub const WAIT_SPINS: usize = 32;
    /// ... of which a signaller completed while they spun (the thread went back to user mode
    /// without taking the lock again).
    pub const SPIN_DELIVERIES: usize = 33;
    /// Harts moved off a VSpace root that went away while they still had it in `satp` (out of
    /// user mode: waiting for the lock, spinning in a Wait, idle), before its page could be
    /// reused.
    pub const ROOT_RETIRES: usize = 34;
    /// Timebase ticks the hart's idle loop spent watching its mailbox or asleep in `wfi` with
    /// nothing to do, including the pass it is in now (serving async-syscall handlers, polling
    /// their rings included, is work and does not count). A hart's busy time over a window is
    /// the elapsed time less this count's growth. Measured only once asked for:
    /// `DebugStat(IDLE_TIME | RESET)` (debug capability) starts it and reads the sum; before
    /// that it does not grow (each measured pass costs the idle hart two reads of `time`, a
    /// trap to the firmware on our cores, one of them on the way to a handed-over thread).
    pub const IDLE_TIME: usize = 35;
    /// Console output ([`super::console`]): bytes waiting in the kernel's ring (a gauge);
    /// bytes handed to the UART since boot; bytes of the kernel's own output that did not
    /// fit the ring and were dropped (each run of them is followed by a "[N bytes dropped]"
    /// line); bytes handed to the UART by a hart holding the kernel lock (the final flush at
    /// DebugHalt and panics aside: 0, output never waits for the UART under the lock).
    pub const CONSOLE_QUEUED: usize = 36;
    pub const CONSOLE_WRITTEN: usize = 37;
    pub const CONSOLE_DROPPED: usize = 38;
    pub const CONSOLE_WRITTEN_LOCKED: usize = 39;
    /// Illegal-instruction traps taken with `sstatus.FS` Off: a thread's first FP instruction
    /// since it last lost the FPU (sw/kernel/README.md, "Floating point").
    pub const FPU_TRAPS: usize = 40;
    /// Threads' F/D states loaded into a hart's registers (at such a trap, or at the switch to
    /// a thread that wrote FP state in its last run).
    pub const FPU_LOADS: usize = 41;
    /// States saved to their TCB (their thread wrote FP state and left the hart).
    pub const FPU_SAVES: usize = 42;
    /// Loads put off because the state was still in another hart's registers, not yet saved
    /// (the thread was just taken from that hart); its FP instruction traps again.
    pub const FPU_WAITS: usize = 43;
    pub const COUNT: usize = 44;
    /// With DebugStat: read, then reset (LOCK_HOLD_MAX), or start measuring (IDLE_TIME).
    pub const RESET: usize = 1 << 63;
    /// With DebugStat: the counter of one hart, a1 = its index (`BootInfo::hart_ids` order),
    /// instead of the sum; `usize::MAX` for an offline or unknown hart and for the counters
    /// that are not per hart (OBJECT_BYTES, LOCK_HOLD_MAX and the gauges).
    pub const ONE_HART: usize = 1 << 62;
}

/// seL4_MessageInfo: label << 12 | capsUnwrapped << 9 | extraCaps << 7 | length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MessageInfo {
    pub label: usize,
    pub caps_unwrapped: usize,
    pub extra_caps: usize,
    pub length: usize,
}

impl MessageInfo {
    pub const fn new(label: usize, caps_unwrapped: usize, extra_caps: usize, length: usize) -> Self {
        MessageInfo { label, caps_unwrapped, extra_caps, length }
    }
    pub const fn to_word(self) -> usize {
        (self.label << 12) | ((self.caps_unwrapped & 7) << 9) | ((self.extra_caps & 3) << 7) | (self.length & 0x7f)
    }
    pub const fn from_word(w: usize) -> Self {
        MessageInfo { label: w >> 12, caps_unwrapped: (w >> 9) & 7, extra_caps: (w >> 7) & 3, length: w & 0x7f }
    }
}

/// Message lengths and the IPC buffer (seL4's layout and sizes).
pub mod ipc {
    /// Message registers carried in a2..a5.
    pub const MSG_REGISTERS: usize = 4;
    pub const MSG_MAX_LENGTH: usize = 120;
    pub const MSG_MAX_EXTRA_CAPS: usize = 3;
    /// The IPC buffer is 1 KiB and must be 1 KiB aligned (seL4_IPCBufferSizeBits).
    pub const BUFFER_SIZE_BITS: usize = 10;

    /// seL4_IPCBuffer. `msg[0..4]` mirror the registers and are not read by the kernel.
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct IpcBuffer {
        pub tag: usize,
        pub msg: [usize; MSG_MAX_LENGTH],
        pub user_data: usize,
        /// Extra caps to send (cptrs), or badges of received caps that were unwrapped.
        pub caps_or_badges: [usize; MSG_MAX_EXTRA_CAPS],
        /// Where a received cap goes: CNode cptr (resolved in the receiver's CSpace), index and
        /// depth within it.
        pub receive_cnode: usize,
        pub receive_index: usize,
        pub receive_depth: usize,
    }
    impl IpcBuffer {
        pub const fn zeroed() -> Self {
            IpcBuffer {
                tag: 0,
                msg: [0; MSG_MAX_LENGTH],
                user_data: 0,
                caps_or_badges: [0; MSG_MAX_EXTRA_CAPS],
                receive_cnode: 0,
                receive_index: 0,
                receive_depth: 0,
            }
        }
    }
    const _: () = assert!(core::mem::size_of::<IpcBuffer>() == 1 << BUFFER_SIZE_BITS);
}

/// Layout of the root task's address space (the low half of Sv39; the kernel owns the top).
pub mod layout {
    /// Highest user address + 1: Sv39 low half.
    pub const USER_TOP: usize = 1 << 38;
    /// The root task's initial stack (grows down from here).
    pub const ROOT_STACK_TOP: usize = 0x3f_0000_0000;
    pub const ROOT_STACK_PAGES: usize = 16;
    /// The root task's boot-info page (also passed in a0) and IPC buffer page.
    pub const ROOT_BOOTINFO: usize = 0x3f_1000_0000;
    pub const ROOT_IPC_BUFFER: usize = 0x3f_1000_1000;
}

/// Invocation results, numbered as seL4's `seL4_Error`. On error the reply's label is the code
/// and MR0.. carry the details as in seL4 (RangeError: min, max; FailedLookup: the lookup
/// failure; InvalidArgument/InvalidCapability: which argument; NotEnoughMemory: bytes left).
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

/// Kernel object types for Untyped_Retype, numbered as seL4 on RISC-V (non-MCS), and their
/// sizes (`*_BITS` = log2 of bytes).
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
    /// Not retypable (seL4 makes pools with ASIDControl_MakePool); used by DebugCapIdentify.
    pub const ASID_POOL: usize = 9;
    pub const ASID_CONTROL: usize = 10;
    pub const IRQ_CONTROL: usize = 11;
    pub const IRQ_HANDLER: usize = 12;
    /// DebugCapIdentify only: a reply cap, and the debug capability (`init_cap::DEBUG`).
    pub const REPLY: usize = 13;
    pub const DEBUG_CONTROL: usize = 14;
    pub const UINTR_CONTROL: usize = 15;
    /// Ours: a thread's U-notification sender table (`label::SENDER_TABLE_BIND`), retyped
    /// from an Untyped like every other object so that what a domain sends with is charged
    /// to its own memory.
    pub const UINTR_SENDER_TABLE: usize = 16;
    /// DebugCapIdentify only: the Console cap (`init_cap::CONSOLE`, [`super::console`]).
    pub const CONSOLE: usize = 17;

    /// Ours is larger than seL4's 2^10: the TCB carries the full user-interrupt state too.
    pub const TCB_BITS: usize = 11;
    /// seL4 packs endpoints into 16 bytes and notifications into 32; ours are unpacked.
    pub const ENDPOINT_BITS: usize = 5;
    pub const NOTIFICATION_BITS: usize = 6;
    /// A CNode slot: seL4 packs one into 32 bytes; ours keeps the cap unpacked in 64.
    pub const SLOT_BITS: usize = 6;
    pub const PAGE_BITS: usize = 12;
    pub const MEGA_PAGE_BITS: usize = 21;
    pub const GIGA_PAGE_BITS: usize = 30;
    pub const PAGE_TABLE_BITS: usize = 12;
    pub const ASID_POOL_BITS: usize = 12;
    /// A sender table: the entry page the hardware reads (`uintr::SENDER_ENTRIES` words, page
    /// aligned), two pages of the kernel's per-entry bookkeeping and a header page (which also
    /// links each entry to the next of its notification's).
    pub const UINTR_SENDER_TABLE_BITS: usize = 14;
    pub const MIN_UNTYPED_BITS: usize = 4;
    pub const MAX_UNTYPED_BITS: usize = 38;
    /// ASIDs per pool and pools (seL4 on RISC-V: 2^9 each... ours keeps 2^9 per pool, 2^7 pools).
    pub const ASID_POOL_ENTRIES: usize = 512;
    pub const ASID_POOLS: usize = 128;
}

/// Invocation labels (the `label` of the message info). The generic ones keep seL4's names and
/// order for an SMP, non-MCS build without the debug-register API; the architecture ones follow
/// in seL4's RISC-V order.
pub mod label {
    pub const INVALID: usize = 0;
    pub const UNTYPED_RETYPE: usize = 1;
    pub const TCB_READ_REGISTERS: usize = 2;
    pub const TCB_WRITE_REGISTERS: usize = 3;
    pub const TCB_COPY_REGISTERS: usize = 4;
    pub const TCB_CONFIGURE: usize = 5;
    pub const TCB_SET_PRIORITY: usize = 6;
    pub const TCB_SET_MC_PRIORITY: usize = 7;
    pub const TCB_SET_SCHED_PARAMS: usize = 8;
    pub const TCB_SET_IPC_BUFFER: usize = 9;
    pub const TCB_SET_SPACE: usize = 10;
    pub const TCB_SUSPEND: usize = 11;
    pub const TCB_RESUME: usize = 12;
    pub const TCB_BIND_NOTIFICATION: usize = 13;
    pub const TCB_UNBIND_NOTIFICATION: usize = 14;
    pub const TCB_SET_AFFINITY: usize = 15;
    pub const TCB_SET_TLS_BASE: usize = 16;
    pub const CNODE_REVOKE: usize = 17;
    pub const CNODE_DELETE: usize = 18;
    pub const CNODE_CANCEL_BADGED_SENDS: usize = 19;
    pub const CNODE_COPY: usize = 20;
    pub const CNODE_MINT: usize = 21;
    pub const CNODE_MOVE: usize = 22;
    pub const CNODE_MUTATE: usize = 23;
    pub const CNODE_ROTATE: usize = 24;
    pub const CNODE_SAVE_CALLER: usize = 25;
    pub const IRQ_ISSUE_IRQ_HANDLER: usize = 26;
    pub const IRQ_ACK_IRQ: usize = 27;
    pub const IRQ_SET_IRQ_HANDLER: usize = 28;
    pub const IRQ_CLEAR_IRQ_HANDLER: usize = 29;
    pub const DOMAIN_SET_SET: usize = 30;
    pub const RISCV_PAGE_TABLE_MAP: usize = 31;
    pub const RISCV_PAGE_TABLE_UNMAP: usize = 32;
    pub const RISCV_PAGE_MAP: usize = 33;
    pub const RISCV_PAGE_UNMAP: usize = 34;
    pub const RISCV_PAGE_GET_ADDRESS: usize = 35;
    pub const RISCV_ASID_CONTROL_MAKE_POOL: usize = 36;
    pub const RISCV_ASID_POOL_ASSIGN: usize = 37;
    pub const RISCV_IRQ_ISSUE_IRQ_HANDLER_TRIGGER: usize = 38;
    /// Ours (U-notification, see [`super::uintr`]): on a Notification cap with Read right,
    /// bound to a TCB: give that thread a UINTC receiver slot for this notification. Returns
    /// the slot index in MR0 (the same one if already registered).
    pub const NOTIFICATION_REGISTER_RECEIVER: usize = 39;
    /// Ours: on a badged or unbadged Notification cap with Write right (badge < 64: it is the
    /// vector) and extra cap 0 = a TCB: put an entry for this notification in that thread's
    /// sender table. Returns the entry index (the `uipi.send` operand) in MR0. The entry
    /// belongs to the invoked cap: deleting or revoking it frees the entry.
    pub const NOTIFICATION_REGISTER_SENDER: usize = 40;
    /// Ours: on an IRQHandler cap, extra cap 0 = a Notification with a registered receiver
    /// (IllegalOperation otherwise): the interrupt reaches the receiver as a user interrupt.
    /// Returns in MR0 how (`uintr::IRQ_*`) and in MR1 the hart index it is tied to.
    /// `IRQ_DIRECT` (a PLIC with a U-mode context per hart and a UINTC): the source is routed
    /// to the U context of the receiver's hart and raises UEIP (ucause 8) with no kernel entry
    /// at all; the receiver claims and completes it itself through that hart's context page
    /// (`BootInfo::plic_user_context`), its affinity is then fixed until the handler is
    /// cleared (SetAffinity elsewhere: IllegalOperation), and Ack does nothing. Sources above
    /// `uintr::MAX_DIRECT_IRQ` and machines without U contexts get `IRQ_FORWARDED`: the kernel
    /// claims it and raises vector = the cap's badge on the receiver (kernel as sender), the
    /// source stays masked until Ack, as for any handler. Works on every machine.
    pub const IRQ_SET_UINTR: usize = 41;
    /// Ours: on the UintrControl cap (`init_cap::UINTR_CONTROL`), extra cap 0 = a TCB, MR0 =
    /// grants (`uintr::GRANT_*` bits): whether the thread may hold a UINTC receiver slot
    /// (NotificationRegisterReceiver for a notification bound to it needs `GRANT_RECEIVE`;
    /// IllegalOperation without). Withdrawing the grant frees the slot it holds. New threads
    /// have none; the root task has it. The slots are a fixed pool of the hardware
    /// (`BootInfo::uintr_slots`): the holder of UintrControl decides who may use them, so no
    /// thread can starve another. Sender tables are not granted: they are objects retyped from
    /// the sender's own Untyped (`object::UINTR_SENDER_TABLE`).
    pub const UINTR_CONTROL_GRANT: usize = 42;
    /// Ours (async system calls, [`super::asys`]): on a TCB cap, register that thread's syscall
    /// buffer. MR0 = request ring offset in extra cap 0's frame, MR1 = its capacity, MR2 =
    /// reply ring offset in extra cap 1's frame, MR3 = its capacity, MR4 = completion vector.
    pub const TCB_REGISTER_SYSCALL_BUFFER: usize = 43;
    /// Ours: on a TCB cap, drop its syscall buffer (and the kernel's frame copies).
    pub const TCB_UNREGISTER_SYSCALL_BUFFER: usize = 44;
    /// Ours: on a UintrSenderTable cap, extra cap 0 = a TCB: the table becomes that thread's
    /// sender table (its `suist`), where NotificationRegisterSender puts entries for it.
    /// IllegalOperation if the table or the thread already has one bound.
    pub const SENDER_TABLE_BIND: usize = 45;
    /// Ours: on a UintrSenderTable cap: unbind it from its thread; every entry in it is freed
    /// (the sender caps that registered them keep no entry). IllegalOperation if unbound.
    /// Deleting the table's last cap (or revoking its Untyped) does the same.
    pub const SENDER_TABLE_UNBIND: usize = 46;
    /// Ours (async system calls, [`super::asys`]): on a TCB cap, MR0 = the harts that may
    /// serve that thread's kernel handler, bit i = hart index i (TCB_SetAffinity's argument,
    /// `BootInfo::hart_ids` order); 0 = any hart (the default). Kept across (un)registering
    /// the buffer; takes effect at the handler's next wake. INVALID_ARGUMENT (detail 0) for a
    /// bit at or past [`super::asys::MAX_HART_BITS`] or a mask naming no online hart.
    pub const TCB_SET_SYSCALL_HANDLER_HARTS: usize = 47;
}

/// Async system calls (ours, issue #18): a thread's syscall buffer is two `aring` rings of
/// 64-byte items in frames it owns (a request ring the thread produces and its kernel handler
/// consumes, a reply ring the other way round). Each ring's header carries the consumer's and
/// the producer's sleep flags, so the two awake flags of the buffer are the request ring's
/// consumer flag (the kernel handler: clear = awake, it will see new requests by itself) and
/// the reply ring's consumer flag (the thread: clear = awake, no completion signal needed).
/// See the README, "Async system calls".
pub mod asys {
    /// Item words: 0 = id (the caller's, copied to the reply), 1 = label (low 32 bits) | length
    /// (high 32 bits), 2..8 = argument words 0..6. A request whose length exceeds
    /// [`FIRST_ITEM_ARGS`] continues in the next ring item (all 8 words are arguments 6..14):
    /// the two are taken together.
    pub const FIRST_ITEM_ARGS: usize = 6;
    pub const MAX_ARGS: usize = 14;
    /// Argument layout of an invocation request (label = the invocation label):
    /// args[0] = cptr of the invoked cap, args[1] = number of extra caps (0..=3),
    /// args[2..2 + n] = their cptrs, then the message registers in the sync call's order.
    pub const ARG_CAP: usize = 0;
    pub const ARG_NCAPS: usize = 1;
    pub const ARG_FIRST_CAP: usize = 2;
    /// Request labels that are not invocations: console output ([`super::console`]), with a
    /// Console cap's cptr in args[0] ([`ARG_CAP`]). PutChar: args[1] = the byte. PutString:
    /// args[1] = byte count (at most `console::PUT_STRING_MAX` are taken), args[2..] = the
    /// bytes, 8 per word, little-endian. The reply's word 0 is the count the console ring took
    /// (0: it is full, send the rest again later); without the cap the reply is the error
    /// INVALID_CAPABILITY (or FAILED_LOOKUP for a cptr that does not resolve).
    pub const OP_PUT_CHAR: u32 = 0x1000;
    pub const OP_PUT_STRING: u32 = 0x1001;
    /// Reply: id, label = 0 or an `error` code (`abi::error` or [`NOT_ASYNC`]), length, words
    /// = the sync call's reply MRs (results, or the error's detail MRs).
    pub const NOT_ASYNC: u32 = 64;
    /// Ring capacities the kernel accepts (a power of two in this range).
    pub const MIN_CAPACITY: usize = 2;
    pub const MAX_CAPACITY: usize = 4096;
    /// Requests a handler runs per hold of the kernel lock before it lets go and looks again.
    pub const BATCH: usize = 16;
    /// Bits of a handler's hart mask (`label::TCB_SET_SYSCALL_HANDLER_HARTS`): one per hart
    /// index the kernel can have.
    pub const MAX_HART_BITS: usize = 8;
    /// The mask that lets any hart serve the handler.
    pub const ANY_HART: usize = 0;

    /// The invocations that may be requested asynchronously (each label belongs to one object
    /// type; the invocation checks the cap as on the sync path). Any other label is answered
    /// with [`NOT_ASYNC`]; the README says why each of the rest stays sync.
    pub const ASYNC_LABELS: [usize; 16] = [
        super::label::RISCV_PAGE_MAP,
        super::label::RISCV_PAGE_UNMAP,
        super::label::RISCV_PAGE_GET_ADDRESS,
        super::label::RISCV_PAGE_TABLE_MAP,
        super::label::RISCV_PAGE_TABLE_UNMAP,
        super::label::UNTYPED_RETYPE,
        super::label::TCB_BIND_NOTIFICATION,
        super::label::TCB_UNBIND_NOTIFICATION,
        super::label::CNODE_REVOKE,
        super::label::CNODE_DELETE,
        super::label::CNODE_CANCEL_BADGED_SENDS,
        super::label::CNODE_COPY,
        super::label::CNODE_MINT,
        super::label::CNODE_MOVE,
        super::label::CNODE_MUTATE,
        super::label::RISCV_ASID_POOL_ASSIGN,
    ];

    pub const fn is_async(label: usize) -> bool {
        let mut i = 0;
        while i < ASYNC_LABELS.len() {
            if ASYNC_LABELS[i] == label {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// User interrupts (docs/uintr-spec.md): how the kernel provides them and the U-notification rules.
pub mod uintr {
    /// `label::UINTR_CONTROL_GRANT` bits (bit 1, the old sender-table grant, is gone: sender
    /// tables are objects now, `object::UINTR_SENDER_TABLE`).
    pub const GRANT_RECEIVE: usize = 1;
    /// `BootInfo::uintr_mode`: no user interrupts at all.
    pub const MODE_NONE: usize = 0;
    /// No UINTC: the kernel traps and emulates the CSRs, `uipi.*` and `uret` (same behaviour,
    /// slower, every operation is a kernel entry).
    pub const MODE_EMULATED: usize = 1;
    /// A UINTC and the N-extension CSRs in hardware.
    pub const MODE_HARDWARE: usize = 2;
    /// A U-notification's badge is a vector number: bit `badge` of the receiver's pending
    /// word. A seL4 Signal on a U-notification cap (and an IRQ bound to it) sets the same bit.
    pub const MAX_VECTOR: usize = 63;
    /// Entries in a thread's sender table (one 4 KiB page).
    pub const SENDER_ENTRIES: usize = 512;
    /// Sender-table entries one notification may have (across all tables): a registration
    /// past it is a RangeError. Bounds the work of (un)registering its receiver.
    pub const MAX_SENDERS_PER_NOTIFICATION: usize = 1024;
    /// ucause codes of user interrupts.
    pub const CAUSE_SOFTWARE: usize = platform::csr::USIP_BIT;
    pub const CAUSE_EXTERNAL: usize = platform::csr::UEIP_BIT;
    pub const CAUSE_INTERRUPT: usize = 1 << 63;
    /// IRQSetUIntr's MR0: how the device interrupt reaches the receiver.
    pub const IRQ_FORWARDED: usize = 0;
    pub const IRQ_DIRECT: usize = 1;
    /// The highest PLIC source IRQSetUIntr routes directly (a thread's direct sources are one
    /// 64-bit mask, i.e. the first two enable words of a context).
    pub const MAX_DIRECT_IRQ: usize = 63;
}

/// Initial caps in the root task's CNode (seL4's slot numbers; unused ones stay empty).
pub mod init_cap {
    pub const NULL: usize = 0;
    pub const TCB: usize = 1;
    pub const CNODE: usize = 2;
    pub const VSPACE: usize = 3;
    pub const IRQ_CONTROL: usize = 4;
    pub const ASID_CONTROL: usize = 5;
    pub const ASID_POOL: usize = 6;
    pub const IO_PORT_CONTROL: usize = 7;
    pub const IO_SPACE: usize = 8;
    pub const BOOTINFO_FRAME: usize = 9;
    pub const IPC_BUFFER: usize = 10;
    pub const DOMAIN: usize = 11;
    /// The debug capability: the authority to halt the machine and dump the scheduler
    /// (DebugHalt, DebugDumpScheduler name it in a register). Only the root task gets it.
    pub const DEBUG: usize = 12;
    /// UintrControl: grants threads the use of UINTC receiver slots and sender tables.
    pub const UINTR_CONTROL: usize = 13;
    /// Console: the authority to print ([`super::console`]). Copyable; the root task hands
    /// copies on (`userlib::process` gives each process one at `bootinfo::process::CONSOLE`).
    pub const CONSOLE: usize = 14;
    pub const FIRST_FREE: usize = 16;
    /// The root CNode has 2^ROOT_CNODE_BITS slots and no guard, so a slot index is a cptr.
    pub const ROOT_CNODE_BITS: usize = 13;
}

/// Console output (DebugPutChar, DebugPutString, async PutChar/PutString): the kernel appends
/// the bytes to its console ring and returns at once; harts hand the ring to the UART outside
/// the kernel lock, only as much as the UART's FIFO takes, in order. Printing needs a Console
/// cap (`object::CONSOLE`, the root task's at `init_cap::CONSOLE`), which can be copied and
/// revoked like any cap. A full ring takes fewer bytes than asked (0: none): the caller sends
/// the rest again later, so nothing it was told was taken is lost.
pub mod console {
    /// The ring's size in bytes ('\n' takes two: the kernel stores CRLF).
    pub const RING_BYTES: usize = 16384;
    /// Kept for the kernel's own messages: user output fills the ring up to
    /// `RING_BYTES - KERNEL_RESERVE` bytes.
    pub const KERNEL_RESERVE: usize = 1024;
    /// Bytes one DebugPutString or async PutString takes at most.
    pub const PUT_STRING_MAX: usize = 16;
}

/// Scheduling parameters.
pub mod sched {
    pub const NUM_PRIORITIES: usize = 256;
    pub const MAX_PRIORITY: usize = 255;
    /// The root task's priority and maximum controlled priority.
    pub const ROOT_PRIORITY: usize = 255;
    /// Timer ticks per time slice (seL4's default CONFIG_TIME_SLICE is 5 ticks).
    pub const TIME_SLICE_TICKS: usize = 5;
    /// Timer tick, microseconds.
    pub const TICK_US: usize = 2000;
}

/// Fault messages sent to a thread's fault endpoint: the label says which, MRs carry the
/// details (seL4's RISC-V layouts). Replying restarts the thread; see each kind.
pub mod fault {
    pub const NULL: usize = 0;
    /// MRs: IP, Addr, InRecvPhase, LookupFailureType, then the lookup failure's words.
    pub const CAP_FAULT: usize = 1;
    /// MRs: the thread's pc, sp, ra, a0..a7, syscall number. A reply of the same length writes
    /// those registers back (so a handler can emulate the call and skip it).
    pub const UNKNOWN_SYSCALL: usize = 2;
    /// MRs: pc, sp, flags (0), scause, stval. A reply with length >= 2 sets pc and sp.
    pub const USER_EXCEPTION: usize = 3;
    /// MRs: IP, Addr, PrefetchFault (1 for an instruction fetch), FSR (scause). The reply
    /// restarts the faulting instruction.
    pub const VM_FAULT: usize = 5;

    pub const CAP_FAULT_LENGTH: usize = 4;
    pub const UNKNOWN_SYSCALL_LENGTH: usize = 12;
    pub const USER_EXCEPTION_LENGTH: usize = 5;
    pub const VM_FAULT_LENGTH: usize = 4;
}

/// Register order of TCB_ReadRegisters/WriteRegisters (seL4's RISC-V seL4_UserContext).
pub mod regs {
    /// pc, ra, sp, gp, s0..s11, a0..a7, t0..t6, tp: (name, x-register number; pc = 32).
    pub const ORDER: [u8; 32] = [
        32, 1, 2, 3, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 10, 11, 12, 13, 14, 15, 16, 17, 5, 6, 7, 28, 29, 30,
        31, 4,
    ];
    pub const COUNT: usize = 32;
}

/// The boot-info page the kernel hands the root task (address in a0 at entry). seL4's fields,
/// trimmed of the ones RISC-V has no use for, with the harts and the device regions added.
pub mod bootinfo {
    /// A range of slots in the root CNode: [start, end).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct SlotRegion {
        pub start: usize,
        pub end: usize,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct UntypedDesc {
        pub paddr: usize,
        pub size_bits: u8,
        pub is_device: u8,
        /// A device untyped's PLIC interrupt source, from the device tree (0: none), for the
        /// IRQControl_Get of a user driver (virtio-mmio devices, the console UART).
        pub irq: u16,
        /// What the device tree says the device is (`device_kind`; 0 for RAM), so a root task
        /// picks its driver without probing.
        pub kind: u8,
        pub _pad: u8,
        /// A second interrupt source of the device (0: none): the AXI DMA's receive (S2MM)
        /// interrupt, `irq` being its transmit (MM2S) one; the AXI Ethernet's `interrupt`, `irq`
        /// being its `mac_irq`.
        pub irq2: u16,
    }

    /// `UntypedDesc::kind`: the device-tree node a device untyped (its first page) comes from.
    pub mod device_kind {
        pub const NONE: u8 = 0;
        /// `virtio,mmio` (QEMU virt).
        pub const VIRTIO_MMIO: u8 = 1;
        /// The console UART (`BootInfo::console_uart`).
        pub const CONSOLE_UART: u8 = 2;
        /// A hart's PLIC U-mode context page (`BootInfo::plic_user_context`).
        pub const PLIC_USER_CONTEXT: u8 = 3;
        /// `xlnx,axi-dma-1.00.a`: the AXI DMA (PG021) of the board's Ethernet.
        pub const AXI_DMA: u8 = 4;
        /// `xlnx,axi-ethernet-1.00.a`: the AXI 1G/2.5G Ethernet (PG138).
        pub const AXI_ETHERNET: u8 = 5;
    }

    /// (230 until the module list took a part of the page; QEMU's 256 MiB need about 45.)
    pub const MAX_UNTYPEDS: usize = 180;

    /// Boot modules `BootInfo::modules` lists at most.
    pub const MAX_MODULES: usize = 12;

    /// Where the kernel maps the boot-module window (read-only) in the root task's VSpace:
    /// between the area the test suite maps into and the root task's stack.
    pub const MODULES_VADDR: usize = 0x30_0000_0000;

    /// One boot module: an ELF file of the image (a process of `sw/image.toml`, stripped to
    /// what a loader reads), mapped read-only in the root task at `vaddr`, `size` bytes; the
    /// caps of its frames (read-only, mapped there) are `frames`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct ModuleDesc {
        /// NUL-padded UTF-8.
        pub name: [u8; 32],
        pub vaddr: usize,
        pub size: usize,
        pub frames: SlotRegion,
    }

    impl ModuleDesc {
        pub fn name(&self) -> &str {
            let end = self.name.iter().position(|&b| b == 0).unwrap_or(self.name.len());
            core::str::from_utf8(&self.name[..end]).unwrap_or("")
        }
    }

    /// The boot modules the root task can start processes from.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Modules {
        /// Entries of `list` in use (the image's modules beyond MAX_MODULES are not listed).
        pub count: usize,
        /// The whole window as mapped (at MODULES_VADDR): the module table first (`sw/lib/bootmods`,
        /// with each process's record: hart, priority, caps), then the files.
        pub window_vaddr: usize,
        pub window_size: usize,
        /// Caps of every frame of the window, in address order.
        pub frames: SlotRegion,
        pub list: [ModuleDesc; MAX_MODULES],
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct DeviceDesc {
        pub paddr: usize,
        pub reg_shift: usize,
        /// Register access width in bytes.
        pub io_width: usize,
        pub irq: usize,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct TimerFrame {
        pub slot: usize,
        pub offset: usize,
    }

    #[repr(C)]
    pub struct BootInfo {
        /// Number of harts the kernel runs on (seL4 numNodes) and the one the root task starts
        /// on (nodeID).
        pub num_nodes: usize,
        pub node_id: usize,
        pub ipc_buffer: usize,
        pub empty: SlotRegion,
        pub user_image_frames: SlotRegion,
        pub user_image_paging: SlotRegion,
        pub untyped: SlotRegion,
        pub init_cnode_size_bits: usize,
        /// Cycles per second of the cycle counter is unknown to the kernel; this is the timer's.
        pub timebase_hz: usize,
        /// Hart ids, in order of TCB_SetAffinity's argument (affinity = index here).
        pub hart_ids: [usize; 8],
        /// How user interrupts are provided: `uintr::MODE_*`.
        pub uintr_mode: usize,
        /// Receiver slots the UINTC (or the emulation) has.
        pub uintr_slots: usize,
        /// By hart index: the physical page of the PLIC's U-mode context (threshold at +0,
        /// claim/complete at +4) for user-level device interrupts, also in the untyped list as
        /// a one-page device untyped; 0 where there is none.
        pub plic_user_context: [usize; 8],
        /// The console UART, its page also a device untyped (a user driver may own it; the
        /// kernel only polls it for debug output): register base, register stride
        /// (1 << reg_shift bytes), access width, PLIC source (0: none).
        pub console_uart: DeviceDesc,
        /// The timebase counter as memory: a read-only Frame cap (slot; 0: none) to the page
        /// of the CLINT that holds `mtime` (nothing else: the timer compare and IPI registers
        /// are on other pages), and mtime's byte offset in it. Reading it costs a load where
        /// `rdtime` traps to the firmware (cores without a `time` CSR): `userlib::time`.
        pub timer_frame: TimerFrame,
        /// The image's boot modules (the root task's own among them).
        pub modules: Modules,
        pub untyped_list: [UntypedDesc; MAX_UNTYPEDS],
    }
    const _: () = assert!(core::mem::size_of::<BootInfo>() <= 4096);

    /// What a process started from a boot module (`userlib::process`) is given. Its address
    /// space is laid out as the root task's: the program from its ELF, its stack below
    /// `layout::ROOT_STACK_TOP`, this page (read-only, also in a0 at entry) at
    /// `layout::ROOT_BOOTINFO`, its IPC buffer at `layout::ROOT_IPC_BUFFER`.
    pub mod process {
        use super::SlotRegion;

        /// Its own CNode, with a guard that pads a slot number to a whole cptr.
        pub const CNODE: usize = 1;
        /// A copy of its starter's Console cap (empty if the starter had none).
        pub const CONSOLE: usize = 2;
        /// The caps the manifest gives it (`caps` of its `[process.*]`), in that order.
        pub const FIRST_GIVEN: usize = 8;
        /// `ProcessInfo::magic`: "PROCINFO".
        pub const MAGIC: usize = 0x4f46_4e49_434f_5250;

        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct ProcessInfo {
            pub magic: usize,
            /// Its module's name, NUL-padded.
            pub name: [u8; 32],
            /// The hart index it was started on (`BootInfo::hart_ids` order) and its priority.
            pub hart: usize,
            pub priority: usize,
            pub ipc_buffer: usize,
            pub stack_top: usize,
            pub cnode_size_bits: usize,
            /// Slots of the given caps, and the free ones after them.
            pub given: SlotRegion,
            pub empty: SlotRegion,
            /// Index in `given` of its fault endpoint, or usize::MAX.
            pub fault: usize,
        }
        const _: () = assert!(core::mem::size_of::<ProcessInfo>() <= 4096);
    }
}
