//! The kernel fuzzer: seeded random invocations with random and adversarial arguments from the
//! root task and worker threads on the other harts, all over one pool of slots, with the
//! kernel's consistency checker run after every step of the main fuzz thread: scoped to the
//! fuzz CSpace (everything a step can touch is reachable from it: the pool, the objects and
//! TCBs in it, the sandbox VSpace), and over the whole system every `full_every()` steps and
//! after the last. `make fuzz SEED=.. COUNT=..` runs it alone; the suite runs a bounded run
//! (`FUZZ_COUNT` default).
//!
//! What stays out of reach on purpose: the root task's own caps (every slot index an argument
//! can name is a pool slot or garbage that fails lookup), blocking receives (a step must end),
//! and register writes that could point a thread at real code (written values are
//! non-canonical).
//!
//! A worker that faults (a receive on a cap without Read, say) goes to its fault endpoint; the
//! root, watching, counts the fault and restarts the worker at its next step, so the fault path
//! is fuzzed too and one fault does not end that worker's run.
//!
//! Async system calls (issue #38): the main thread has a syscall buffer, and now and then a
//! step is a batch of up to 16 requests (every async-capable label, and any label now and
//! then) pushed at once and run by the kernel in one go, between the sync steps. Witness
//! threads run in the sandbox VSpace (an image VSpace, so they can) on every other hart and
//! keep storing a forged Sv39 leaf entry into the sandbox pages the main thread mapped, so a
//! store through a translation the kernel removed but has not yet flushed everywhere lands in
//! whatever the kernel made of that memory next: a page table then maps a page no cap vouches
//! for, which the checker reports. The checker also reports memory handed out while a
//! shootdown was still deferred (`invariants::memory_handed_out`), race or not.
//!
//! Spinning Waits (issue #45): with 4 harts or more, one hart runs only the spinner
//! (`fuzz_spinner`), a thread whose Wait spins without the lock; now and then a main step is a
//! race that replaces or deletes its address space while a witness signals it from a third
//! hart, and checks that it runs no user code in the space it lost.
use crate::env::{check_invariants, sadd, sget, sset, Env, Fail, TResult, CNODE, PAGE, ROOT_DEPTH};
use crate::t_asys::Raw;
use abi::{asys as a, error as e, label as l, object as o, stat, MessageInfo};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::asys::Request;
use userlib::tcb::UserContext;
use userlib::{cnode, ipc, print, println, syscall, untyped, vspace};

/// The fuzz threads' CSpace: a CNode of 2^F_BITS slots (guard pads it to a word). Slots
/// below POOL are the pool every argument names; F_SELF holds the CNode itself (the retype
/// destination), F_DEBUG the debug cap (only the checker call names it). Slots from 64 up are
/// the spinner's (`fuzz_spinner`; an argument can name 64 and 65, which stay empty).
pub const F_BITS: usize = 7;
const POOL: usize = 48;
pub const F_SELF: usize = 48;
pub const F_SANDBOX: usize = 49;
/// Worker k's fault endpoint (badge k + 1): out of every argument's reach like F_SELF.
const F_FAULT: usize = 50;
const F_DEBUG: usize = 63;
/// The witnesses' CNode: the caps behind the sandbox's image mappings and the witnesses'
/// stacks, so the scoped check sees what vouches for every entry of the sandbox VSpace.
const F_INFRA: usize = 60;
/// Its size (bits).
const INFRA_BITS: usize = 10;
/// Where sandbox mappings go, in the sandbox VSpace (never the root task's).
const SANDBOX_VA: usize = 0x4000_0000;
/// Workers (and witnesses): one each per other hart, at most this many (their fault slots
/// end below F_INFRA).
const MAX_WORKERS: usize = 5;
/// Sv39 leaf flags V|R|W|U|A|D: the witnesses' forged entry.
const FORGED_LEAF: usize = 0x1 | 0x2 | 0x4 | 0x10 | 0x40 | 0x80;

/// Seed and steps per thread; `make fuzz` sets them at build time.
fn seed() -> u64 {
    option_env!("FUZZ_SEED").and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1234)
}
fn count() -> usize {
    option_env!("FUZZ_COUNT").and_then(|s| s.parse().ok()).unwrap_or(1500)
}
/// Main steps between full checks (`FUZZ_FULL_EVERY`); the steps in between get the scoped one.
fn full_every() -> usize {
    option_env!("FUZZ_FULL_EVERY").and_then(|s| s.parse().ok()).filter(|&n| n > 0).unwrap_or(FULL_EVERY)
}
const FULL_EVERY: usize = 64;
/// The scoped check after every main step (`FUZZ_SCOPED=0`: only the full ones, for the RTL,
/// where the spinner's own count is the race's oracle and cycles are dear).
fn scoped_checks() -> bool {
    option_env!("FUZZ_SCOPED") != Some("0")
}

fn rdtime() -> usize {
    let v: usize;
    // SAFETY: reads a counter CSR user mode may read.
    unsafe { core::arch::asm!("rdtime {0}", out(reg) v, options(nomem, nostack)) };
    v
}

