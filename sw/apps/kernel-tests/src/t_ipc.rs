//! Endpoint and notification IPC.
use crate::env::{identify, park, sadd, sget, sset, wait_for, Env, TResult, ThreadCfg, CNODE, ROOT_DEPTH};
use abi::{error as e, object as o, MessageInfo};
use userlib::invoke::rights;
use userlib::{endpoint, ipc, syscall, tcb};

fn yields(n: usize) {
    for _ in 0..n {
        syscall::yield_now();
    }
}

extern "C" fn send3(cap: usize) -> ! {
    syscall::send(cap, MessageInfo::new(7, 0, 0, 3), [0xa, 0xb, 0xc, 0xd]);
    sadd(0, 1);
    park()
}

/// Receives once on `ep`: badge, label, length and MR0..2 into shared[1..7], then counts.
extern "C" fn recv_store(ep: usize) -> ! {
    loop {
        let (badge, info, mrs) = syscall::recv(ep);
        sset(1, badge);
        sset(2, info.label);
        sset(3, info.length);
        sset(4, mrs[0]);
        sset(5, mrs[1]);
        sset(6, mrs[2]);
        sadd(0, 1);
    }
}

pub fn send_recv_badge(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 0x11)?;
    sset(0, 0);
    env.spawn(send3, b, 255)?;
    yields(3);
    ensure_eq!(sget(0), 0, "Send returned with nobody receiving");
    let (badge, info, mrs) = syscall::recv(ep);
    ensure_eq!(badge, 0x11, "badge");
    ensure_eq!(info.label, 7, "label");
    ensure_eq!(info.length, 3, "length");
    ensure!(mrs[..3] == [0xa, 0xb, 0xc], "MRs {:x?}", mrs);
    yields(3);
    ensure_eq!(sget(0), 1, "sender did not continue after the receive");
    // The other way: the root sends to a waiting receiver.
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    let b2 = env.mint(ep2, rights::ALL, 0x22)?;
    sset(0, 0);
    env.spawn(recv_store, ep2, 255)?;
    yields(2);
    syscall::send(b2, MessageInfo::new(0x9, 0, 0, 2), [0x100, 0x200, 0, 0]);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x22, "badge at the receiver");
    ensure_eq!(sget(2), 0x9, "label at the receiver");
    ensure_eq!(sget(3), 2, "length at the receiver");
    ensure_eq!(sget(4), 0x100, "MR0 at the receiver");
    ensure_eq!(sget(5), 0x200, "MR1 at the receiver");
    Ok(())
}

/// Doubles MR0 and returns the badge in MR1, label + 1: first with Recv + Reply, then ReplyRecv.
extern "C" fn doubler(ep: usize) -> ! {
    let (badge, info, mrs) = syscall::recv(ep);
    syscall::reply(MessageInfo::new(info.label + 1, 0, 0, 2), [mrs[0] * 2, badge, 0, 0]);
    let (mut badge, mut info, mut mrs) = syscall::recv(ep);
    loop {
        (badge, info, mrs) =
            syscall::reply_recv(ep, MessageInfo::new(info.label + 1, 0, 0, 2), [mrs[0] * 2, badge, 0, 0]);
    }
}

fn call_doubler(cap: usize, badge: usize, rounds: usize) -> TResult {
    for i in 0..rounds {
        let (_, info, mrs) = syscall::call(cap, MessageInfo::new(0x40 + i, 0, 0, 1), [i + 5, 0, 0, 0]);
        ensure_eq!(info.label, 0x41 + i, "reply label");
        ensure_eq!(info.length, 2, "reply length");
        ensure_eq!(mrs[0], (i + 5) * 2, "reply MR0");
        ensure_eq!(mrs[1], badge, "badge seen by the server");
    }
    Ok(())
}

pub fn call_reply(env: &mut Env) -> TResult {
    // A server at our priority, then one below us (it runs only while we wait in Call).
    for prio in [255, 100] {
        let ep = env.alloc_cap(o::ENDPOINT)?;
        let b = env.mint(ep, rights::ALL, 0x31)?;
        env.spawn(doubler, ep, prio)?;
        call_doubler(b, 0x31, 5)?;
    }
    // Reply with nobody to reply to does nothing.
    syscall::reply(MessageInfo::new(1, 0, 0, 0), [0; 4]);
    Ok(())
}

