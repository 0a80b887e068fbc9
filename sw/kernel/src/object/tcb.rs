//! Thread control blocks: a thread's registers, its CSpace/VSpace/IPC-buffer capabilities, its
//! scheduling parameters and its IPC state; and the TCB invocations.
use super::{at, cap_at, InvResult, KSlots};
use crate::arch::trap::UserContext;
use crate::ipc::{self, Msg};
use crate::sched;
use abi::{label, regs};
use caps::{Cap, Error, Slot, SlotRef};

/// The TCB's own capability slots (seL4's tcbCTable, tcbVTable, tcbReply, tcbCaller, tcbBuffer).
pub const CTABLE: usize = 0;
pub const VTABLE: usize = 1;
pub const CALLER: usize = 3;
pub const BUFFER: usize = 4;
/// The kernel's copies of the frames of the thread's syscall buffer (crate::asyscall).
pub const ASYS_REQ: usize = 5;
pub const ASYS_REP: usize = 6;
pub const SLOTS: usize = 7;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Inactive,
    Running,
    BlockedOnReceive,
    BlockedOnSend,
    BlockedOnReply,
    BlockedOnNotification,
}

/// A fault waiting to be delivered to (or answered by) the fault handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// cptr that failed, whether in the receive phase.
    /// `lookup`: seL4_LookupFailureType of why (2, missing capability, for wrong rights).
    Cap {
        cptr: usize,
        in_recv: bool,
        lookup: usize,
    },
    UnknownSyscall {
        number: usize,
    },
    UserException {
        cause: usize,
        tval: usize,
    },
    Vm {
        addr: usize,
        cause: usize,
        fetch: bool,
    },
}

/// `repr(C)`, laid out by who touches what (TCBs are 64-byte aligned objects): the registers;
/// a block only the thread's own hart writes (beside `sepc`, on every trap); the cap slots,
/// each on a line of its own (a reply cap written from another hart misses one line, not two);
/// then one line with everything a partner on another hart reads or writes in a Call, a reply,
/// a wake-up or a hand-over (`state` .. `reply_holder`), one with what a waker also reads
/// (`fault`, `satp_cache`, the ready-queue links), and the rest. Spread over four lines, the
/// partner-touched fields cost a cross-hart round trip about three more misses each way.
#[repr(C)]
pub struct Tcb {
    /// First: `sscratch` points here while the thread runs (see arch::trap).
    pub ctx: UserContext,
    /// The `ecall` of the system call in progress: a cancelled IPC restarts it.
    pub restart_pc: usize,
    /// Kernel entries the thread made itself (system calls, faults, emulated instructions).
    pub entries: u64,
    pub ipc_buffer: usize,
    pub fault_ep: usize,
    /// All TCBs, for DebugDumpScheduler (`dbg_prev` below).
    pub dbg_next: *mut Tcb,
    /// Its last fastpath IPC partner was on another hart: the next one probably is too, so the
    /// fastpath takes the lines it will write writable at once (`arch::cpu::own_line`), which
    /// only pays when the partner wrote them last.
    pub remote_partner: bool,
    /// It wrote FP state in its last run: the switch to it loads that state (crate::fpu).
    pub fpu_eager: bool,
    pub slots: [Slot; SLOTS],
    // ---- the partner's line
    pub state: State,
    pub prio: u8,
    /// Member of its hart's ready queue of `prio`.
    pub queued: bool,
    /// A blocked receiver may receive caps.
    pub recv_can_grant: bool,
    /// What a blocked sender sends (and whether it called); its badge is below.
    pub send_can_grant: bool,
    pub send_can_grant_reply: bool,
    pub send_is_call: bool,
    /// The root task's first thread: with no fault handler, its fault ends the run.
    pub is_root: bool,
    /// The hart this thread runs on.
    pub affinity: usize,
    /// The hart this thread is current on, if any.
    pub current_on: Option<usize>,
    /// Endpoint/notification queue links and the object the thread blocks on.
    pub ep_next: *mut Tcb,
    pub ep_prev: *mut Tcb,
    pub blocked_on: u64,
    /// The slot holding the reply cap that answers this thread, while BlockedOnReply (a
    /// partner replying from another hart writes it).
    pub reply_holder: SlotRef,
    // ---- what a waker also reads
    pub fault: Fault,
    /// satp and ASID it last ran with, and the `vspace::spaces_gen` they were computed at
    /// (`vspace::satp_of`): every switch to the thread reads them, a waker on another hart too
    /// (`sched::hand_off`).
    pub satp_cache: core::cell::Cell<(u64, usize, usize)>,
    /// Ready-queue links (per-hart queue of `prio`).
    pub sched_next: *mut Tcb,
    pub sched_prev: *mut Tcb,
    // ---- the rest
    /// Ticks left in the current time slice.
    pub slice: u32,
    pub mcp: u8,
    /// What user-interrupt hardware it may hold (`abi::uintr::GRANT_*`, UintrControl).
    pub uintr_grants: u8,
    pub send_badge: u64,
    pub bound_ntfn: u64,
    pub dbg_prev: *mut Tcb,
    /// User-interrupt state (crate::uintr).
    pub uintr: crate::uintr::ThreadState,
    /// Its kernel deadline (crate::deadline).
    pub deadline: crate::deadline::Armed,
    /// Its async-syscall handler (crate::asyscall).
    pub asys: crate::asyscall::Handler,
    /// Which invocation runs now: a restarted one (preempted, `Error::Preempted`) has the key
    /// the kernel expects for it (`endpoint::next_key`). Sync calls: the entry count; async
    /// requests: `ASYNC_KEY` with the count of requests run.
    pub call_key: u64,
    /// Async requests of this thread run to an answer (it keys them).
    pub requests_run: u64,
    /// CNode_CancelBadgedSends: its pass in progress, and the last pass that looked at this
    /// thread as a queued sender (`endpoint::cancel_badged_sends`).
    pub cancel: crate::object::endpoint::Cancel,
    /// Its F/D registers while no hart holds them (crate::fpu).
    pub fpu: crate::fpu::ThreadFpu,
}

