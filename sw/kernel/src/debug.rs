//! Debug system calls: console output (into the console ring, `console`), the cycle counter, kernel counters, the scheduler dump,
//! cap identification and halting the machine with a verdict.
use crate::ipc::{self, A0, A1};
use crate::object::tcb::{self, Tcb};
use crate::{arch, kprintln, sched, stats};
use abi::{object, stat, syscall as nr};
use caps::Cap;

/// Handle debug call `n`; false if `n` is not one.
pub fn handle(me: &mut Tcb, n: isize) -> bool {
    let a0 = me.ctx.regs[A0];
    match n {
        // Console output needs a Console cap (a1 / a2) and only appends to the console ring:
        // the count it took comes back (0 when the ring is full), usize::MAX without the cap.
        nr::DEBUG_PUT_CHAR => {
            me.ctx.regs[A0] =
                if holds_console_cap(me, me.ctx.regs[A1]) { crate::console::put_user(&[a0 as u8]) } else { usize::MAX };
        }
        nr::DEBUG_PUT_STRING => {
            let b = match ipc::buffer(me) {
                Some(b) if holds_console_cap(me, me.ctx.regs[A0 + 2]) => b,
                _ => {
                    me.ctx.regs[A0] = usize::MAX;
                    return true;
                }
            };
            // A few bytes per call bound the copy under the lock; the caller goes on from
            // a1 + the count.
            let area = core::mem::size_of_val(&b.msg);
            let from = me.ctx.regs[A1].min(area);
            let len = a0.min(area - from).min(abi::console::PUT_STRING_MAX);
            // SAFETY: the msg array is plain words; reading it as bytes is fine.
            let bytes = unsafe { core::slice::from_raw_parts((b.msg.as_ptr() as *const u8).add(from), len) };
            me.ctx.regs[A0] = crate::console::put_user(bytes);
        }
        nr::DEBUG_GET_CLOCK => {
            me.ctx.regs[A0] = arch::cpu::cycles() as usize;
            me.ctx.regs[A1] = crate::percpu::this().hart;
        }
        // Reading a counter is open; starting a measurement over (`RESET`) changes what every
        // other reader sees, so it needs the debug capability (its cptr in a1). `ONE_HART`
        // takes a hart index in a1 instead; the two do not combine.
        nr::DEBUG_STAT => {
            let a1 = me.ctx.regs[A1];
            me.ctx.regs[A0] = if a0 & stat::RESET != 0 && (a0 & stat::ONE_HART != 0 || !holds_debug_cap(me, a1)) {
                usize::MAX
            } else {
                stats::read_debug(a0, a1).map_or(usize::MAX, |v| v as usize)
            }
        }
        // The scheduler dump shows kernel addresses and Halt ends the system: both need the
        // debug capability (its cptr in a0 / a1); without it they return usize::MAX.
        nr::DEBUG_DUMP_SCHEDULER => {
            if !holds_debug_cap(me, a0) {
                me.ctx.regs[A0] = usize::MAX;
                return true;
            }
            sched::dump();
            me.ctx.regs[A0] = 0;
        }
        // A thread's kernel-entry count is a measurement tool like the scheduler dump: it needs
        // the debug capability (a1) besides the TCB cap (a0).
        nr::DEBUG_THREAD_ENTRIES => {
            me.ctx.regs[A0] = match tcb::lookup_cap_of(me, a0) {
                Some((caps::Cap::Tcb { obj }, _)) if holds_debug_cap(me, me.ctx.regs[A1]) => {
                    crate::object::at::<tcb::Tcb>(obj).entries as usize
                }
                _ => usize::MAX,
            };
        }
        nr::DEBUG_CAP_IDENTIFY => {
            me.ctx.regs[A0] = tcb::lookup_cap_of(me, a0).map_or(0, |(c, _)| identify(&c));
        }
        nr::DEBUG_CHECK_INVARIANTS => {
            if !holds_debug_cap(me, a0) {
                me.ctx.regs[A0] = usize::MAX;
                return true;
            }
            // a1 = 1: only what is reachable from the CNode at cptr a2 (the fuzzer's per-step
            // check); anything else checks everything.
            let scope = match me.ctx.regs[A1] {
                1 => match tcb::lookup_cap_of(me, me.ctx.regs[A0 + 2]) {
                    Some((c @ Cap::CNode { .. }, _)) => Some(c),
                    _ => {
                        me.ctx.regs[A0] = usize::MAX;
                        return true;
                    }
                },
                _ => None,
            };
            let t0 = arch::cpu::time();
            let r = crate::invariants::check(scope);
            me.ctx.regs[A0 + 3] = (arch::cpu::time() - t0) as usize;
            me.ctx.regs[A0] = r.violations;
            me.ctx.regs[A1] = r.slots;
            me.ctx.regs[crate::ipc::A0 + 2] = r.truncated as usize;
        }
        nr::DEBUG_HALT => {
            if !holds_debug_cap(me, me.ctx.regs[A1]) {
                me.ctx.regs[A0] = usize::MAX;
                return true;
            }
            kprintln!("[kernel] DebugHalt({a0}) from the root task");
            if a0 == 0 {
                arch::exit::pass()
            } else {
                arch::exit::fail(a0.min(255) as u32)
            }
        }
        _ => return false,
    }
    true
}

fn holds_debug_cap(me: &Tcb, cptr: usize) -> bool {
    matches!(tcb::lookup_cap_of(me, cptr), Some((Cap::DebugControl, _)))
}

fn holds_console_cap(me: &Tcb, cptr: usize) -> bool {
    matches!(tcb::lookup_cap_of(me, cptr), Some((Cap::Console, _)))
}

/// Object type + 1 (0 = empty).
fn identify(c: &Cap) -> usize {
    1 + match c {
        Cap::Null => return 0,
        Cap::Untyped { .. } => object::UNTYPED,
        Cap::Tcb { .. } => object::TCB,
        Cap::Endpoint { .. } => object::ENDPOINT,
        Cap::Notification { .. } => object::NOTIFICATION,
        Cap::CNode { .. } => object::CNODE,
        Cap::Frame { size_bits: 30, .. } => object::GIGA_PAGE,
        Cap::Frame { size_bits: 21, .. } => object::MEGA_PAGE,
        Cap::Frame { .. } => object::PAGE_4K,
        Cap::PageTable { .. } => object::PAGE_TABLE,
        Cap::AsidPool { .. } => object::ASID_POOL,
        Cap::AsidControl => object::ASID_CONTROL,
        Cap::IrqControl => object::IRQ_CONTROL,
        Cap::IrqHandler { .. } => object::IRQ_HANDLER,
        Cap::Reply { .. } => object::REPLY,
        Cap::DebugControl => object::DEBUG_CONTROL,
        Cap::UintrControl => object::UINTR_CONTROL,
        Cap::SenderTable { .. } => object::UINTR_SENDER_TABLE,
        Cap::Console => object::CONSOLE,
    }
}
