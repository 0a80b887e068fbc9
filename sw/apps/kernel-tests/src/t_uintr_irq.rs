//! User-level device interrupts (IRQSetUIntr) with a real device: the console UART's
//! "transmitter empty" interrupt (16550 IER bit 1), which a driver raises at will by enabling
//! it and quiets by disabling it. On our SoC the PLIC's U context routes it straight to the
//! handler (UEIP, no kernel entry); on QEMU the kernel forwards it as a user software
//! interrupt. The same test checks whichever route the kernel reports, a blocking Wait woken by
//! the device, a route bound while its receiver is already parked in Wait, the affinity lock
//! of a direct route, and measures the delivery against seL4's
//! IRQ-to-notification path in the same run.
use crate::env::{rdcycle, Env, Fail, TResult, BENCH, CNODE, PAGE, ROOT_DEPTH, ROOT_TCB, VSPACE};
use crate::t_uintr::{budget, entries, need_mode, root_receiver, spawn_receiver, with_cleanup, Cleanup};
use abi::{error as e, object as o, uintr as u};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::invoke::rights;
use userlib::uintr::{self, vector_bit, Handler, IrqRoute, PlicContext};
use userlib::{bootinfo, cnode, irq, syscall, tcb, untyped};

/// Where the test leaves its figures in `BENCH` (cycles).
pub const B_DEV_ROUTE: usize = 11;
pub const B_DEV_UINTR: usize = 12;
pub const B_DEV_SEL4: usize = 13;
const ROUNDS: usize = 5;
const BADGE: usize = 5;

/// UART IER (virtual address, access width) and the U context page, for the handler.
static IER: AtomicUsize = AtomicUsize::new(0);
static IER_WIDTH: AtomicUsize = AtomicUsize::new(1);
static CONTEXT: AtomicUsize = AtomicUsize::new(0);
/// The IRQHandler cap, while the test holds it.
static HANDLER_SLOT: AtomicUsize = AtomicUsize::new(0);
/// What the handler saw.
static EXT_CALLS: AtomicUsize = AtomicUsize::new(0);
static SIG_CALLS: AtomicUsize = AtomicUsize::new(0);
static SIG_BITS: AtomicUsize = AtomicUsize::new(0);
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
static CAUSE: AtomicUsize = AtomicUsize::new(0);
static ENTERED_AT: AtomicUsize = AtomicUsize::new(0);

const IER_THRE: u32 = 1 << 1;

fn set_ier(v: u32) {
    let a = IER.load(SeqCst);
    // SAFETY: `a` is the mapped UART's IER, at the device's access width.
    unsafe {
        if IER_WIDTH.load(SeqCst) >= 4 {
            (a as *mut u32).write_volatile(v)
        } else {
            (a as *mut u8).write_volatile(v as u8)
        }
    }
}

/// UEIP: claim at this hart's U context, quiet the device, complete.
fn on_external() {
    ENTERED_AT.store(rdcycle(), SeqCst);
    CAUSE.store(uintr::csrs().ucause, SeqCst);
    // SAFETY: CONTEXT is the mapped U-context page of the hart the route is tied to.
    let ctx = unsafe { PlicContext::new(CONTEXT.load(SeqCst)) };
    let id = ctx.claim();
    CLAIMED.store(id as usize, SeqCst);
    set_ier(0);
    if id != 0 {
        ctx.complete(id);
    }
    EXT_CALLS.fetch_add(1, SeqCst);
}

/// Forwarded: the kernel already claimed it and keeps it masked until Ack (done by the test).
fn on_signal(bits: u64) {
    ENTERED_AT.store(rdcycle(), SeqCst);
    CAUSE.store(uintr::csrs().ucause, SeqCst);
    set_ier(0);
    SIG_BITS.fetch_or(bits as usize, SeqCst);
    SIG_CALLS.fetch_add(1, SeqCst);
}

static DEV_HANDLER: Handler = Handler { on_signal, on_external };

