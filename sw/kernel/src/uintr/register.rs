//! Handing out the user-interrupt resources and taking them back: receiver slots for
//! notifications (a fixed pool of the UINTC, under a grant from UintrControl), sender tables
//! (objects from the sender's own Untyped) bound to threads, entries in them for the threads
//! that signal, and the clean-up when caps, tables, notifications or threads go.
use super::{hardware, owners, park, release, reload, sender, slot_owner, switch, uintc, SlotOwner, USIP};
use crate::ipc;
use crate::object::tcb::{State, Tcb};
use crate::object::{at, notification::Notification};
use crate::sched;
use abi::uintr::MAX_VECTOR;
use caps::Error;
use core::ptr::null_mut;

/// NotificationRegisterReceiver: a slot for the notification's bound thread.
pub fn register_receiver(ntfn: u64) -> Result<usize, Error> {
    let n = at::<Notification>(ntfn);
    if let Some(s) = n.uslot.checked_sub(1) {
        return Ok(s as usize);
    }
    // SAFETY: a bound TCB is live.
    let Some(t) = (unsafe { n.bound.as_mut() }) else { return Err(Error::IllegalOperation) };
    // The UINTC's slots are a fixed pool: only threads UintrControl allowed may take one.
    if t.uintr_grants & abi::uintr::GRANT_RECEIVE as u8 == 0 {
        return Err(Error::IllegalOperation);
    }
    let s = uintc::alloc().ok_or(Error::NotEnoughMemory { available: 0 })?;
    owners()[s as usize] = SlotOwner { ntfn, tcb: t };
    n.uslot = s + 1;
    t.uintr.slot = s + 1;
    t.uintr.sideleg |= USIP;
    sender::retarget(n, Some(s));
    reload(t);
    Ok(s as usize)
}

/// NotificationRegisterSender (vector `badge`) through the cap in `cap_slot`: an entry in
/// `t`'s sender table. Returns (the handle the invoked cap keeps, the entry index).
pub fn register_sender(ntfn: u64, badge: u64, t: &mut Tcb, cap_slot: caps::SlotRef) -> Result<(u64, usize), Error> {
    if badge > MAX_VECTOR as u64 {
        return Err(Error::RangeError { min: 0, max: MAX_VECTOR as u64 });
    }
    // The thread sends through a table it was given (SenderTableBind): no table, no entry.
    if t.uintr.table == 0 {
        return Err(Error::IllegalOperation);
    }
    let n = at::<Notification>(ntfn);
    let slot = n.uslot.checked_sub(1);
    sender::alloc_entry(t.uintr.table, ntfn, n, slot, badge, cap_slot).map_err(|e| match e {
        sender::AllocError::TableFull => Error::NotEnoughMemory { available: 0 },
        // Bounds what a receiver registration rewrites under the lock.
        sender::AllocError::TooManySenders => {
            Error::RangeError { min: 0, max: abi::uintr::MAX_SENDERS_PER_NOTIFICATION as u64 - 1 }
        }
    })
}

/// A cap was deleted: a registered sender cap frees its entry. (A `uipi.send` that read the
/// entry just before still lands in the slot the cap could signal: nothing to drain; the
/// table's memory stays a table.)
pub fn cap_deleted(cap: &caps::Cap) {
    if let caps::Cap::Notification { uintr, .. } = *cap {
        if uintr != 0 {
            sender::free_entry(uintr);
        }
    }
}

/// A cap moved to `slot` (CNode Move/Mutate/Rotate): its entry follows it.
pub fn cap_moved(cap: &caps::Cap, slot: caps::SlotRef) {
    if let caps::Cap::Notification { uintr, .. } = *cap {
        if uintr != 0 {
            sender::cap_moved(uintr, slot);
        }
    }
}

/// Detach sender table `table` from its thread (if bound), freeing every entry in it. The
/// thread's harts stop naming the table (`reload`), and no send that read an entry may land
/// after this (the table's memory may be retyped next).
fn unbind_table(table: u64) {
    if let Some(t) = sender::unbind(table) {
        drain_sends();
        reload(t);
    }
}

