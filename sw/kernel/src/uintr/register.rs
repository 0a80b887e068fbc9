//! Handing out the user-interrupt resources and taking them back: receiver slots for
//! notifications, sender-table entries for the threads that signal them, the grants that say
//! who may hold either (the UINTC's slots and the sender tables are fixed pools), and the
//! clean-up when caps, notifications or threads go.
use super::{hardware, owners, park, reload, release, sender, slot_owner, switch, uintc, SlotOwner, USIP};
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
    sender::retarget(ntfn, Some(s));
    reload(t);
    Ok(s as usize)
}

/// NotificationRegisterSender (vector `badge`): an entry in `t`'s sender table. Returns (the
/// handle the invoked cap keeps, the entry index).
pub fn register_sender(ntfn: u64, badge: u64, t: &mut Tcb) -> Result<(u64, usize), Error> {
    if badge > MAX_VECTOR as u64 {
        return Err(Error::RangeError { min: 0, max: MAX_VECTOR as u64 });
    }
    let mut new_table = false;
    let id = match t.uintr.table.checked_sub(1) {
        Some(id) => id,
        // Sender tables are a fixed pool too: a first entry needs the grant.
        None if t.uintr_grants & abi::uintr::GRANT_SEND as u8 == 0 => return Err(Error::IllegalOperation),
        None => {
            new_table = true;
            sender::alloc_table(t).ok_or(Error::NotEnoughMemory { available: 0 })?
        }
    };
    let slot = at::<Notification>(ntfn).uslot.checked_sub(1);
    let Some(r) = sender::alloc_entry(id, ntfn, slot, badge) else {
        if new_table {
            sender::release(id as usize);
        }
        return Err(Error::NotEnoughMemory { available: 0 });
    };
    if new_table {
        t.uintr.table = id + 1;
        reload(t);
    }
    Ok(r)
}

/// A cap was deleted: a registered sender cap frees its entry.
pub fn cap_deleted(cap: &caps::Cap) {
    if let caps::Cap::Notification { uintr, .. } = *cap {
        if uintr != 0 {
            if let Some(owner) = sender::free_entry(uintr) {
                // SAFETY: a table's owner is live (tcb_destroyed releases its table first).
                let t = unsafe { &mut *owner };
                t.uintr.table = 0;
                reload(t);
            }
        }
    }
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
    sender::retarget(ntfn, None);
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

/// UintrControl_Grant: set what user-interrupt hardware a thread may hold; what it holds
/// under a withdrawn grant is freed at once (its receiver slot, its sender table).
pub fn invoke_control(me: &mut Tcb, m: &ipc::Msg) -> crate::object::InvResult {
    if m.label != abi::label::UINTR_CONTROL_GRANT {
        return Err(Error::IllegalOperation);
    }
    m.need(1, 1)?;
    let caps::Cap::Tcb { obj } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
    let grants = m.mr(me, 0);
    let all = abi::uintr::GRANT_RECEIVE | abi::uintr::GRANT_SEND;
    if grants & !all != 0 {
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
    if grants & abi::uintr::GRANT_SEND == 0 {
        if let Some(id) = t.uintr.table.checked_sub(1) {
            // The entries' caps keep handles whose table is gone: harmless (sender.rs).
            sender::release(id as usize);
            t.uintr.table = 0;
            drain_sends();
            reload(t);
        }
    }
    Ok(0)
}

/// Thread `t` is being destroyed (already suspended): its table goes; no hart may keep it.
pub fn tcb_destroyed(t: &mut Tcb) {
    release(t);
    if let Some(id) = t.uintr.table.checked_sub(1) {
        sender::release(id as usize);
        t.uintr.table = 0;
    }
    switch::forget(t);
}

