//! Console output (kernel `console`, `abi::console`, issue #38): printing needs a Console cap
//! on every path (DebugPutChar, DebugPutString, async PutChar/PutString, a thread of another
//! CSpace), copies print and go with a revoke of the original; a flood of async PutString
//! never has the UART written under the kernel lock (the kernel counts bytes written there)
//! and every byte taken reaches the UART; a full ring takes fewer bytes or none, loses nothing
//! it took, and kernel output that does not fit is counted and reported.
use crate::env::{identify, park, sget, sset, wait_for, Env, Fail, TResult, ThreadCfg, CNODE, ROOT_DEPTH};
use crate::t_asys::{registered_raw, with_slots_back, Raw};
use abi::console::{KERNEL_RESERVE, PUT_STRING_MAX, RING_BYTES};
use abi::{error as e, init_cap as ic, object as o, stat};
use userlib::asys::Request;
use userlib::invoke::rights;
use userlib::{cnode, debug, println, syscall};

fn stat(which: usize) -> usize {
    syscall::debug_stat(which)
}

/// Wait until the kernel's console ring is empty (harts drain it as they pass drain points;
/// our own yields are such points).
fn drained() -> TResult {
    for _ in 0..2_000_000 {
        if stat(stat::CONSOLE_QUEUED) == 0 {
            return Ok(());
        }
        syscall::yield_now();
    }
    Err(crate::env::fail(format_args!("the console ring never drained ({} bytes left)", stat(stat::CONSOLE_QUEUED))))
}

/// The async reply to `q` (one request, alone in the ring).
fn reply_to(r: &mut Raw, q: &Request, id: u64) -> Result<(u32, u64), Fail> {
    r.push(q, id)?;
    match r.reply(1_000_000)? {
        Some(i) if i.id == id => Ok((i.label, i.payload[0])),
        other => Err(crate::env::fail(format_args!("request {}: reply {:?}", id, other))),
    }
}

