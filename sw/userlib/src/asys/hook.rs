//! Which thread uses which client: a small table keyed by the thread's IPC-buffer address
//! (unique per thread, and what `tp` holds), so the ordinary API finds its thread's client.
use super::Submit;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};

const THREADS: usize = 16;

struct Table {
    keys: [AtomicUsize; THREADS],
    clients: UnsafeCell<[Option<&'static dyn Submit>; THREADS]>,
}

// SAFETY: an entry's client is written by its thread before it publishes the key (Release)
// and read only by that thread (key match), or after the key is withdrawn by nobody.
unsafe impl Sync for Table {}

static TABLE: Table =
    Table { keys: [const { AtomicUsize::new(0) }; THREADS], clients: UnsafeCell::new([None; THREADS]) };

fn me() -> usize {
    crate::ipc::ipc_buffer_addr()
}

/// Route the calling thread's async-capable invocations through `c`. False if the table is
/// full or the thread has no IPC buffer address.
pub fn install(c: &'static dyn Submit) -> bool {
    let key = me();
    if key == 0 {
        return false;
    }
    uninstall();
    for (i, k) in TABLE.keys.iter().enumerate() {
        if k.compare_exchange(0, usize::MAX, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            // SAFETY: the slot is ours (reserved with usize::MAX).
            unsafe { (*TABLE.clients.get())[i] = Some(c) };
            k.store(key, Ordering::Release);
            return true;
        }
    }
    false
}

/// Back to sync calls on this thread.
pub fn uninstall() {
    let key = me();
    for (i, k) in TABLE.keys.iter().enumerate() {
        if k.load(Ordering::Acquire) == key {
            // SAFETY: our own entry.
            unsafe { (*TABLE.clients.get())[i] = None };
            k.store(0, Ordering::Release);
        }
    }
}

/// The calling thread's client, if it installed one.
pub fn current() -> Option<&'static dyn Submit> {
    let key = me();
    if key == 0 {
        return None;
    }
    let i = TABLE.keys.iter().position(|k| k.load(Ordering::Acquire) == key)?;
    // SAFETY: our own entry, written before its key was published.
    unsafe { (*TABLE.clients.get())[i] }
}