pub fn nb_send_recv(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    // Nothing to receive: NBRecv returns at once with no badge and an empty message.
    let (badge, info, _) = syscall::nb_recv(ep);
    ensure!(
        badge == 0 && info.label == 0 && info.length == 0,
        "NBRecv on an idle endpoint: badge {:#x} info {:?}",
        badge,
        info
    );
    // NBSend with nobody waiting is dropped.
    syscall::nb_send(ep, MessageInfo::new(5, 0, 0, 1), [1, 0, 0, 0]);
    sset(0, 0);
    env.spawn(recv_store, ep, 255)?;
    yields(3);
    ensure_eq!(sget(0), 0, "a dropped NBSend was delivered later");
    // NBSend to a waiting receiver is delivered.
    let b = env.mint(ep, rights::ALL, 0x5)?;
    syscall::nb_send(b, MessageInfo::new(6, 0, 0, 1), [0x66, 0, 0, 0]);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(2), 6, "label of the NBSend");
    ensure_eq!(sget(4), 0x66, "MR0 of the NBSend");
    // NBRecv picks up a blocked sender.
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    let b2 = env.mint(ep2, rights::ALL, 0x23)?;
    env.spawn(send3, b2, 255)?;
    yields(3);
    let (badge, info, mrs) = syscall::nb_recv(ep2);
    ensure_eq!(badge, 0x23, "NBRecv badge from a waiting sender");
    ensure_eq!(info.label, 7, "NBRecv label");
    ensure_eq!(mrs[2], 0xc, "NBRecv MR2");
    Ok(())
}

extern "C" fn long_sender(ep: usize) -> ! {
    let mut mrs = [0usize; 20];
    for (i, m) in mrs.iter_mut().enumerate() {
        *m = 1000 + i;
    }
    endpoint::send_msg(ep, 9, &mrs, &[]);
    park()
}

/// Echoes a message of any length with every MR + 1, through its own IPC buffer.
extern "C" fn long_echo(ep: usize) -> ! {
    let (_, mut info) = ipc::recv(ep);
    loop {
        for i in 0..info.length {
            ipc::set_mr(i, ipc::get_mr(i) + 1);
        }
        (_, info) = ipc::reply_recv(ep, MessageInfo::new(info.label, 0, 0, info.length));
    }
}

pub fn long_messages(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    env.spawn(long_sender, ep, 255)?;
    let (_, info) = ipc::recv(ep);
    ensure_eq!(info.label, 9, "label");
    ensure_eq!(info.length, 20, "length of a 20-MR message");
    for i in 0..20 {
        ensure_eq!(ipc::get_mr(i), 1000 + i, "MR of a long send");
    }
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    env.spawn(long_echo, ep2, 255)?;
    for len in [5, 30, abi::ipc::MSG_MAX_LENGTH] {
        let mut mrs = [0usize; abi::ipc::MSG_MAX_LENGTH];
        for (i, m) in mrs.iter_mut().enumerate().take(len) {
            *m = i * 3 + len;
        }
        let (_, info) = endpoint::call_msg(ep2, 4, &mrs[..len], &[]);
        ensure_eq!(info.length, len, "reply length");
        for (i, m) in mrs.iter().enumerate().take(len) {
            ensure_eq!(ipc::get_mr(i), m + 1, "echoed MR");
        }
    }
    Ok(())
}

/// Sends MR0 = 0x77 with the cap in shared[4] as an extra cap, via `cap`.
pub(crate) extern "C" fn cap_sender(cap: usize) -> ! {
    endpoint::send_msg(cap, 0x12, &[0x77], &[sget(4)]);
    park()
}

pub(crate) fn receive_with_cap(
    env: &mut Env,
    ep: usize,
    send_via: usize,
    extra: usize,
) -> Result<(MessageInfo, usize), crate::env::Fail> {
    let slot = env.slot()?;
    ipc::set_receive_path(CNODE, slot, ROOT_DEPTH);
    sset(4, extra);
    env.spawn(cap_sender, send_via, 255)?;
    let (_, info) = ipc::recv(ep);
    ipc::set_receive_path(0, 0, 0);
    ensure!(ipc::get_mr(0) == 0x77, "MR0 of a message with a cap: {:#x}", ipc::get_mr(0));
    ensure!(info.label == 0x12, "label {:#x}", info.label);
    Ok((info, slot))
}

pub fn cap_transfer(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let granting = env.mint(ep, rights::ALL, 0x1)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let nb = env.mint(n, rights::ALL, 0x5)?;
    let (info, slot) = receive_with_cap(env, ep, granting, nb)?;
    ensure_eq!(info.extra_caps, 1, "extra caps received");
    ensure_eq!(info.caps_unwrapped, 0, "caps unwrapped");
    ensure!(identify(slot) == Some(o::NOTIFICATION), "received slot holds {:?}", identify(slot));
    syscall::signal(slot);
    ensure_eq!(syscall::poll(n), 0x5, "the received cap names the sent notification with its badge");
    ensure!(identify(nb).is_some(), "the sender lost its cap (transfer copies)");
    // A message with a cap but no receive slot: the message arrives, the cap does not.
    let slot2 = env.slot()?;
    sset(4, nb);
    env.spawn(cap_sender, granting, 255)?;
    let (_, info) = ipc::recv(ep);
    ensure_eq!(ipc::get_mr(0), 0x77, "MR0 without a receive slot");
    ensure_eq!(info.extra_caps, 0, "caps received with no receive slot");
    ensure!(identify(slot2).is_none(), "slot filled without a receive path");
    Ok(())
}