pub fn needs_the_cap(env: &mut Env) -> TResult {
    with_slots_back(env, |env| {
        ensure_eq!(debug::console(), ic::CONSOLE, "the root task prints with init_cap::CONSOLE");
        ensure_eq!(identify(ic::CONSOLE).unwrap_or(99), o::CONSOLE, "the root task's console cap");
        let ep = env.alloc_cap(o::ENDPOINT)?;
        let empty = env.slot()?;
        for bad in [ic::DEBUG, ep, empty, 1 << 40] {
            ensure_eq!(syscall::debug_put_char(bad, b'!'), usize::MAX, "DebugPutChar without the cap");
            ensure_eq!(syscall::debug_put_string_raw(bad, 4, 0), usize::MAX, "DebugPutString without the cap");
        }
        // Async: the same refusal, as an error reply; with the cap the count taken.
        let mut r = registered_raw(env)?;
        let (code, _) = reply_to(&mut r, &Request::put_char(ic::DEBUG, b'!'), 1)?;
        ensure_eq!(code, e::INVALID_CAPABILITY, "async PutChar with the debug cap");
        let (code, _) = reply_to(&mut r, &Request::put_string(ep, b"refused"), 2)?;
        ensure_eq!(code, e::INVALID_CAPABILITY, "async PutString with an endpoint cap");
        let (code, _) = reply_to(&mut r, &Request::put_string(1 << 40, b"refused"), 3)?;
        ensure_eq!(code, e::FAILED_LOOKUP, "async PutString with a cptr that does not resolve");
        let (code, _) = reply_to(&mut r, &Request::put_string(empty, b"refused"), 4)?;
        ensure!(code != 0, "async PutString with an empty slot was taken");
        let (code, n) = reply_to(&mut r, &Request::put_string(ic::CONSOLE, b"<async>"), 5)?;
        ensure!(code == 0 && n == 7, "async PutString with the cap: code {}, {} taken", code, n);
        let (code, n) = reply_to(&mut r, &Request::put_char(ic::CONSOLE, b' '), 6)?;
        ensure!(code == 0 && n == 1, "async PutChar with the cap: code {}, {} taken", code, n);

        // Copies print (a copy of a copy too); revoking the original takes them all back.
        let c1 = env.copy(ic::CONSOLE)?;
        let c2 = env.copy(c1)?;
        ensure_eq!(identify(c2).unwrap_or(99), o::CONSOLE, "a copy's type");
        ensure_eq!(syscall::debug_put_char(c1, b'<'), 1, "a copy prints");
        ensure_eq!(syscall::debug_put_char(c2, b'>'), 1, "a copy of a copy prints");
        ok!(cnode::revoke(CNODE, ic::CONSOLE, ROOT_DEPTH));
        ensure!(identify(c1).is_none() && identify(c2).is_none(), "copies survived a revoke of the original");
        ensure_eq!(syscall::debug_put_char(c2, b'!'), usize::MAX, "a revoked copy printed");
        ensure_eq!(syscall::debug_put_char(ic::CONSOLE, b' '), 1, "the original after its revoke");

        // A thread of another CSpace: refused until its CSpace gets a copy.
        let c = env.alloc(o::CNODE, 4)?.cptr;
        for i in 1..5 {
            sset(i, 0);
        }
        env.spawn_cfg(
            print_twice as *const () as usize,
            0,
            ThreadCfg { cspace: c, cspace_data: 60, ..ThreadCfg::default() },
        )?;
        wait_for(1, 1, 100_000)?;
        ensure_eq!(sget(2), usize::MAX, "a thread without the cap printed");
        ok!(cnode::copy(c, ic::CONSOLE, 4, CNODE, ic::CONSOLE, ROOT_DEPTH, rights::ALL));
        sset(3, 1);
        wait_for(1, 2, 100_000)?;
        ensure_eq!(sget(4), 1, "a thread given a copy could not print");
        Ok(())
    })
}

extern "C" fn print_twice(_: usize) -> ! {
    // (No park: the park notification is not in its CSpace. Suspended after the test.)
    // Its CSpace: a 16-slot CNode, empty until the root copies the console cap to slot 14.
    sset(2, syscall::debug_put_char(ic::CONSOLE, b'!'));
    sset(1, 1);
    while sget(3) == 0 {
        syscall::yield_now();
    }
    sset(4, syscall::debug_put_char(ic::CONSOLE, b' '));
    sset(1, 2);
    loop {
        syscall::yield_now();
    }
}

/// Flood tags: the full-ring test's records are checked on the host, by their tag.
const FULL_RING_TAG: &[u8; 6] = b"flood!";
const BURST_TAG: &[u8; 6] = b"burst!";

/// Record `i` of a flood: 16 bytes, "<NNNNNN:flood!>\n" (the host check in
/// `scripts/boot_test.py` finds each whole one in the output).
fn record(tag: &[u8; 6], i: usize) -> [u8; PUT_STRING_MAX] {
    let mut r = *b"<000000:flood!>\n";
    r[8..14].copy_from_slice(tag);
    let mut v = i;
    for d in r[1..7].iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    r
}

/// Bytes a take of `n` bytes of a record puts in the ring (its '\n', the last byte, is CRLF).
fn ring_bytes(n: usize) -> usize {
    n + (n == PUT_STRING_MAX) as usize
}

/// Requests per batch: the raw ring's capacity.
const BATCH: usize = crate::t_asys::CAP;