const _: () = assert!(core::mem::offset_of!(Tcb, slots) % 64 == 0);
const _: () = assert!(core::mem::size_of::<Slot>() == 64);
const _: () = assert!(core::mem::offset_of!(Tcb, state) % 64 == 0);
const _: () = assert!(core::mem::offset_of!(Tcb, reply_holder) + 8 == core::mem::offset_of!(Tcb, state) + 64);
const _: () = assert!(core::mem::offset_of!(Tcb, fault) == core::mem::offset_of!(Tcb, state) + 64);
const _: () = assert!(core::mem::offset_of!(Tcb, sched_prev) + 8 <= core::mem::offset_of!(Tcb, fault) + 64);
const _: () = assert!(core::mem::size_of::<Tcb>() <= 1 << abi::object::TCB_BITS);

impl Tcb {
    pub fn pa(&self) -> u64 {
        crate::mm::virt_to_phys(self as *const Tcb as usize) as u64
    }
    pub fn slot(&self, i: usize) -> SlotRef {
        self.pa() + core::mem::offset_of!(Tcb, slots) as u64 + (i * core::mem::size_of::<Slot>()) as u64
    }
    pub fn cspace(&self) -> Cap {
        self.slots[CTABLE].cap
    }
    pub fn is_runnable(&self) -> bool {
        self.state == State::Running
    }
}

static mut ALL: *mut Tcb = core::ptr::null_mut();