pub fn no_grant(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let no_grant = env.mint(ep, rights::READ_WRITE, 0x2)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let (info, slot) = receive_with_cap(env, ep, no_grant, n)?;
    ensure_eq!(info.extra_caps, 0, "caps transferred through a cap without Grant");
    ensure!(identify(slot).is_none(), "receive slot filled without Grant");
    Ok(())
}

pub fn unwrapped_badge(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let granting = env.mint(ep, rights::ALL, 0x1)?;
    let badged_self = env.mint(ep, rights::ALL, 0x77)?;
    let (info, slot) = receive_with_cap(env, ep, granting, badged_self)?;
    ensure_eq!(info.extra_caps, 1, "extra caps");
    ensure_eq!(info.caps_unwrapped, 1, "caps_unwrapped bit for a cap to the receiving endpoint");
    ensure_eq!(ipc::get_badge(0), 0x77, "unwrapped badge");
    ensure!(identify(slot).is_none(), "an unwrapped cap was also stored");
    Ok(())
}

pub fn rights_enforced(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let ro = env.mint(ep, rights::READ, 0)?;
    // Call on a cap without Write: an InvalidCapability error reply, not a fault.
    let (_, info, _) = syscall::call(ro, MessageInfo::new(1, 0, 0, 1), [1, 0, 0, 0]);
    ensure_eq!(info.label, e::INVALID_CAPABILITY, "Call on a read-only endpoint cap");
    // Send on it: dropped.
    sset(0, 0);
    env.spawn(recv_store, ep, 255)?;
    yields(2);
    syscall::send(ro, MessageInfo::new(2, 0, 0, 0), [0; 4]);
    yields(3);
    ensure_eq!(sget(0), 0, "Send through a read-only cap was delivered");
    let wo = env.mint(ep, rights::WRITE, 0x3)?;
    syscall::send(wo, MessageInfo::new(3, 0, 0, 0), [0; 4]);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x3, "badge through a write-only cap");
    Ok(())
}

pub fn cross_core(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 0x99)?;
    env.spawn_on(doubler, ep, 255, other)?;
    call_doubler(b, 0x99, 20)?;
    // Send one way to a receiver on another hart, and from a sender there.
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    sset(0, 0);
    env.spawn_on(recv_store, ep2, 255, other)?;
    for i in 1..=10 {
        syscall::send(ep2, MessageInfo::new(i, 0, 0, 1), [i * 7, 0, 0, 0]);
        wait_for(0, i, 100_000)?;
        ensure_eq!(sget(4), i * 7, "MR0 received on the other hart");
    }
    let ep3 = env.alloc_cap(o::ENDPOINT)?;
    let b3 = env.mint(ep3, rights::ALL, 0x3c)?;
    env.spawn_on(send3, b3, 255, other)?;
    let (badge, info, _) = syscall::recv(ep3);
    ensure_eq!(badge, 0x3c, "badge from the other hart");
    ensure_eq!(info.label, 7, "label from the other hart");
    Ok(())
}

extern "C" fn waiter(n: usize) -> ! {
    loop {
        let badge = syscall::wait(n);
        sset(1, badge);
        sadd(0, 1);
    }
}

pub fn ntfn_signal_wait_poll(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ensure_eq!(syscall::poll(n), 0, "poll of a fresh notification");
    let b8 = env.mint(n, rights::ALL, 0x8)?;
    sset(0, 0);
    let w = env.spawn(waiter, n, 255)?;
    yields(2);
    ensure_eq!(sget(0), 0, "Wait returned before a signal");
    syscall::signal(b8);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x8, "badge delivered to a waiting thread");
    ok!(tcb::suspend(w.tcb));
    // Signal first, wait later: the wait returns at once.
    let b2 = env.mint(n, rights::ALL, 0x2)?;
    syscall::signal(b2);
    ensure_eq!(syscall::wait(n), 0x2, "Wait after a Signal");
    ensure_eq!(syscall::poll(n), 0, "poll after the wait consumed the signal");
    // A waiter on another hart.
    if let Some(other) = env.other_hart() {
        sset(0, 0);
        env.spawn_on(waiter, n, 255, other)?;
        for i in 1..=5 {
            syscall::signal(b8);
            wait_for(0, i, 100_000)?;
        }
        ensure_eq!(sget(1), 0x8, "badge on the other hart");
    }
    Ok(())
}

