//! Create/destroy cycles of every object kind, user-interrupt slots and sender tables
//! included, with nothing leaked: every kernel gauge is back at its start after each batch.
//! `make leak COUNT=n` runs it alone for n cycles; the suite runs a short run.
use crate::env::{check_invariants, Env, TResult, CNODE, ROOT_DEPTH, VSPACE};
use abi::{object as o, stat, uintr as u};
use userlib::invoke::rights;
use userlib::{cnode, syscall, tcb, uintr, untyped, vspace};

fn count() -> usize {
    option_env!("LEAK_COUNT").and_then(|s| s.parse().ok()).unwrap_or(300)
}

/// Gauges that must come back: object bytes, UINTC slots, sender tables and entries.
fn gauges() -> [usize; 4] {
    [stat::OBJECT_BYTES, stat::UINTR_SLOTS_USED, stat::UINTR_TABLES_USED, stat::UINTR_ENTRIES_USED]
        .map(syscall::debug_stat)
}

pub fn create_destroy_every_kind(env: &mut Env) -> TResult {
    let ut = env.alloc(o::UNTYPED, o::MEGA_PAGE_BITS + 1)?.cptr;
    let s = env.slots(11)?;
    let (t, ep, n, cn, f, pt, sub, mega, m, tb) = (s, s + 1, s + 2, s + 3, s + 4, s + 5, s + 6, s + 7, s + 8, s + 9);
    let _ = env.new_pages(1)?;
    let va = env.va_region(1);
    let uintr_on = env.bi.uintr_mode != u::MODE_NONE;
    let base = gauges();
    let n_cycles = count();
    for i in 0..n_cycles {
        let r = |ty: usize, bits: usize, slot: usize| untyped::retype(ut, ty, bits, CNODE, 0, 0, slot, 1);
        ok!(r(o::TCB, 0, t));
        ok!(r(o::ENDPOINT, 0, ep));
        ok!(r(o::NOTIFICATION, 0, n));
        ok!(r(o::CNODE, 4, cn));
        ok!(r(o::PAGE_4K, 0, f));
        ok!(r(o::PAGE_TABLE, 0, pt));
        ok!(r(o::UNTYPED, 12, sub));
        ok!(r(o::UINTR_SENDER_TABLE, 0, tb));
        // A 2 MiB frame now and then (zeroing it is the costly part).
        if i % 256 == 0 {
            ok!(r(o::MEGA_PAGE, 0, mega));
        }
        // Use them: a mapping, a cap inside the CNode, a bound notification with a UINTC
        // slot and a sender-table entry, an object retyped from the sub-Untyped.
        ok!(vspace::page_table_map(pt, VSPACE, va, 0));
        ok!(vspace::page_map(f, VSPACE, va, rights::READ_WRITE, 0));
        ok!(cnode::copy(cn, 1, 4, CNODE, ep, ROOT_DEPTH, rights::ALL));
        ok!(untyped::retype(sub, o::ENDPOINT, 0, cn, 0, 0, 2, 1));
        ok!(tcb::bind_notification(t, n));
        ok!(uintr::sender_table_bind(tb, t));
        if uintr_on {
            ok!(uintr::grant(abi::init_cap::UINTR_CONTROL, t, u::GRANT_RECEIVE));
            ok!(uintr::register_receiver(n));
            ok!(cnode::mint(CNODE, m, ROOT_DEPTH, CNODE, n, ROOT_DEPTH, rights::ALL, i % 64));
            ok!(uintr::register_sender(m, t));
        }
        // Tear down in a different order each time, then the rest by revoking the Untyped.
        match i % 4 {
            0 => ok!(cnode::delete(CNODE, t, ROOT_DEPTH)),
            1 => ok!(cnode::delete(CNODE, n, ROOT_DEPTH)),
            2 => ok!(cnode::delete(CNODE, tb, ROOT_DEPTH)),
            _ => {
                if uintr_on {
                    ok!(cnode::delete(CNODE, m, ROOT_DEPTH));
                }
                ok!(cnode::delete(CNODE, pt, ROOT_DEPTH));
            }
        }
        if uintr_on {
            let _ = cnode::delete(CNODE, m, ROOT_DEPTH);
        }
        ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
        if i % 1000 == 999 || i + 1 == n_cycles {
            let now = gauges();
            ensure!(
                now == base,
                "cycle {}: gauges (object bytes, UINTC slots, tables, entries) {:?}, at the start {:?}",
                i,
                now,
                base
            );
        }
        // Long runs (`make leak COUNT=...`) show how far they got, even if stopped early.
        if (i + 1) % 100_000 == 0 {
            userlib::println!("[ktest] leak: {} cycles, gauges at their start", i + 1);
        }
    }
    userlib::print!("({} cycles) ", n_cycles);
    check_invariants()
}