/// The parked receiver of step 4 (`parked_receiver`): Waits (user interrupts off, as a
/// driver with nothing else to do would) and counts; a direct route's UEIP is taken once it
/// enables them again.
static PARKS: AtomicUsize = AtomicUsize::new(0);
static WAKES: AtomicUsize = AtomicUsize::new(0);
static WAIT_BITS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn parked_receiver(ntfn: usize) -> ! {
    uintr::install(&DEV_HANDLER);
    loop {
        uintr::disable();
        PARKS.fetch_add(1, SeqCst);
        let bits = uintr::wait(ntfn);
        WAIT_BITS.store(bits as usize, SeqCst);
        WAKES.fetch_add(1, SeqCst);
        uintr::enable();
    }
}

fn calls() -> usize {
    EXT_CALLS.load(SeqCst) + SIG_CALLS.load(SeqCst)
}

/// How long a delivery may take: the suite's budget, but at most 2^22 cycles on our SoC
/// (40 ms at 100 MHz, where a delivery takes well under a microsecond; a failure in the RTL
/// simulation then costs a minute, not ten).
fn limit() -> usize {
    budget().min(if DIRECT.load(SeqCst) != 0 { 1 << 22 } else { usize::MAX })
}
static DIRECT: AtomicUsize = AtomicUsize::new(0);

/// Spin (no system calls) until the handler has run `n` times in all, or the budget ends.
fn spin_until_calls(n: usize) -> bool {
    let t0 = rdcycle();
    while calls() < n {
        if rdcycle() - t0 > limit() {
            return false;
        }
        core::hint::spin_loop();
    }
    true
}