/// Make a fresh TCB in zeroed object memory at `pa` (retype).
pub fn create(pa: u64, hart: usize) {
    let t = at::<core::mem::MaybeUninit<Tcb>>(pa);
    t.write(Tcb {
        ctx: UserContext::new(),
        slots: [Slot::default(); SLOTS],
        state: State::Inactive,
        prio: 0,
        mcp: 0,
        affinity: hart,
        slice: abi::sched::TIME_SLICE_TICKS as u32,
        sched_next: core::ptr::null_mut(),
        sched_prev: core::ptr::null_mut(),
        queued: false,
        current_on: None,
        ep_next: core::ptr::null_mut(),
        ep_prev: core::ptr::null_mut(),
        blocked_on: 0,
        send_badge: 0,
        send_can_grant: false,
        send_can_grant_reply: false,
        send_is_call: false,
        recv_can_grant: false,
        fault_ep: 0,
        ipc_buffer: 0,
        bound_ntfn: 0,
        fault: Fault::None,
        restart_pc: 0,
        reply_holder: 0,
        dbg_next: core::ptr::null_mut(),
        dbg_prev: core::ptr::null_mut(),
        remote_partner: false,
        fpu_eager: false,
        fpu: crate::fpu::ThreadFpu::new(),
        is_root: false,
        satp_cache: core::cell::Cell::new((0, 0, 0)),
        uintr_grants: 0,
        uintr: Default::default(),
        entries: 0,
        deadline: Default::default(),
        asys: Default::default(),
        call_key: 0,
        requests_run: 0,
        cancel: Default::default(),
    });
    let t = at::<Tcb>(pa);
    // SAFETY: ALL is only touched under the kernel lock.
    unsafe {
        t.dbg_next = ALL;
        if !ALL.is_null() {
            (*ALL).dbg_prev = t;
        }
        ALL = t;
    }
}

/// Every live TCB (the scheduler dump, the consistency checker).
pub fn for_each(mut f: impl FnMut(&Tcb)) {
    // SAFETY: under the kernel lock.
    let mut p = unsafe { ALL };
    while !p.is_null() {
        // SAFETY: linked TCBs are live.
        let t = unsafe { &*p };
        f(t);
        p = t.dbg_next;
    }
}

/// `p` is a live TCB (the consistency checker, before it follows a link; linear in the TCBs).
pub fn is_live(p: *const Tcb) -> bool {
    let mut live = false;
    for_each(|t| live |= core::ptr::eq(t, p));
    live
}

/// Stop the thread wherever it is: off every queue, its IPC cancelled, not current anywhere.
pub fn suspend(t: &mut Tcb) {
    // A thread blocked in a system call runs it again once resumed (seL4's Restart): it has not
    // returned, so it must not come back from its `ecall` with its arguments as the result. A
    // thread blocked by a fault already points at the faulting instruction.
    if t.fault == Fault::None
        && matches!(
            t.state,
            State::BlockedOnSend | State::BlockedOnReceive | State::BlockedOnNotification | State::BlockedOnReply
        )
    {
        t.ctx.sepc = t.restart_pc;
    }
    cancel_ipc(t);
    if t.state == State::Running {
        sched::stall(t);
    }
    t.state = State::Inactive;
    sched::dequeue(t);
    crate::deadline::on_suspend(t);
}

/// Take the thread out of whatever IPC it is blocked in. Blocked senders and receivers are left
/// to restart their system call when they run again.
pub fn cancel_ipc(t: &mut Tcb) {
    match t.state {
        State::BlockedOnSend | State::BlockedOnReceive => super::endpoint::remove_waiter(t),
        State::BlockedOnNotification => super::notification::remove_waiter(t),
        State::BlockedOnReply => {
            t.fault = Fault::None;
            if t.reply_holder != 0 {
                let holder = t.reply_holder;
                t.reply_holder = 0;
                caps::cdt::delete(&mut KSlots, holder);
            }
        }
        _ => return,
    }
    t.state = State::Inactive;
}

/// Make a thread that was blocked in a system call run it again from its `ecall`.
pub fn restart(t: &mut Tcb) {
    cancel_ipc(t);
    t.ctx.sepc = t.restart_pc;
    sched::make_runnable(t);
}

/// The thread's last capability went away: stop it and delete the caps it holds.
pub fn destroy(pa: u64, finals: &mut dyn FnMut(Cap)) {
    let t = at::<Tcb>(pa);
    suspend(t);
    if t.bound_ntfn != 0 {
        super::notification::unbind(at(t.bound_ntfn));
    }
    crate::uintr::tcb_destroyed(t);
    crate::deadline::cancel(t);
    crate::asyscall::tcb_destroyed(t);
    crate::fpu::tcb_destroyed(t);
    for i in 0..SLOTS {
        if let Some(f) = caps::cdt::delete(&mut KSlots, t.slot(i)) {
            finals(f);
        }
    }
    // SAFETY: under the kernel lock.
    unsafe {
        if !t.dbg_prev.is_null() {
            (*t.dbg_prev).dbg_next = t.dbg_next;
        } else {
            ALL = t.dbg_next;
        }
        if !t.dbg_next.is_null() {
            (*t.dbg_next).dbg_prev = t.dbg_prev;
        }
    }
    t.dbg_next = core::ptr::null_mut();
    t.dbg_prev = core::ptr::null_mut();
}