/// One batch of flood records `first..first + BATCH` through the ring (empty PutStrings
/// without a tag); the bytes each took.
fn flood_batch(r: &mut Raw, first: usize, tag: Option<&[u8; 6]>) -> Result<[usize; BATCH], Fail> {
    for k in 0..BATCH {
        let q = if let Some(tag) = tag {
            Request::put_string(ic::CONSOLE, &record(tag, first + k))
        } else {
            Request::put_string(ic::CONSOLE, &[])
        };
        // All in the ring before one wake (a push that finds the handler asleep would wake it
        // for that request alone).
        let [item, _] = q.to_items((first + k) as u64);
        let _ = ok!(r.req.push(&item).map_err(|_| "request ring full"));
    }
    let _ = userlib::asys::wake();
    let mut took = [0; BATCH];
    for (k, t) in took.iter_mut().enumerate() {
        match r.reply(1_000_000)? {
            Some(i) if i.id == (first + k) as u64 && i.label == 0 => *t = i.payload[0] as usize,
            other => return Err(crate::env::fail(format_args!("flood request {}: reply {:?}", first + k, other))),
        }
    }
    Ok(took)
}

/// 64 async PutStrings of 16 bytes (two wakes of 32; one wake could carry 64 x 16 bytes to a
/// handler before): the UART is never written by a hart holding the kernel lock, and every
/// byte taken reaches it. Prints the longest lock hold during the flood next to the same
/// number of empty PutStrings (figures, not checks).
pub fn flood_outside_lock(env: &mut Env) -> TResult {
    with_slots_back(env, |env| {
        let mut r = registered_raw(env)?;
        drained()?;
        let (w0, locked0) = (stat(stat::CONSOLE_WRITTEN), stat(stat::CONSOLE_WRITTEN_LOCKED));
        let mut taken = 0;
        syscall::debug_stat_reset(ic::DEBUG, stat::LOCK_HOLD_MAX);
        for b in 0..2 {
            taken += flood_batch(&mut r, b * BATCH, Some(BURST_TAG))?.iter().map(|&n| ring_bytes(n)).sum::<usize>();
        }
        let hold = syscall::debug_stat_reset(ic::DEBUG, stat::LOCK_HOLD_MAX);
        for b in 0..2 {
            flood_batch(&mut r, b * BATCH, None)?;
        }
        let hold_empty = syscall::debug_stat_reset(ic::DEBUG, stat::LOCK_HOLD_MAX);
        drained()?;
        ensure_eq!(taken, 2 * BATCH * (PUT_STRING_MAX + 1), "bytes taken by an empty ring");
        ensure_eq!(stat(stat::CONSOLE_WRITTEN_LOCKED), locked0, "bytes written to the UART under the kernel lock");
        ensure_eq!(stat(stat::CONSOLE_WRITTEN) - w0, taken, "bytes written to the UART of those taken");
        println!(
            "\n[ktest] bench: console flood of {} bytes in {} async PutStrings: longest lock hold {} cycles \
             ({} with empty PutStrings)",
            taken,
            2 * BATCH,
            hold,
            hold_empty
        );
        Ok(())
    })
}

/// Keeps its hart in user mode (no kernel entry, so no drain there) until shared[0] is set.
extern "C" fn busy(_: usize) -> ! {
    crate::env::SHARED[2].fetch_add(1, core::sync::atomic::Ordering::SeqCst);
    while sget(0) == 0 {
        core::hint::spin_loop();
    }
    park()
}

/// Every other hart busy in user mode: the ring drains only at this hart's own exits.
fn occupy_other_harts(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi);
    sset(0, 0);
    sset(2, 0);
    for h in (0..harts).filter(|&h| h != env.bi.node_id) {
        env.spawn_on(busy, 0, 255, h)?;
    }
    wait_for(2, harts - 1, 100_000)
}