/// Shared words: SHARED[0] finished workers, [1] worker steps, [2] main thread's steps done,
/// [3] main thread's verdict (1 ok, 2 invariant broken), [4] violations.
const S_DONE: usize = 0;
const S_WSTEPS: usize = 1;
const S_STEPS: usize = 2;
const S_VERDICT: usize = 3;
const S_VIOL: usize = 4;
/// Shared word: faults the workers took (and were restarted from).
const S_FAULTS: usize = 5;
/// Shared word: faults the workers took on purpose (each must reach the handler).
const S_DELIBERATE: usize = 6;
/// Shared words: witness rounds over the hot pages, witnesses to stop, the forged entry they
/// store, async requests answered, async batches run, witness faults (a hot page unmapped).
const S_WROUNDS: usize = 7;
const S_WSTOP: usize = 8;
const S_PATTERN: usize = 9;
const S_ASYNC: usize = 10;
const S_BATCHES: usize = 11;
const S_WFAULTS: usize = 12;
/// Shared word: sandbox pages published to the witnesses.
const S_HOTS: usize = 13;
/// Pool slots the shaped requests use.
const SHAPED: usize = 12;
/// Sandbox pages mapped before the fuzz starts (in the first shaped slots).
const SEEDED: usize = 4;
/// The pool's Untyped (16 KiB, made from the second Untyped; the seeded pages fill it).
const POOL_UNTYPED: usize = 9;
/// The pool's Untypeds: a copy of the first (slot 0) and that one.
pub const POOL_UNTYPEDS: [usize; 2] = [0, POOL_UNTYPED];
/// Main steps that are an async batch, in percent.
const BATCH_PERCENT: usize = 8;
/// Main steps that are a spinner race, in percent (`FUZZ_SPIN_PERCENT`).
fn spin_percent() -> usize {
    option_env!("FUZZ_SPIN_PERCENT").and_then(|s| s.parse().ok()).unwrap_or(4)
}
/// The log's label for a race step (no kernel label is this large).
const SPIN_RACE_LABEL: usize = 2000;
/// A spinner runs (4 harts or more).
static SPINNER_ON: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
/// The completion vector of the main thread's syscall buffer (it is never woken by it: it
/// polls).
const ASYS_VEC: usize = 61;

/// Sandbox pages the main thread mapped (0: none): the witnesses store into each.
const HOT_LEN: usize = 16;
static HOT: [AtomicUsize; HOT_LEN] = [const { AtomicUsize::new(0) }; HOT_LEN];
static HOT_NEXT: AtomicUsize = AtomicUsize::new(0);

fn publish_hot(va: usize) {
    HOT[HOT_NEXT.fetch_add(1, SeqCst) % HOT_LEN].store(va & !(PAGE - 1), SeqCst);
}

/// The page at `addr` faulted for a witness: it is no longer mapped.
fn drop_hot(addr: usize) {
    for h in &HOT {
        let _ = h.compare_exchange(addr & !(PAGE - 1), 0, SeqCst, SeqCst);
    }
}

/// Worker k's next step: a worker restarted after a fault goes on from the step after the one
/// that faulted (each step's random stream depends only on the seed, k and the step number).
static WORKER_NEXT: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

/// A seeded stream; `worker`: a worker's, whose slot arguments skip the spinner's slots.
struct Rng(u64, bool);