/// The reply cap for thread `tcb` was deleted (it stays blocked, as in seL4).
pub fn reply_cap_gone(tcb: u64) {
    let t = at::<Tcb>(tcb);
    t.reply_holder = 0;
}

/// Put `cap` into one of the TCB's slots as a copy of the cap in `src` (Configure, SetSpace,
/// SetIPCBuffer), deleting what was there.
///
/// Deleting the old cap can destroy objects (the old CSpace root may be the last cap to the
/// CNode that holds the argument caps), so the source is checked again afterwards and the new
/// cap goes in only if it still names the same object (seL4 sameObjectAs); otherwise the slot
/// stays empty, as in seL4.
fn install(t: &mut Tcb, i: usize, cap: Cap, src: SlotRef) -> Result<(), Error> {
    super::delete_slot(t.slot(i));
    if cap.is_null() || !caps::cdt::same_object(&cap, &cap_at(src)) {
        return Ok(());
    }
    caps::cdt::insert(&mut KSlots, src, t.slot(i), cap)
}

/// A cap argument for the CSpace root: a CNode, optionally with new guard data.
fn cspace_arg(cap: Cap, data: usize) -> Result<Cap, Error> {
    let cap = cap.derive().map_err(|_| Error::IllegalOperation)?;
    let cap = if data != 0 { cap.update_data(data as u64).ok_or(Error::IllegalOperation)? } else { cap };
    match cap {
        Cap::CNode { .. } => Ok(cap),
        _ => Err(Error::IllegalOperation),
    }
}

/// A VSpace root: a page table that owns an ASID.
fn vspace_arg(cap: Cap) -> Result<Cap, Error> {
    match cap {
        Cap::PageTable { mapped: Some((_, caps::cap::PT_ROOT)), .. } => Ok(cap),
        _ => Err(Error::IllegalOperation),
    }
}

/// An IPC buffer: a RAM frame and an aligned address (0 with no frame = none).
fn buffer_arg(cap: Cap, vaddr: usize) -> Result<Cap, Error> {
    if vaddr & ((1 << abi::ipc::BUFFER_SIZE_BITS) - 1) != 0 {
        return Err(Error::AlignmentError);
    }
    match cap {
        Cap::Frame { base, .. } if crate::mm::is_ram(base) => Ok(cap.derive()?),
        _ => Err(Error::IllegalOperation),
    }
}

fn set_priority(t: &mut Tcb, prio: u8) {
    sched::dequeue(t);
    let lowered = prio < t.prio;
    t.prio = prio;
    if t.state == State::Running {
        sched::make_runnable(t);
        // Running on another hart at a lower priority now: that hart chooses again at once
        // rather than at its next tick (a raise is make_runnable's business).
        if lowered {
            if let Some(h) = t.current_on {
                sched::reschedule(h);
            }
        }
    }
}

/// `authority`'s MCP bounds the priority (and MCP) it may give.
fn check_prio(prio: usize, authority: &Cap) -> Result<u8, Error> {
    let Cap::Tcb { obj } = *authority else { return Err(Error::InvalidCapability(1)) };
    let mcp = at::<Tcb>(obj).mcp as usize;
    if prio > mcp {
        return Err(Error::RangeError { min: 0, max: mcp as u64 });
    }
    Ok(prio as u8)
}