/// Flood records from `next` until the ring refuses, and a few batches more: (records sent,
/// ring bytes taken, the first record taken short, ring bytes taken before it, requests
/// refused outright).
fn fill(r: &mut Raw, mut next: usize) -> Result<(usize, usize, usize, usize, usize), Fail> {
    let (mut taken, mut before_refusal, mut refused) = (0, 0, 0);
    let mut first_short = None;
    let start = next;
    // 15 KiB of user part at 17 ring bytes a record: ~900 records, then 4 batches more.
    while first_short.is_none_or(|f| next < f + 4 * BATCH) {
        ensure!(
            next - start < 4 * RING_BYTES / PUT_STRING_MAX,
            "the ring never refused ({} bytes taken; {} queued, {} written, wakes {} inline {} remote, {} entries)",
            taken,
            stat(stat::CONSOLE_QUEUED),
            stat(stat::CONSOLE_WRITTEN),
            stat(stat::ASYS_WAKE_INLINE),
            stat(stat::ASYS_WAKE_REMOTE),
            stat(stat::KERNEL_ENTRIES)
        );
        for (k, &n) in flood_batch(r, next, Some(FULL_RING_TAG))?.iter().enumerate() {
            taken += ring_bytes(n);
            if n < PUT_STRING_MAX && first_short.is_none() {
                first_short = Some(next + k);
                before_refusal = taken;
            }
            refused += (n == 0) as usize;
        }
        next += BATCH;
    }
    Ok((next, taken, first_short.unwrap_or(0), before_refusal, refused))
}

/// Flood until the ring refuses, with every other hart busy (it drains only at this hart's
/// exits, a FIFO's worth each): user output fills it up to its user part and is then taken
/// short or refused (reply: the count taken); once drained, exactly the bytes taken reached
/// the UART. Then kernel output into a full ring: what does not fit is counted and a
/// "[N bytes dropped]" line follows once there is room.
pub fn full_ring(env: &mut Env) -> TResult {
    if userlib::bootinfo::harts(env.bi) < 2 {
        return Err(Fail::skip(format_args!("needs a second hart")));
    }
    with_slots_back(env, |env| {
        let mut r = registered_raw(env)?;
        println!("");
        drained()?;
        let (w0, d0) = (stat(stat::CONSOLE_WRITTEN), stat(stat::CONSOLE_DROPPED));
        occupy_other_harts(env)?;
        let (next, taken, first_short, before_refusal, refused) = fill(&mut r, 0)?;
        // The other harts stay busy: our own exits drain the ring (a FIFO's worth each).
        drained()?;
        let written = stat(stat::CONSOLE_WRITTEN) - w0;
        ensure!(refused > 0, "a full ring took every request");
        // The ring drains at this hart's exits meanwhile, so it took at least its user part.
        ensure!(
            before_refusal + ring_bytes(PUT_STRING_MAX) >= RING_BYTES - KERNEL_RESERVE,
            "user output refused after {} bytes, below the ring's user part",
            before_refusal
        );
        // Nothing taken is lost and nothing else came: the UART got exactly the bytes taken.
        ensure_eq!(written, taken, "bytes written to the UART of those the ring took");
        ensure_eq!(stat(stat::CONSOLE_DROPPED), d0, "kernel bytes dropped with its reserve free");

        // Full again, then kernel output (the scheduler dump, a few hundred bytes a time): it
        // fills the kernel's reserve, then is dropped and counted.
        fill(&mut r, next)?;
        let mut dumps = 0;
        while stat(stat::CONSOLE_DROPPED) == d0 && dumps < 64 {
            ensure!(syscall::debug_dump_scheduler(ic::DEBUG), "DebugDumpScheduler with the cap");
            dumps += 1;
        }
        let dropped = stat(stat::CONSOLE_DROPPED) - d0;
        ensure!(stat(stat::CONSOLE_QUEUED) <= RING_BYTES, "more queued than the ring holds");
        sset(0, 1);
        drained()?;
        println!(
            "\n[ktest] console flood: first refusal at record {} after {} bytes, {} requests refused; \
             {} kernel bytes dropped after {} scheduler dumps",
            first_short, before_refusal, refused, dropped, dumps
        );
        ensure!(dropped > 0, "kernel output into a full ring was not dropped ({} dumps)", dumps);
        Ok(())
    })
}