/// A Wait on a hart with nothing else to run spins for its signal without the kernel lock before
/// it blocks (the kernel's `fastpath::spin_for_signal`), and runs its ecall again after the
/// spin. Signals that come during the spin, after it (the Wait blocked) and suspensions that
/// land in it keep the notification's meaning: each signal is received once, with its badge.
pub fn ntfn_wait_spin(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let mut badged = [0; 4];
    for (i, b) in badged.iter_mut().enumerate() {
        *b = env.mint(n, rights::ALL, 1 << i)?;
    }
    sset(0, 0);
    let spins0 = syscall::debug_stat(abi::stat::WAIT_SPINS);
    let w = env.spawn_on(waiter, n, 255, other)?;
    let mut got = 0;
    for round in 0..48usize {
        // The waiter is (about to be) in its next Wait: signal at once (inside its spin), or
        // after a pause longer than the spin (blocked by then), or stop it first.
        match round % 3 {
            1 => {
                let t0 = crate::env::rdcycle();
                while crate::env::rdcycle().wrapping_sub(t0) < 50_000 {
                    core::hint::spin_loop();
                }
            }
            2 => {
                ok!(tcb::suspend(w.tcb));
                ok!(tcb::resume(w.tcb));
            }
            _ => {}
        }
        syscall::signal(badged[round % 4]);
        got += 1;
        wait_for(0, got, 100_000)?;
        let (count, badge) = (sget(0), sget(1));
        ensure!(count == got, "round {}: {} wake-ups for {} signals", round, count, got);
        ensure!(badge == 1 << (round % 4), "round {}: badge {:#x}, sent {:#x}", round, badge, 1 << (round % 4));
    }
    ok!(tcb::suspend(w.tcb));
    let spins = syscall::debug_stat(abi::stat::WAIT_SPINS) - spins0;
    ensure!(spins > 0, "no Wait spun for its signal (the waiter's hart had nothing else to run)");
    // Signals that a spinning Wait got straight from the signaller (a few every run under
    // QEMU too; every signal of the first kind on the RTL) were received once each, above.
    let delivered = syscall::debug_stat(abi::stat::SPIN_DELIVERIES);
    ensure!(delivered <= syscall::debug_stat(abi::stat::WAIT_SPINS), "more deliveries than spins");
    Ok(())
}

pub fn ntfn_badges_or(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let caps = [env.mint(n, rights::ALL, 0x1)?, env.mint(n, rights::ALL, 0x4)?, env.mint(n, rights::ALL, 0x10)?];
    for c in caps {
        syscall::signal(c);
    }
    ensure_eq!(syscall::poll(n), 0x15, "badges OR together");
    ensure_eq!(syscall::poll(n), 0, "poll clears");
    syscall::signal(caps[0]);
    syscall::signal(caps[0]);
    ensure_eq!(syscall::poll(n), 0x1, "the same badge twice");
    Ok(())
}

pub fn bound_ntfn_delivery(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let nb = env.mint(n, rights::ALL, 0x40)?;
    let eb = env.mint(ep, rights::ALL, 0x3)?;
    sset(0, 0);
    let cfg = ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    let t = env.spawn_cfg(recv_store as *const () as usize, ep, cfg)?;
    ok!(tcb::bind_notification(t.tcb, n));
    ok!(tcb::resume(t.tcb));
    yields(2);
    // A signal wakes the thread out of its endpoint Recv, with the notification's badge.
    syscall::signal(nb);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x40, "badge of the bound notification at the endpoint receiver");
    // Endpoint messages still arrive.
    syscall::send(eb, MessageInfo::new(0x21, 0, 0, 1), [0x5, 0, 0, 0]);
    wait_for(0, 2, 100)?;
    ensure_eq!(sget(1), 0x3, "endpoint badge");
    ensure_eq!(sget(2), 0x21, "endpoint label");
    // Unbound: the signal stays pending in the notification.
    ok!(tcb::unbind_notification(t.tcb));
    syscall::signal(nb);
    yields(3);
    ensure_eq!(sget(0), 2, "an unbound notification woke the thread");
    ensure_eq!(syscall::poll(n), 0x40, "pending badge after unbind");
    // Signal pending before the thread blocks: delivered as soon as it receives.
    ok!(tcb::bind_notification(t.tcb, n));
    ok!(tcb::suspend(t.tcb));
    syscall::signal(nb);
    ok!(tcb::resume(t.tcb));
    yields(3);
    ensure!(sget(0) >= 3, "a pending bound signal was not delivered on Recv");
    ensure_eq!(sget(1), 0x40, "pending bound badge");
    Ok(())
}