impl Rng {
    /// A pool slot: any for the main thread; for a worker, the spinner's move to the shaped
    /// slots above them.
    fn pool_slot(&mut self) -> usize {
        let s = self.below(POOL);
        if self.1 && crate::fuzz_spinner::SLOTS.contains(&s) {
            s + crate::fuzz_spinner::SLOTS.count()
        } else {
            s
        }
    }
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A slot index an argument may name: a pool slot mostly, else garbage that fails lookup.
fn slot_arg(r: &mut Rng) -> usize {
    if r.chance(92) {
        r.pool_slot()
    } else {
        (1 << 12) + r.next() as usize % (1 << 40)
    }
}

/// An argument word: slot numbers, depths, object sizes, addresses, edge values.
fn word(r: &mut Rng) -> usize {
    match r.below(10) {
        0 => slot_arg(r),
        1 => [0, 1, 2, 3, 4, 6, 12, 16, 64, 65, 255, 256][r.below(12)],
        2 => 64,
        3 => SANDBOX_VA + r.below(64) * 4096,
        4 => SANDBOX_VA + r.below(8) * (1 << 21) + r.below(4096),
        5 => [usize::MAX, usize::MAX - 1, 1 << 63, 1 << 38, (1 << 38) - 4096][r.below(5)],
        6 => r.below(16),
        7 if r.chance(15) => o::UINTR_SENDER_TABLE,
        7 => o::PAGE_TABLE.min(r.below(12)),
        _ => r.next() as usize,
    }
}

/// An extra cap: a pool slot, the root CNode (as a destination or lookup root) or the sandbox
/// VSpace.
fn cap_arg(r: &mut Rng) -> usize {
    match r.below(8) {
        0 | 1 => F_SELF,
        2 => F_SANDBOX,
        _ => slot_arg(r),
    }
}

#[derive(Clone, Copy, Default)]
struct Op {
    label: usize,
    svc: usize,
    args: [usize; 6],
    caps: [usize; 3],
    ncaps: usize,
    /// The invocation succeeded.
    ok: bool,
}

impl Op {
    /// A page mapped into the sandbox: one for the witnesses.
    fn mapped_sandbox_page(&self) -> Option<usize> {
        (self.ok && self.label == l::RISCV_PAGE_MAP && self.ncaps > 0 && self.caps[0] == F_SANDBOX)
            .then_some(self.args[0])
    }
}

/// One random step; returns what it did (for the failure report).
/// `before` sees the step just before it runs (the main thread logs it there, so a step that
/// never returns is in the log).
fn step(r: &mut Rng, may_receive: bool, before: &mut dyn FnMut(&Op)) -> Op {
    // Always a slot that resolves: a cptr that does not would be a cap fault, and a fuzz
    // thread has no fault handler.
    let svc = r.pool_slot();
    let mut op = Op { svc, ..Op::default() };
    let kind = r.below(100);
    if kind < 6 {
        // IPC on whatever the slot holds, never blocking: a send with caps, or a receive
        // with a receive slot in the pool.
        op.label = 1000 + r.below(3);
        before(&op);
        let kind = syscall::debug_cap_identify(svc);
        match op.label {
            // A receive on a cap without Read is a cap fault that stops the thread: only the
            // workers take that risk.
            1000 if may_receive && matches!(kind, Some(o::ENDPOINT) | Some(o::NOTIFICATION)) => {
                ipc::set_receive_path(F_SELF, slot_arg(r), 64);
                syscall::nb_recv(svc);
            }
            1000 => {}
            // Workers fault on purpose now and then (their handler restarts them): a blocking
            // receive on a cptr that does not resolve (a cap fault), or an illegal instruction.
            1002 if may_receive => {
                sadd(S_DELIBERATE, 1);
                if r.chance(50) {
                    syscall::recv((1 << 12) + r.next() as usize % (1 << 40));
                } else {
                    // SAFETY: traps at once; the fault handler moves the thread on.
                    unsafe { core::arch::asm!("unimp") };
                }
            }
            1001 => {
                let n = r.below(3);
                ipc::with_buffer(|b| {
                    for i in 0..n {
                        b.caps_or_badges[i] = slot_arg(r);
                    }
                });
                syscall::nb_send(svc, MessageInfo::new(r.below(4), 0, n, r.below(6)), [word(r), word(r), 0, 0]);
            }
            _ => {}
        }
        return op;
    }
    // Every kernel invocation label (seL4's, the RISC-V ones, U-notification registration and
    // sender-table binding), now and then any label at all.
    op.label = if r.chance(3) {
        r.below(64)
    } else {
        match r.below(l::IRQ_SET_UINTR + 2) {
            x if x < l::IRQ_SET_UINTR => 1 + x,
            x => l::SENDER_TABLE_BIND + x - l::IRQ_SET_UINTR,
        }
    };
    for a in op.args.iter_mut() {
        *a = word(r);
    }
    match op.label {
        // Register values that can never be a real address of ours.
        l::TCB_WRITE_REGISTERS | l::TCB_COPY_REGISTERS => {
            op.args[0] &= !1; // never resume
            for a in op.args[3..].iter_mut() {
                *a |= 1 << 63;
            }
        }
        l::TCB_SET_AFFINITY => op.args[0] %= 8,
        _ => {}
    }
    op.ncaps = r.below(4);
    for i in 0..op.ncaps {
        op.caps[i] = cap_arg(r);
    }
    let nargs = r.below(7);
    before(&op);
    // An endpoint invoked with Call would block: send to it instead.
    if syscall::debug_cap_identify(svc) == Some(o::ENDPOINT) {
        syscall::nb_send(
            svc,
            MessageInfo::new(op.label, 0, 0, nargs.min(4)),
            [op.args[0], op.args[1], op.args[2], op.args[3]],
        );
    } else {
        op.ok = userlib::invoke::invoke(svc, op.label, &op.args[..nargs], &op.caps[..op.ncaps]).is_ok();
    }
    op
}

/// A random async request: an async-capable invocation of a pool slot (any label now and
/// then), arguments as `step` makes them.
fn async_request(r: &mut Rng) -> (Op, usize) {
    let mut op = Op { svc: r.below(POOL), ..Op::default() };
    op.label = if r.chance(3) { r.below(64) } else { a::ASYNC_LABELS[r.below(a::ASYNC_LABELS.len())] };
    for w in op.args.iter_mut() {
        *w = word(r);
    }
    op.ncaps = r.below(4);
    for i in 0..op.ncaps {
        op.caps[i] = cap_arg(r);
    }
    (op, r.below(7))
}

/// A request shaped to succeed often, so that one batch maps, unmaps, deletes and retypes the
/// same memory (the class of issue #38): sandbox maps of pool frames and tables, unmaps,
/// deletes and revokes through the fuzz CNode, retypes of the pool's Untypeds into pool slots.
fn shaped_request(r: &mut Rng) -> (Op, usize) {
    // The last SHAPED slots of the pool: few enough that what one request makes, the next
    // names.
    let slot = |r: &mut Rng| POOL - SHAPED + r.below(SHAPED);
    let mut op = Op { svc: slot(r), ..Op::default() };
    // The first two 2 MiB regions of the sandbox (the witnesses' pages).
    let region = SANDBOX_VA + r.below(2) * (1 << 21);
    let (label, args, caps): (usize, [usize; 6], &[usize]) = match r.below(7) {
        0 | 1 => (l::RISCV_PAGE_MAP, [region + r.below(16) * PAGE, 3, 0, 0, 0, 0], &[F_SANDBOX]),
        2 => (l::RISCV_PAGE_TABLE_MAP, [region, 0, 0, 0, 0, 0], &[F_SANDBOX]),
        3 => (if r.chance(70) { l::RISCV_PAGE_UNMAP } else { l::RISCV_PAGE_TABLE_UNMAP }, [0; 6], &[]),
        4 => {
            let target = slot(r);
            op.svc = F_SELF;
            let label = if r.chance(50) { l::CNODE_DELETE } else { l::CNODE_REVOKE };
            // A revoke of one of the pool's Untypeds empties it for reuse.
            (label, [if r.chance(25) { [0, POOL_UNTYPED][r.below(2)] } else { target }, 64, 0, 0, 0, 0], &[])
        }
        _ => {
            // The pool's Untypeds (u1's copy, the one the seeded pages came from) or a shaped slot.
            op.svc = [0, POOL_UNTYPED, op.svc][r.below(3)];
            let ty = [o::PAGE_4K, o::PAGE_4K, o::PAGE_TABLE, o::PAGE_TABLE, o::CNODE, o::ENDPOINT, o::UNTYPED, o::TCB]
                [r.below(8)];
            let bits = match ty {
                o::CNODE => 2,
                o::UNTYPED => 12,
                _ => 0,
            };
            (l::UNTYPED_RETYPE, [ty, bits, 0, 0, slot(r), 1 + r.below(2)], &[F_SELF])
        }
    };
    op.label = label;
    op.args = args;
    op.ncaps = caps.len();
    op.caps[..caps.len()].copy_from_slice(caps);
    let nargs = match label {
        l::RISCV_PAGE_MAP => 3,
        l::RISCV_PAGE_TABLE_MAP | l::CNODE_DELETE | l::CNODE_REVOKE => 2,
        l::UNTYPED_RETYPE => 6,
        _ => 0,
    };
    (op, nargs)
}

/// A batch step of the main thread: up to 16 requests pushed at once (one part of a batch in
/// the kernel), random or (every other batch) shaped, one wake, every reply taken. Err: a
/// reply did not come, or the buffer was closed (nothing the fuzz can name reaches it).
fn async_batch(r: &mut Rng, ring: &mut Raw, before: &mut dyn FnMut(&Op)) -> Result<(), &'static str> {
    let n = 1 + r.below(a::BATCH);
    let shaped = r.chance(50);
    let mut ops = [Op::default(); a::BATCH];
    for (i, op) in ops[..n].iter_mut().enumerate() {
        let (q, nargs) = if shaped { shaped_request(r) } else { async_request(r) };
        *op = q;
        before(op);
        let req =
            Request::invocation(q.svc, q.label, &q.args[..nargs], &q.caps[..q.ncaps]).ok_or("request too long")?;
        for it in &req.to_items(i as u64)[..req.items()] {
            let _ = ring.req.push(it).map_err(|_| "request ring full")?;
        }
    }
    let mut got = 0;
    for spin in 0..200_000 {
        while let Some(p) = ring.rep.pop().map_err(|_| "reply ring broken")? {
            let op = ops.get_mut(p.item.id as usize).ok_or("reply with an unknown id")?;
            op.ok = p.item.label == 0;
            if let Some(va) = op.mapped_sandbox_page() {
                publish_hot(va);
                sadd(S_HOTS, 1);
            }
            got += 1;
        }
        if got == n {
            sadd(S_ASYNC, n);
            sadd(S_BATCHES, 1);
            return Ok(());
        }
        if spin % 16 == 0 && userlib::asys::wake() == Err(e::ILLEGAL_OPERATION) {
            return Err("the syscall buffer was closed");
        }
        syscall::yield_now();
    }
    Err("async replies missing")
}

