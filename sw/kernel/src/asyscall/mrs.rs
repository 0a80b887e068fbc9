//! The message registers of the async request a hart is running: the invocation code reads its
//! arguments with `ipc::get_mr` and writes results with `ipc::set_mr` as on the sync path, and
//! while a request runs those go here instead of the thread's registers and IPC buffer (the
//! thread may be running on another hart meanwhile: its saved registers are not ours to touch).
use crate::kcell::KCell;
use crate::object::tcb::Tcb;
use abi::asys::MAX_ARGS;
use aring::PAYLOAD_WORDS;
use platform::image::MAX_HARTS;

#[derive(Clone, Copy)]
struct Regs {
    /// The thread the request runs for (0: none on this hart).
    tcb: u64,
    args: [usize; MAX_ARGS],
    nargs: usize,
    out: [usize; PAYLOAD_WORDS],
}

const NONE: Regs = Regs { tcb: 0, args: [0; MAX_ARGS], nargs: 0, out: [0; PAYLOAD_WORDS] };
static REGS: KCell<[Regs; MAX_HARTS]> = KCell::new([NONE; MAX_HARTS]);

fn mine() -> &'static mut Regs {
    // SAFETY: each hart its own entry, under the kernel lock.
    unsafe { &mut REGS.get()[crate::percpu::this().hart] }
}

fn active(t: &Tcb) -> Option<&'static mut Regs> {
    let r = mine();
    (r.tcb != 0 && r.tcb == t.pa()).then_some(r)
}

/// From here to `end`, `t`'s message registers are `args` (results go to a reply buffer).
/// Field by field: `args` past `nargs` are never read, so only the results start zeroed (a
/// whole-`Regs` store was two 170-byte memsets per request).
pub fn begin(t: &Tcb, args: &[usize]) {
    let r = mine();
    r.tcb = t.pa();
    r.nargs = args.len().min(MAX_ARGS);
    r.args[..r.nargs].copy_from_slice(&args[..r.nargs]);
    r.out = [0; PAYLOAD_WORDS];
}

/// Back to the thread's own registers; returns the results written.
pub fn end() -> [usize; PAYLOAD_WORDS] {
    let r = mine();
    r.tcb = 0;
    r.out
}

/// `ipc::get_mr` of a thread with a request running here: Some(value).
pub fn get(t: &Tcb, i: usize) -> Option<usize> {
    let r = active(t)?;
    Some(if i < r.nargs { r.args[i] } else { 0 })
}

/// `ipc::set_mr`: Some(whether it fits in a reply item).
pub fn set(t: &Tcb, i: usize, v: usize) -> Option<bool> {
    let r = active(t)?;
    Some(match r.out.get_mut(i) {
        Some(o) => {
            *o = v;
            true
        }
        None => false,
    })
}

/// `ipc::max_length`: the arguments a request can carry.
pub fn max_length(t: &Tcb) -> Option<usize> {
    active(t).map(|_| MAX_ARGS)
}