/// SenderTableBind / SenderTableUnbind on the table cap `table`.
pub fn invoke_sender_table(me: &mut Tcb, table: u64, m: &ipc::Msg) -> crate::object::InvResult {
    let _ = me;
    match m.label {
        abi::label::SENDER_TABLE_BIND => {
            m.need(0, 1)?;
            let caps::Cap::Tcb { obj } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
            let t = at::<Tcb>(obj);
            if sender::owner(table).is_some() || t.uintr.table != 0 {
                return Err(Error::IllegalOperation);
            }
            sender::set_owner(table, t);
            t.uintr.set_table(table);
            reload(t);
            Ok(0)
        }
        abi::label::SENDER_TABLE_UNBIND => {
            if sender::owner(table).is_none() {
                return Err(Error::IllegalOperation);
            }
            unbind_table(table);
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}

/// The last cap of sender table `table` went: unbind it and forget it.
pub fn sender_table_destroyed(table: u64) {
    unbind_table(table);
    sender::destroy(table);
}

/// The notification's receiver slot goes (unbind, or the notification or thread is
/// destroyed): entries pointing at it stop delivering, the slot is reset and free.
pub fn free_receiver(n: &mut Notification) {
    let Some(s) = n.uslot.checked_sub(1) else { return };
    let ntfn = owners()[s as usize].ntfn;
    // The slot's thread is live: this runs before it is destroyed.
    if let Some(t) = slot_owner(s) {
        crate::object::irq::receiver_gone(ntfn);
        park::unpark(t);
        reload(t);
        t.uintr.slot = 0;
        t.uintr.sideleg &= !USIP;
        if t.state == State::BlockedOnNotification && t.blocked_on == ntfn {
            // A Wait on what is now a plain notification: restart it.
            crate::object::tcb::restart(t);
        }
    }
    sender::retarget(n, None);
    drain_sends();
    uintc::free(s);
    owners()[s as usize] = SlotOwner { ntfn: 0, tcb: null_mut() };
    n.uslot = 0;
}

/// Entries were just invalidated: let no `uipi.send` that read one of them before that land
/// after this returns. The uipi unit finishes a send after the instruction retires (the
/// entry load, then the UINTC write), but it is busy until then and a `fence` waits for it;
/// every hart passes one on kernel entry (the Release store of `in_user`). So once each hart
/// that is in user mode has been kicked out of it, nothing is in flight (this hart drained at
/// its own entry). The emulation sends under the kernel lock: nothing to drain.
fn drain_sends() {
    if hardware() {
        sched::kick_others(|_| true);
    }
}

/// UintrControl_Grant: set whether a thread may hold a receiver slot; a slot held under a
/// withdrawn grant is freed at once.
pub fn invoke_control(me: &mut Tcb, m: &ipc::Msg) -> crate::object::InvResult {
    if m.label != abi::label::UINTR_CONTROL_GRANT {
        return Err(Error::IllegalOperation);
    }
    m.need(1, 1)?;
    let caps::Cap::Tcb { obj } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
    let grants = m.mr(me, 0);
    if grants & !abi::uintr::GRANT_RECEIVE != 0 {
        return Err(Error::InvalidArgument(0));
    }
    let t = at::<Tcb>(obj);
    t.uintr_grants = grants as u8;
    if grants & abi::uintr::GRANT_RECEIVE == 0 {
        if let Some(s) = t.uintr.slot.checked_sub(1) {
            let ntfn = owners()[s as usize].ntfn;
            free_receiver(at::<Notification>(ntfn));
        }
    }
    Ok(0)
}

/// Thread `t` is being destroyed (already suspended): its sender table (an object of its
/// own) is unbound, which frees its entries; no hart may keep the thread's state.
pub fn tcb_destroyed(t: &mut Tcb) {
    release(t);
    if t.uintr.table != 0 {
        unbind_table(t.uintr.table);
    }
    switch::forget(t);
}