/// The fuzz CSpace: Untypeds to retype from (a copy of one, an Untyped made from the other;
/// the originals in the root's CSpace are the cleanup handles), a sandbox VSpace with an ASID
/// and our image mapped,
/// one object of each kind (a sender table too), the CNode
/// itself and the debug cap. Returns (fuzz CNode, Untyped 1, Untyped 2, sandbox VSpace).
fn setup(env: &mut Env, vs: usize) -> Result<(usize, usize, usize), Fail> {
    let f = env.alloc(o::CNODE, F_BITS)?.cptr;
    let u1 = env.alloc(o::UNTYPED, 20)?.cptr;
    let u2 = env.alloc(o::UNTYPED, 17)?.cptr;
    let all = userlib::invoke::rights::ALL;
    ok!(cnode::copy(f, 0, F_BITS, CNODE, u1, ROOT_DEPTH, all));
    let kinds = [
        o::TCB,
        o::ENDPOINT,
        o::NOTIFICATION,
        o::PAGE_4K,
        o::PAGE_TABLE,
        o::PAGE_4K,
        o::CNODE,
        o::UNTYPED,
        o::UINTR_SENDER_TABLE,
    ];
    // The pool's Untyped is made in our CSpace first: the seeded pages below come from it.
    let seed_ut = env.slot()?;
    for (i, &k) in kinds.iter().enumerate() {
        let bits = match k {
            o::CNODE => 3,
            o::UNTYPED => 14,
            _ => 0,
        };
        if k == o::UNTYPED {
            ok!(untyped::retype(u2, k, bits, CNODE, 0, 0, seed_ut, 1));
        } else {
            ok!(untyped::retype(u2, k, bits, CNODE, f, ROOT_DEPTH, 2 + i, 1));
        }
    }
    // The pool's thread has the pool's sender table bound (so sender registrations for it can
    // succeed): both pass through the root's CSpace for the call.
    let (t, tb) = (env.slot()?, env.slot()?);
    ok!(cnode::move_(CNODE, t, ROOT_DEPTH, f, 2, F_BITS));
    ok!(cnode::move_(CNODE, tb, ROOT_DEPTH, f, 2 + kinds.len() - 1, F_BITS));
    ok!(userlib::uintr::sender_table_bind(tb, t));
    ok!(cnode::move_(f, 2, F_BITS, CNODE, t, ROOT_DEPTH));
    ok!(cnode::move_(f, 2 + kinds.len() - 1, F_BITS, CNODE, tb, ROOT_DEPTH));
    // The fuzz threads address their CSpace with 64-bit cptrs: a guard pads the radix.
    ok!(cnode::mint(f, F_SELF, F_BITS, CNODE, f, ROOT_DEPTH, all, 64 - F_BITS));
    ok!(cnode::copy(f, F_SANDBOX, F_BITS, CNODE, vs, ROOT_DEPTH, all));
    ok!(cnode::move_(f, F_DEBUG, F_BITS, CNODE, abi::init_cap::DEBUG, ROOT_DEPTH));
    // The sandbox's first two 2 MiB regions get their tables (pool slots after the kinds) and
    // SEEDED pages mapped (in the shaped slots, made from the pool's Untyped, which they fill),
    // given to the witnesses from the start: the fuzz unmaps, deletes, revokes that Untyped
    // and retypes the same memory from there.
    let tables =
        [(SANDBOX_VA, 2 + kinds.len()), (SANDBOX_VA, 3 + kinds.len()), (SANDBOX_VA + (1 << 21), 4 + kinds.len())];
    let frames = (0..SEEDED).map(|k| (SANDBOX_VA + k * PAGE, POOL - SHAPED + k));
    for (i, (va, dest)) in tables.into_iter().chain(frames).enumerate() {
        let s = env.slot()?;
        let table = i < tables.len();
        let (ut, ty) = if table { (u2, o::PAGE_TABLE) } else { (seed_ut, o::PAGE_4K) };
        ok!(untyped::retype(ut, ty, 0, CNODE, 0, 0, s, 1));
        if table {
            ok!(vspace::page_table_map(s, vs, va, 0));
        } else {
            ok!(vspace::page_map(s, vs, va, userlib::invoke::rights::READ_WRITE, 0));
            publish_hot(va);
        }
        ok!(cnode::move_(f, dest, F_BITS, CNODE, s, ROOT_DEPTH));
    }
    ok!(cnode::move_(f, POOL_UNTYPED, F_BITS, CNODE, seed_ut, ROOT_DEPTH));
    Ok((f, u1, u2))
}