pub fn invoke(me: &mut Tcb, target: u64, m: &Msg) -> InvResult {
    let t = at::<Tcb>(target);
    match m.label {
        label::TCB_READ_REGISTERS => {
            m.need(3, 0)?;
            let (suspend_src, count) = (m.mr(me, 0), m.mr(me, 2));
            if count == 0 || count > regs::COUNT {
                return Err(Error::RangeError { min: 1, max: regs::COUNT as u64 });
            }
            if core::ptr::eq(t, me) {
                return Err(Error::IllegalOperation);
            }
            if suspend_src & 1 != 0 {
                suspend(t);
            } else if t.state == State::Running {
                sched::stall(t);
            }
            let regs_now = read_regs(t);
            // Without an IPC buffer only the first few fit: the reply says how many did.
            let written = regs_now.iter().take(count).enumerate().take_while(|&(i, v)| ipc::set_mr(me, i, *v)).count();
            Ok(written)
        }
        label::TCB_WRITE_REGISTERS => {
            m.need(3, 0)?;
            let (resume, count) = (m.mr(me, 0), m.mr(me, 2));
            if count > regs::COUNT || count > m.length - 3 {
                return Err(Error::RangeError { min: 0, max: (m.length - 3).min(regs::COUNT) as u64 });
            }
            if core::ptr::eq(t, me) {
                return Err(Error::IllegalOperation);
            }
            if t.state == State::Running {
                sched::stall(t);
            }
            for i in 0..count {
                write_reg(t, i, m.mr(me, 3 + i));
            }
            if resume & 1 != 0 && t.state == State::Inactive {
                resume_thread(t);
            }
            Ok(0)
        }
        label::TCB_COPY_REGISTERS => {
            // MR0: suspend source (bit 0), resume target (1), frame registers (2), integer
            // registers (3): libsel4 packs them into one word.
            m.need(1, 1)?;
            let Cap::Tcb { obj: src } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
            let src = at::<Tcb>(src);
            let flags = m.mr(me, 0);
            if flags & 1 != 0 {
                suspend(src);
            } else if src.state == State::Running {
                sched::stall(src);
            }
            if t.state == State::Running {
                sched::stall(t);
            }
            let from = read_regs(src);
            // seL4's split on RISC-V: pc, ra, sp, gp, s0..s11 are the frame; the rest integer.
            for (i, v) in from.iter().enumerate() {
                let frame = i < 16;
                if (frame && flags & 4 != 0) || (!frame && flags & 8 != 0) {
                    write_reg(t, i, *v);
                }
            }
            if flags & 2 != 0 && t.state == State::Inactive {
                resume_thread(t);
            }
            Ok(0)
        }
        label::TCB_CONFIGURE => {
            m.need(4, 3)?;
            // The old CSpace root may be the last cap to a big CNode: empty it preemptibly
            // before anything changes, so a restarted call finds everything as it was.
            super::prepare_delete(t.slot(CTABLE))?;
            let (fault_ep, cdata, _vdata, buffer) = (m.mr(me, 0), m.mr(me, 1), m.mr(me, 2), m.mr(me, 3));
            let cspace = cspace_arg(m.caps[0].0, cdata).map_err(|_| Error::InvalidCapability(1))?;
            let vspace = vspace_arg(m.caps[1].0).map_err(|_| Error::InvalidCapability(2))?;
            let frame = if buffer == 0 { Cap::Null } else { buffer_arg(m.caps[2].0, buffer)? };
            t.fault_ep = fault_ep;
            install(t, CTABLE, cspace, m.caps[0].1)?;
            install(t, VTABLE, vspace, m.caps[1].1)?;
            install(t, BUFFER, frame, m.caps[2].1)?;
            t.ipc_buffer = buffer;
            Ok(0)
        }
        label::TCB_SET_PRIORITY | label::TCB_SET_MC_PRIORITY => {
            m.need(1, 1)?;
            let prio = check_prio(m.mr(me, 0), &m.caps[0].0)?;
            if m.label == label::TCB_SET_PRIORITY {
                set_priority(t, prio);
            } else {
                t.mcp = prio;
            }
            Ok(0)
        }
        label::TCB_SET_SCHED_PARAMS => {
            m.need(2, 1)?;
            let mcp = check_prio(m.mr(me, 0), &m.caps[0].0)?;
            let prio = check_prio(m.mr(me, 1), &m.caps[0].0)?;
            t.mcp = mcp;
            set_priority(t, prio);
            Ok(0)
        }
        label::TCB_SET_IPC_BUFFER => {
            m.need(1, 0)?;
            let buffer = m.mr(me, 0);
            if buffer == 0 {
                install(t, BUFFER, Cap::Null, 0)?;
            } else {
                m.need(1, 1)?;
                let frame = buffer_arg(m.caps[0].0, buffer)?;
                install(t, BUFFER, frame, m.caps[0].1)?;
            }
            t.ipc_buffer = buffer;
            Ok(0)
        }
        label::TCB_SET_SPACE => {
            m.need(3, 2)?;
            // The old CSpace root may be the last cap to a big CNode: empty it preemptibly
            // before anything changes, so a restarted call finds everything as it was.
            super::prepare_delete(t.slot(CTABLE))?;
            let (fault_ep, cdata) = (m.mr(me, 0), m.mr(me, 1));
            let cspace = cspace_arg(m.caps[0].0, cdata).map_err(|_| Error::InvalidCapability(1))?;
            let vspace = vspace_arg(m.caps[1].0).map_err(|_| Error::InvalidCapability(2))?;
            t.fault_ep = fault_ep;
            install(t, CTABLE, cspace, m.caps[0].1)?;
            install(t, VTABLE, vspace, m.caps[1].1)?;
            Ok(0)
        }
        label::TCB_SUSPEND => {
            suspend(t);
            Ok(0)
        }
        label::TCB_RESUME => {
            if t.state == State::Inactive {
                resume_thread(t);
            }
            Ok(0)
        }
        label::TCB_BIND_NOTIFICATION => {
            m.need(0, 1)?;
            let Cap::Notification { obj, rights, .. } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
            if t.bound_ntfn != 0 {
                return Err(Error::IllegalOperation);
            }
            if !rights.read {
                return Err(Error::IllegalOperation);
            }
            super::notification::bind(at(obj), t).map(|_| 0)
        }
        label::TCB_UNBIND_NOTIFICATION => {
            if t.bound_ntfn == 0 {
                return Err(Error::IllegalOperation);
            }
            super::notification::unbind(at(t.bound_ntfn));
            Ok(0)
        }
        label::TCB_SET_AFFINITY => {
            m.need(1, 0)?;
            let aff = m.mr(me, 0);
            let hart = sched::hart_of_index(aff).ok_or(Error::InvalidArgument(0))?;
            // Its user-level device interrupts are routed to its current hart's PLIC context.
            if !crate::uintr::ueip::may_move(t, hart) {
                return Err(Error::IllegalOperation);
            }
            sched::set_affinity(t, hart);
            crate::deadline::on_affinity(t);
            Ok(0)
        }
        label::TCB_REGISTER_SYSCALL_BUFFER => crate::asyscall::register(me, t, m),
        label::TCB_UNREGISTER_SYSCALL_BUFFER => crate::asyscall::unregister_invocation(t),
        label::TCB_SET_SYSCALL_HANDLER_HARTS => crate::asyscall::harts::invoke(me, t, m),
        label::TCB_SET_TLS_BASE => {
            m.need(1, 0)?;
            if t.state == State::Running && !core::ptr::eq(t, me) {
                sched::stall(t);
            }
            t.ctx.regs[4] = m.mr(me, 0);
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}

/// Resume: a never-started or suspended thread runs from its saved pc.
fn resume_thread(t: &mut Tcb) {
    cancel_ipc(t);
    sched::make_runnable(t);
    crate::deadline::on_resume(t);
}

fn read_regs(t: &Tcb) -> [usize; regs::COUNT] {
    let mut out = [0; regs::COUNT];
    for (i, r) in regs::ORDER.iter().enumerate() {
        out[i] = if *r == 32 { t.ctx.sepc } else { t.ctx.regs[*r as usize] };
    }
    out
}

fn write_reg(t: &mut Tcb, i: usize, v: usize) {
    match regs::ORDER[i] {
        32 => t.ctx.sepc = v,
        r => t.ctx.regs[r as usize] = v,
    }
}

pub fn lookup_cap_of(t: &Tcb, cptr: usize) -> Option<(Cap, SlotRef)> {
    lookup_cap(t, cptr).ok()
}

pub fn lookup_cap(t: &Tcb, cptr: usize) -> Result<(Cap, SlotRef), caps::cspace::LookupFault> {
    let slot = caps::cspace::lookup_slot(&KSlots, t.cspace(), cptr as u64)?;
    Ok((cap_at(slot), slot))
}