/// Map the one-page device untyped at physical `page` read-write; returns its address.
fn map_device_page(env: &mut Env, page: usize) -> Result<usize, Fail> {
    let Some((ut, _)) = bootinfo::untypeds(env.bi).find(|(_, d)| d.is_device != 0 && d.paddr == page) else {
        return Err(Fail::new(file!(), line!(), format_args!("no device untyped for {:#x} in the boot info", page)));
    };
    let f = env.slot()?;
    ok!(untyped::retype(ut, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
    let va = env.va(1);
    env.map_frame(f, VSPACE, va, rights::READ_WRITE)?;
    Ok(va)
}

/// The UART mapped once for the whole suite (its untyped yields one frame).
static UART_VA: AtomicUsize = AtomicUsize::new(0);
static CONTEXT_VA: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

fn inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    let mode = need_mode(env)?;
    let dev = env.bi.console_uart;
    ensure!(dev.paddr != 0 && dev.irq != 0, "the boot info names no console UART with an interrupt");
    if UART_VA.load(SeqCst) == 0 {
        UART_VA.store(map_device_page(env, dev.paddr & !(PAGE - 1))?, SeqCst);
    }
    IER.store(UART_VA.load(SeqCst) + (dev.paddr & (PAGE - 1)) + (1 << dev.reg_shift), SeqCst);
    IER_WIDTH.store(dev.io_width, SeqCst);
    set_ier(0);
    for a in [&EXT_CALLS, &SIG_CALLS, &SIG_BITS, &CLAIMED, &CAUSE] {
        a.store(0, SeqCst);
    }

    let h = env.slot()?;
    HANDLER_SLOT.store(h, SeqCst);
    ok!(irq::control_get(abi::init_cap::IRQ_CONTROL, dev.irq, CNODE, h, ROOT_DEPTH));
    let n = env.alloc_cap(o::NOTIFICATION)?;
    root_receiver(c, n)?;
    let badged = env.mint(n, rights::ALL, BADGE)?;
    uintr::install(&DEV_HANDLER);
    let route = ok!(uintr::irq_set_uintr(h, badged));
    match route {
        IrqRoute::Direct { hart } => {
            ensure!(mode == u::MODE_HARDWARE, "a direct route without the UINTC");
            ensure_eq!(hart, env.bi.node_id, "the route's hart (the receiver's)");
            let page = env.bi.plic_user_context[hart];
            ensure!(page != 0, "direct route, but no U-context page in the boot info");
            if CONTEXT_VA[hart].load(SeqCst) == 0 {
                CONTEXT_VA[hart].store(map_device_page(env, page)?, SeqCst);
            }
            CONTEXT.store(CONTEXT_VA[hart].load(SeqCst), SeqCst);
            // Tied to its hart while the route lasts.
            let other = (hart + 1) % bootinfo::harts(env.bi);
            if other != hart {
                expect_err!(tcb::set_affinity(ROOT_TCB, other), e::ILLEGAL_OPERATION);
            }
        }
        IrqRoute::Forwarded => {
            ensure!(env.bi.plic_user_context.iter().all(|&p| p == 0), "forwarded although the boot info has U contexts")
        }
    }
    let direct = matches!(route, IrqRoute::Direct { .. });
    DIRECT.store(direct as usize, SeqCst);
    let a = entries(ROOT_TCB)?;
    let overhead = entries(ROOT_TCB)? - a;
    let mut entry_free_rounds = 0;

    // 1. Delivery to the running thread's handler, several times (each completion re-arms).
    let mut best = usize::MAX;
    for round in 1..=ROUNDS {
        let e0 = entries(ROOT_TCB)?;
        let t0 = rdcycle();
        set_ier(IER_THRE);
        let arrived = spin_until_calls(round);
        let e1 = entries(ROOT_TCB)?;
        ensure!(arrived, "round {}: the device interrupt never reached the handler", round);
        best = best.min(ENTERED_AT.load(SeqCst).wrapping_sub(t0));
        if direct {
            ensure_eq!(EXT_CALLS.load(SeqCst), round, "UEIP handler calls");
            ensure_eq!(CAUSE.load(SeqCst), u::CAUSE_INTERRUPT | u::CAUSE_EXTERNAL, "ucause in the handler");
            ensure_eq!(CLAIMED.load(SeqCst), dev.irq, "source claimed at the U context");
            if (e1 - e0).saturating_sub(overhead) == 0 {
                entry_free_rounds += 1;
            }
        } else {
            ensure_eq!(SIG_CALLS.load(SeqCst), round, "forwarded handler calls");
            ensure_eq!(CAUSE.load(SeqCst), u::CAUSE_INTERRUPT | u::CAUSE_SOFTWARE, "ucause in the handler");
            ensure_eq!(SIG_BITS.swap(0, SeqCst), vector_bit(BADGE), "vector of the forwarded IRQ");
            ok!(irq::handler_ack(h));
        }
    }
    ensure_eq!(EXT_CALLS.load(SeqCst) + SIG_CALLS.load(SeqCst), ROUNDS, "handler calls in all (none spurious)");
    // A timer tick may land in one round's window; the delivery itself never enters the kernel.
    ensure!(
        !direct || entry_free_rounds >= ROUNDS - 1,
        "direct delivery entered the kernel in {} of {} rounds",
        ROUNDS - entry_free_rounds,
        ROUNDS
    );

    // 2. A blocking Wait is woken by the device. Direct: the kernel takes the source while the
    // thread is parked, wakes it, and the thread then takes it as UEIP; forwarded: Wait
    // returns the vector.
    uintr::disable();
    let before = calls();
    set_ier(IER_THRE);
    let bits = uintr::wait(badged);
    uintr::enable();
    if direct {
        ensure!(spin_until_calls(before + 1), "after Wait returned ({:#x}) the pending UEIP was not taken", bits);
        ensure_eq!(CLAIMED.load(SeqCst), dev.irq, "source claimed after Wait");
    } else {
        ensure_eq!(bits, vector_bit(BADGE), "Wait's bits for the forwarded IRQ");
        set_ier(0);
        ok!(irq::handler_ack(h));
    }

    // 3. A route bound while its receiver is already parked in Wait: the source must wake it at
    // once (not stay masked until its next Wait). The receiver outranks the root task on this
    // hart, so once Resume returns it has run up to its Wait and is blocked there.
    ok!(tcb::set_priority(ROOT_TCB, ROOT_TCB, abi::sched::ROOT_PRIORITY - 1));
    let n2 = env.alloc_cap(o::NOTIFICATION)?;
    let badged2 = env.mint(n2, rights::ALL, BADGE)?;
    let (worker, _) = spawn_receiver(env, c, parked_receiver, badged2, env.bi.node_id, n2)?;
    for a in [&PARKS, &WAKES, &WAIT_BITS] {
        a.store(0, SeqCst);
    }
    ok!(tcb::resume(worker.tcb));
    ensure_eq!(PARKS.load(SeqCst), 1, "waits begun by the receiver before the bind");
    ensure_eq!(WAKES.load(SeqCst), 0, "waits returned in the receiver before the bind");
    let route2 = ok!(uintr::irq_set_uintr(h, badged2));
    ensure!(route2 == route, "route to a parked receiver on the same hart: {:?}, before {:?}", route2, route);
    let before = calls();
    set_ier(IER_THRE);
    let t0 = rdcycle();
    while WAKES.load(SeqCst) == 0 && rdcycle() - t0 < limit() {
        core::hint::spin_loop();
    }
    ensure_eq!(WAKES.load(SeqCst), 1, "wake-ups of the receiver parked before the bind");
    if direct {
        ensure!(
            spin_until_calls(before + 1),
            "the parked receiver woke ({:#x}) but took no UEIP",
            WAIT_BITS.load(SeqCst)
        );
        ensure_eq!(CLAIMED.load(SeqCst), dev.irq, "source claimed by the woken receiver");
    } else {
        ensure_eq!(WAIT_BITS.load(SeqCst), vector_bit(BADGE) as usize, "Wait's bits in the parked receiver");
        set_ier(0);
        ok!(irq::handler_ack(h));
    }
    // It is back in Wait (it outranks us), and nothing else arrived.
    ensure_eq!(PARKS.load(SeqCst), 2, "waits begun by the receiver after one device interrupt");
    ensure_eq!(WAKES.load(SeqCst), 1, "waits returned in the receiver after one device interrupt");
    ok!(tcb::suspend(worker.tcb));
    ok!(tcb::set_priority(ROOT_TCB, ROOT_TCB, abi::sched::ROOT_PRIORITY));

    // 4. seL4's path in the same run: the IRQ signals a plain notification, polled (a Wait
    // would let the hart sleep in wfi, where Rocket's cycle counter stops).
    let plain = env.alloc_cap(o::NOTIFICATION)?;
    let plain_badged = env.mint(plain, rights::ALL, 1)?;
    ok!(irq::handler_set_notification(h, plain_badged));
    let mut best_sel4 = usize::MAX;
    for round in 0..ROUNDS {
        let t0 = rdcycle();
        set_ier(IER_THRE);
        let mut got = 0;
        while got == 0 && rdcycle() - t0 < limit() {
            got = syscall::poll(plain);
        }
        let t1 = rdcycle();
        set_ier(0);
        ensure!(got != 0, "round {}: the IRQ never signalled the plain notification", round);
        best_sel4 = best_sel4.min(t1 - t0);
        ok!(irq::handler_ack(h));
    }
    ok!(irq::handler_clear(h));
    ok!(cnode::delete(CNODE, h, ROOT_DEPTH));
    HANDLER_SLOT.store(0, SeqCst);
    BENCH[B_DEV_ROUTE].store(if direct { 2 } else { 1 }, SeqCst);
    BENCH[B_DEV_UINTR].store(best, SeqCst);
    BENCH[B_DEV_SEL4].store(best_sel4, SeqCst);
    Ok(())
}

pub fn device_irq(env: &mut Env) -> TResult {
    let r = with_cleanup(env, inner);
    if IER.load(SeqCst) != 0 {
        set_ier(0);
    }
    // A failure in step 3 may leave the root task below its priority.
    let _ = tcb::set_priority(ROOT_TCB, ROOT_TCB, abi::sched::ROOT_PRIORITY);
    // The root task takes no user interrupts after this test (later ones poll for theirs).
    uintr::disable();
    uintr::set_utvec(0);
    uintr::set_uscratch(0);
    // After a failure: free the IRQ for whoever comes next.
    let h = HANDLER_SLOT.swap(0, SeqCst);
    if h != 0 {
        let _ = irq::handler_clear(h);
        let _ = cnode::delete(CNODE, h, ROOT_DEPTH);
    }
    r
}