/// Time (timebase ticks) the main thread spent in full and in scoped checks (the calls, lock
/// waits included), their counts, and the kernel's own time in them (full, scoped).
static CHECK_TICKS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

/// The last main steps: as many as lie between two full checks, so a break only the full
/// check sees is still in the report.
const LOG_LEN: usize = FULL_EVERY;
static LOG: [[AtomicUsize; 11]; LOG_LEN] = [const { [const { AtomicUsize::new(0) }; 11] }; LOG_LEN];

fn log_op(i: usize, op: &Op) {
    let e = &LOG[i % LOG_LEN];
    e[0].store(op.label, SeqCst);
    e[1].store(op.svc, SeqCst);
    for k in 0..6 {
        e[2 + k].store(op.args[k], SeqCst);
    }
    e[8].store(op.caps[0], SeqCst);
    e[9].store(op.caps[1], SeqCst);
    e[10].store(op.caps[2] | op.ncaps << 60, SeqCst);
}

fn print_log(upto: usize) {
    for i in upto.saturating_sub(LOG_LEN.min(full_every()))..upto {
        let e = &LOG[i % LOG_LEN];
        let v = |k: usize| e[k].load(SeqCst);
        print!("[ktest] fuzz   step {}: label {} on slot {} args", i, v(0), v(1));
        for k in 2..8 {
            print!(" {:#x}", v(k));
        }
        println!(" caps [{}, {}, {}] ({} used)", v(8), v(9), v(10) & ((1 << 60) - 1), v(10) >> 60);
    }
}

/// Where the main thread's syscall buffer is (request ring; the reply ring a page above), 0
/// for none: registered by the root before the thread starts.
static MAIN_RING: AtomicUsize = AtomicUsize::new(0);

/// The main fuzz thread: a step (sync, or an async batch), then the kernel's checker; stops at
/// the first violation.
extern "C" fn main_thread(_: usize) -> ! {
    let mut r = Rng(seed(), false);
    let va = MAIN_RING.load(SeqCst);
    let mut ring = (va != 0).then(|| {
        crate::t_asys::raw(&userlib::asys::SysBuf {
            req_frame: 0,
            req_vaddr: va,
            rep_frame: 0,
            rep_vaddr: va + PAGE,
            capacity: crate::t_asys::CAP,
        })
    });
    for i in 0..count() {
        let mut before = |op: &Op| {
            log_op(i, op);
            sset(S_STEPS, i);
        };
        let spin_race = SPINNER_ON.load(SeqCst) && r.chance(spin_percent());
        match ring.as_mut() {
            _ if spin_race => {
                before(&Op { label: SPIN_RACE_LABEL, ..Op::default() });
                if let Err((how, at_move, after, ran_after)) = crate::fuzz_spinner::race(&mut |n| r.below(n)) {
                    println!("");
                    println!(
                        "[ktest] fuzz: seed {} main step {}: the spinner ran user code in the VSpace it had lost ({:?}): its count went from {} at the move to {}, {} Wait returns there after the move had returned",
                        seed(),
                        i,
                        how,
                        at_move,
                        after,
                        ran_after
                    );
                    sset(S_VERDICT, 5);
                    park_here()
                }
            }
            Some(ring) if r.chance(BATCH_PERCENT) => {
                if let Err(why) = async_batch(&mut r, ring, &mut before) {
                    println!("");
                    println!("[ktest] fuzz: seed {} main step {}: {}", seed(), i, why);
                    sset(S_VERDICT, 4);
                    park_here()
                }
            }
            _ => {
                if let Some(va) = step(&mut r, false, &mut before).mapped_sandbox_page() {
                    publish_hot(va);
                    sadd(S_HOTS, 1);
                }
            }
        }
        sset(S_STEPS, i + 1);
        // Long runs (`make fuzz COUNT=...`) show how far they got, even if stopped early.
        if (i + 1) % 10_000 == 0 {
            println!("[ktest] fuzz: {} main steps + {} worker steps so far (seed {})", i + 1, sget(S_WSTEPS), seed());
        }
        let full = (i + 1) % full_every() == 0 || i + 1 == count();
        if !full && !scoped_checks() {
            continue;
        }
        let c0 = rdtime();
        let check = syscall::debug_check_invariants_timed(F_DEBUG, (!full).then_some(F_SELF));
        let k = if full { 0 } else { 2 };
        CHECK_TICKS[k].fetch_add(rdtime().wrapping_sub(c0), SeqCst);
        CHECK_TICKS[k + 1].fetch_add(1, SeqCst);
        CHECK_TICKS[4 + k / 2].fetch_add(check.map_or(0, |c| c.3), SeqCst);
        match check {
            Some((0, ..)) => {}
            Some((n, ..)) => {
                // Report from here at once: a broken kernel may not let the root run again.
                println!("");
                println!("[ktest] fuzz: seed {} broke {} kernel invariants at main step {} ({} check; make fuzz SEED={} FULL_EVERY=1 checks everything after every step); its last steps:", seed(), n, i, if full { "full" } else { "scoped" }, seed());
                print_log(i + 1);
                sset(S_VIOL, n);
                sset(S_VERDICT, 2);
                park_here()
            }
            None => {
                sset(S_VERDICT, 3);
                park_here()
            }
        }
    }
    sset(S_VERDICT, 1);
    park_here()
}

/// Witness k: stores the forged entry into a few words of every hot sandbox page, round after
/// round, in user mode (no kernel entry) until told to stop. A hot page unmapped faults it:
/// the root drops the page and restarts it.
extern "C" fn witness(k: usize) -> ! {
    let pattern = sget(S_PATTERN);
    let mut served = crate::fuzz_spinner::pending_request();
    while sget(S_WSTOP) == 0 {
        // The first witness also signals the spinner when a race asks.
        if k == 0 && SPINNER_ON.load(SeqCst) {
            crate::fuzz_spinner::serve_signal_request(&mut served);
        }
        for h in &HOT {
            let va = h.load(SeqCst);
            if va != 0 {
                for w in (0..PAGE).step_by(PAGE / 8) {
                    // SAFETY: a sandbox page of our VSpace; unmapped, the store faults.
                    unsafe { core::ptr::write_volatile((va + w) as *mut usize, pattern) };
                }
            }
        }
        sadd(S_WROUNDS, 1);
    }
    park_here()
}

extern "C" fn worker(k: usize) -> ! {
    loop {
        let i = WORKER_NEXT[k].fetch_add(1, SeqCst);
        if i >= count() {
            break;
        }
        let mut r =
            Rng((seed() ^ 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(k as u64 + 1)).wrapping_add(i as u64) | 1, true);
        step(&mut r, true, &mut |_| {});
        sadd(S_WSTEPS, 1);
    }
    sadd(S_DONE, 1);
    park_here()
}

/// Workers' and witnesses' faults waiting on the fault endpoint: count each and restart its
/// thread at its entry (fresh stack, same k): a worker picks up its next step, a witness
/// forgets the page that faulted. Returns how many it served.
fn serve_faults(ep: usize, workers: &[crate::env::Thread], witnesses: &[crate::env::Thread]) -> usize {
    let mut n = 0;
    loop {
        let (badge, info, mrs) = syscall::nb_recv(ep);
        if badge == 1 + workers.len() + witnesses.len() && SPINNER_ON.load(SeqCst) {
            // The spinner, moved off its space: it waits there until the next race homes it.
            crate::fuzz_spinner::FAULTS.fetch_add(1, SeqCst);
            n += 1;
            continue;
        }
        if badge == 0 || badge > workers.len() + witnesses.len() {
            return n;
        }
        if badge > workers.len() {
            let w = &witnesses[badge - 1 - workers.len()];
            sadd(S_WFAULTS, 1);
            if info.label == abi::fault::VM_FAULT {
                drop_hot(mrs[1]);
            }
            if restart(w, witness as *const () as usize, badge - 1 - workers.len()).is_ok() {
                syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
            }
            n += 1;
            continue;
        }
        let (k, w) = (badge - 1, &workers[badge - 1]);
        sadd(S_FAULTS, 1);
        if n == 0 && sget(S_FAULTS) <= 3 {
            println!(
                "[ktest] fuzz: worker {} took fault {} at step {}: restarted",
                k,
                info.label,
                WORKER_NEXT[k].load(SeqCst).saturating_sub(1)
            );
        }
        // Length 0: the reply writes no registers, it only resumes the worker where it now is.
        if restart(w, worker as *const () as usize, k).is_ok() {
            syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
        }
        n += 1;
    }
}

/// Point thread `w` at `entry(arg)` with a fresh stack.
fn restart(w: &crate::env::Thread, entry: usize, arg: usize) -> userlib::Result<()> {
    userlib::tcb::read_registers(w.tcb, false, 0, abi::regs::COUNT).and_then(|mut ctx| {
        ctx.regs[UserContext::PC] = entry;
        ctx.regs[UserContext::SP] = w.stack_top;
        ctx.set_a(0, arg);
        userlib::tcb::write_registers(w.tcb, false, 0, abi::regs::COUNT, &ctx)
    })
}

/// Fuzz threads cannot name the park notification (not in their CSpace): they yield forever
/// until the root suspends them.
fn park_here() -> ! {
    loop {
        syscall::yield_now();
    }
}

/// Move the caps in root slots `from..env.mark()` (but those in `keep`) into `infra`.
fn move_caps(env: &mut Env, infra: usize, used: &mut usize, from: usize, keep: &[usize]) -> TResult {
    for s in (from..env.mark()).filter(|s| !keep.contains(s)) {
        if crate::env::identify(s).is_some() {
            ensure!(*used < 1 << INFRA_BITS, "the witnesses' CNode is full");
            ok!(cnode::move_(infra, *used, INFRA_BITS, CNODE, s, ROOT_DEPTH));
            *used += 1;
        }
    }
    Ok(())
}

pub fn fuzz(env: &mut Env) -> TResult {
    // The fault endpoint is the suite's, like the threads' TCBs (kept, not counted as leaked).
    let fault_ep = env.alloc_cap(o::ENDPOINT)?;
    // The sandbox VSpace, where the witnesses run (our image mapped there): the suite's, kept.
    let infra = env.alloc(o::CNODE, INFRA_BITS)?.cptr;
    let mut infra_used = 0;
    let mark = env.mark();
    let vs = env.image_vspace()?;
    move_caps(env, infra, &mut infra_used, mark, &[vs])?;
    // The witnesses' forged entry: read-write user access to a page of ours.
    let target = env.alloc(o::PAGE_4K, 0)?;
    // The spinner's two data frames, mapped here (the suite's, like everything above).
    let harts = userlib::bootinfo::harts(env.bi);
    let spinner_hart = (harts >= 4).then(|| (env.bi.node_id + harts - 1) % harts);
    SPINNER_ON.store(spinner_hart.is_some(), SeqCst);
    crate::fuzz_spinner::reset();
    let mut spin_data = [0; 2];
    for (k, d) in spin_data.iter_mut().enumerate() {
        let va = env.va(1);
        *d = env.new_page_at(crate::env::VSPACE, va)?.cptr;
        crate::fuzz_spinner::DATA_VA[k].store(va, SeqCst);
    }
    let bytes0 = syscall::debug_stat(stat::OBJECT_BYTES);
    for h in &HOT {
        h.store(0, SeqCst);
    }
    let (f, u1, u2) = setup(env, vs)?;
    for i in 0..=S_HOTS {
        sset(i, 0);
    }
    sset(S_PATTERN, (target.paddr >> 12) << 10 | FORGED_LEAF);
    for w in &WORKER_NEXT {
        w.store(0, SeqCst);
    }
    for c in &CHECK_TICKS {
        c.store(0, SeqCst);
    }
    let cfg = |hart, fault_ep| crate::env::ThreadCfg {
        prio: 100,
        cspace: f,
        cspace_data: 64 - F_BITS,
        affinity: Some(hart),
        fault_ep,
        ..Default::default()
    };
    // The threads' TCBs, stacks and IPC buffers are the suite's (kept like every helper's).
    let before_spawn = syscall::debug_stat(stat::OBJECT_BYTES);
    let mut workers = 0;
    let mut tcbs = [0; 16];
    let mut ntcbs = 0;
    const NO_THREAD: crate::env::Thread = crate::env::Thread { tcb: 0, ipc_va: 0, stack_top: 0 };
    let mut wthreads = [NO_THREAD; MAX_WORKERS];
    let all = userlib::invoke::rights::ALL;
    let worker_harts = || (0..harts).filter(|&h| h != env.bi.node_id && Some(h) != spinner_hart).take(MAX_WORKERS);
    for h in worker_harts() {
        ok!(cnode::mint(f, F_FAULT + workers, F_BITS, CNODE, fault_ep, ROOT_DEPTH, all, workers + 1));
        wthreads[workers] = env.spawn_cfg(worker as *const () as usize, workers, cfg(h, F_FAULT + workers))?;
        tcbs[ntcbs] = wthreads[workers].tcb;
        ntcbs += 1;
        workers += 1;
    }
    let wthreads = &wthreads[..workers];
    // A witness beside each worker, in the sandbox VSpace (badges after the workers').
    let mut witnesses = [NO_THREAD; MAX_WORKERS];
    let mark = env.mark();
    for (j, h) in worker_harts().enumerate() {
        let slot = F_FAULT + workers + j;
        ok!(cnode::mint(f, slot, F_BITS, CNODE, fault_ep, ROOT_DEPTH, all, workers + j + 1));
        witnesses[j] =
            env.spawn_cfg(witness as *const () as usize, j, crate::env::ThreadCfg { vspace: vs, ..cfg(h, slot) })?;
        tcbs[ntcbs] = witnesses[j].tcb;
        ntcbs += 1;
    }
    let witnesses = &witnesses[..workers];
    // The spinner (badge after the witnesses'), not started: each race gives it a space of its
    // own. Made in the sandbox like the witnesses (its stack and IPC buffer's caps go to their
    // CNode), so the scoped check sees what vouches for its pages.
    let spinner = match spinner_hart {
        Some(h) => {
            let slot = crate::fuzz_spinner::F_SPIN_FAULT;
            ok!(cnode::mint(f, slot, F_BITS, CNODE, fault_ep, ROOT_DEPTH, all, 2 * workers + 1));
            let cfg = crate::env::ThreadCfg { vspace: vs, start: false, ..cfg(h, slot) };
            let t = env.spawn_cfg(crate::fuzz_spinner::entry(), 0, cfg)?;
            tcbs[ntcbs] = t.tcb;
            ntcbs += 1;
            Some(t.tcb)
        }
        None => None,
    };
    let keep: [usize; MAX_WORKERS + 1] = core::array::from_fn(|j| {
        witnesses.get(j).map_or(if j == workers { spinner.unwrap_or(0) } else { 0 }, |w| w.tcb)
    });
    move_caps(env, infra, &mut infra_used, mark, &keep)?;
    if let Some(t) = spinner {
        use crate::fuzz_spinner as sp;
        ok!(cnode::copy(f, sp::F_SPIN_TCB, F_BITS, CNODE, t, ROOT_DEPTH, all));
        let code = env.image_frame(sp::entry() & !(PAGE - 1))?;
        ok!(cnode::move_(f, sp::F_SPIN_CODE, F_BITS, CNODE, code, ROOT_DEPTH));
        ok!(cnode::copy(f, sp::F_ASIDS, F_BITS, CNODE, abi::init_cap::ASID_POOL, ROOT_DEPTH, all));
        for (k, &d) in spin_data.iter().enumerate() {
            ok!(cnode::copy(f, sp::F_SPIN_DATA[k], F_BITS, CNODE, d, ROOT_DEPTH, all));
        }
    }
    ok!(cnode::copy(f, F_INFRA, F_BITS, CNODE, infra, ROOT_DEPTH, all));
    // The main thread, with a syscall buffer for its async batches.
    let main = env.spawn_cfg(
        main_thread as *const () as usize,
        0,
        crate::env::ThreadCfg { start: false, ..cfg(env.bi.node_id, 0) },
    )?;
    let ntfn = env.alloc_cap(o::NOTIFICATION)?;
    ok!(userlib::tcb::bind_notification(main.tcb, ntfn));
    ok!(userlib::uintr::register_receiver(ntfn));
    let buf = crate::t_asys::buffer(env)?;
    ok!(buf.register(main.tcb, ASYS_VEC));
    MAIN_RING.store(buf.req_vaddr, SeqCst);
    let t0 = rdtime();
    ok!(userlib::tcb::resume(main.tcb));
    tcbs[ntcbs] = main.tcb;
    ntcbs += 1;
    let threads_bytes = syscall::debug_stat(stat::OBJECT_BYTES) - before_spawn;
    // The root shares its hart with the main fuzz thread at the same priority while it
    // watches: its yields let the fuzz run, the fuzz thread's slice ends let the root look.
    ok!(userlib::tcb::set_priority(abi::init_cap::TCB, abi::init_cap::TCB, 100));
    let mut last = 0;
    let mut stalls = 0;
    while sget(S_VERDICT) == 0 && stalls < 20 {
        for _ in 0..200 {
            if sget(S_VERDICT) != 0 {
                break;
            }
            serve_faults(fault_ep, wthreads, witnesses);
            syscall::yield_now();
        }
        let now = sget(S_STEPS);
        stalls = if now == last { stalls + 1 } else { 0 };
        last = now;
    }
    // Workers: wait for the rest of their steps (their faults still served) while they make
    // progress; give up once none has finished a step or faulted for 30 s of machine time. A
    // fixed bound on the whole wait failed on loaded hosts (QEMU's harts then get host time in
    // uneven slices), although every worker was still moving.
    let idle_bound = 30 * env.bi.timebase_hz;
    let progress = || sget(S_WSTEPS) + sget(S_FAULTS) + sget(S_DONE);
    let (mut seen, mut since) = (progress(), rdtime());
    while sget(S_DONE) < workers && rdtime().wrapping_sub(since) < idle_bound {
        serve_faults(fault_ep, wthreads, witnesses);
        syscall::yield_now();
        if progress() != seen {
            (seen, since) = (progress(), rdtime());
        }
    }
    if sget(S_DONE) < workers {
        // Where the unfinished workers are, for the failure below.
        for (k, w) in WORKER_NEXT[..workers].iter().enumerate() {
            print!("[worker {} at step {}] ", k, w.load(SeqCst));
        }
        syscall::debug_dump_scheduler(abi::init_cap::DEBUG);
    }
    let ticks = rdtime().wrapping_sub(t0).max(1);
    ok!(userlib::tcb::set_priority(abi::init_cap::TCB, abi::init_cap::TCB, 255));
    sset(S_WSTOP, 1);
    env.stop_helpers();
    ok!(userlib::asys::unregister(main.tcb));
    MAIN_RING.store(0, SeqCst);
    // The stopped threads let go of the fuzz CSpace.
    for &t in &tcbs[..ntcbs] {
        ok!(userlib::tcb::set_space(t, 0, CNODE, 0, crate::env::VSPACE, 0));
    }
    let (verdict, steps, wsteps) = (sget(S_VERDICT), sget(S_STEPS), sget(S_WSTEPS));
    if verdict != 1 {
        // The debug cap goes back first: the suite's end (its check, DebugHalt) needs it.
        let _ = cnode::move_(CNODE, abi::init_cap::DEBUG, ROOT_DEPTH, f, F_DEBUG, F_BITS);
        println!("");
        println!(
            "[ktest] fuzz: seed {} failed at main step {} (verdict {}, {} violations; {} worker steps); its last steps:",
            seed(),
            steps,
            verdict,
            sget(S_VIOL),
            wsteps
        );
        print_log(steps);
        ensure!(
            false,
            "seed {}: {}",
            seed(),
            match verdict {
                0 => "the main fuzz thread stopped",
                4 => "an async batch went wrong (above)",
                5 => "the spinner ran user code in an address space it had lost (above)",
                _ => "kernel invariants broken (see the kernel log)",
            }
        );
    }
    // The debug cap goes back; everything the fuzz made came from u1: revoking it and
    // deleting the fuzz CNode must give every byte back.
    ok!(cnode::move_(CNODE, abi::init_cap::DEBUG, ROOT_DEPTH, f, F_DEBUG, F_BITS));
    ok!(cnode::revoke(CNODE, u1, ROOT_DEPTH));
    ok!(cnode::revoke(CNODE, u2, ROOT_DEPTH));
    // The fuzz CNode holds caps to itself: empty it first, or its last outside cap would not
    // be its last cap (the kernel has no zombie caps for such cycles).
    for i in 0..1 << F_BITS {
        ok!(cnode::delete(f, i, F_BITS));
    }
    ok!(cnode::delete(CNODE, f, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, u1, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, u2, ROOT_DEPTH));
    check_invariants()?;
    let leaked = syscall::debug_stat(stat::OBJECT_BYTES) as isize - (bytes0 + threads_bytes) as isize;
    let per_s = (steps + wsteps) as u64 * env.bi.timebase_hz as u64 / ticks as u64;
    let us = |t: usize, k: usize| {
        let n = CHECK_TICKS[k + 1].load(SeqCst).max(1) as u64;
        CHECK_TICKS[t].load(SeqCst) as u64 * 1_000_000 / env.bi.timebase_hz as u64 / n
    };
    let check_share = (CHECK_TICKS[0].load(SeqCst) + CHECK_TICKS[2].load(SeqCst)) as u64 * 100 / ticks as u64;
    print!(
        "(checks: {} full at {} us per call ({} us in the checker), {} scoped at {} us ({} us), {}% of the run) ",
        CHECK_TICKS[1].load(SeqCst),
        us(0, 0),
        us(4, 0),
        CHECK_TICKS[3].load(SeqCst),
        us(2, 2),
        us(5, 2),
        check_share
    );
    print!(
        "(seed {}, {} main steps + {} worker steps on {} harts, {} of {} workers ran to the end, {} worker faults restarted ({} on purpose); {} invocations/s; full check every {} main steps, scoped between) ",
        seed(),
        steps,
        wsteps,
        workers + 1 + SPINNER_ON.load(SeqCst) as usize,
        sget(S_DONE),
        workers,
        sget(S_FAULTS),
        sget(S_DELIBERATE),
        per_s,
        full_every()
    );
    print!(
        "({} async requests in {} batches; {} sandbox pages given to the witnesses besides the {} seeded, {} witness rounds, {} witness faults) ",
        sget(S_ASYNC),
        sget(S_BATCHES),
        sget(S_HOTS),
        SEEDED,
        sget(S_WROUNDS),
        sget(S_WFAULTS)
    );
    if SPINNER_ON.load(SeqCst) {
        use crate::fuzz_spinner as sp;
        print!(
            "(spinner: {} races, {} moved it off its space and were checked, {} homes, {} homeless, {} faults) ",
            sp::RACES.load(SeqCst),
            sp::MOVED.load(SeqCst),
            sp::HOMES.load(SeqCst),
            sp::HOMELESS.load(SeqCst),
            sp::FAULTS.load(SeqCst)
        );
        // A long enough run that never checked a race has a broken harness, not a clean kernel.
        ensure!(
            steps * spin_percent() < 2_000 || sp::MOVED.load(SeqCst) > 0,
            "{} main steps and no race moved the spinner off its space",
            steps
        );
    }
    ensure!(
        sget(S_FAULTS) >= sget(S_DELIBERATE) && sget(S_DONE) == workers,
        "workers: {} faults served for {} taken on purpose, {} of {} workers finished",
        sget(S_FAULTS),
        sget(S_DELIBERATE),
        sget(S_DONE),
        workers
    );
    ensure!(leaked == 0, "{} object bytes not returned after deleting everything the fuzzer made", leaked);
    Ok(())
}
