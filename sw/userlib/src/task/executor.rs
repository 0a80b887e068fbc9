//! The executor: N task slots of S bytes each in one (normally `static`) object, claimed by the
//! thread that runs it. Each turn it moves woken tasks from the lock-free inbox to the
//! per-priority run queue, then polls the oldest task of the highest priority; with nothing to
//! run it parks through the program's [`Park`] hook (a U-notification Wait on the target).
use super::header::SCHEDULED;
use super::join::JoinHandle;
use super::park::Park;
use super::runqueue::RunQueue;
use super::shared::{Shared, NIL};
use super::slot::{Slot, Status};
use core::cell::{Cell, UnsafeCell};
use core::future::Future;
use core::marker::PhantomData;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use core::task::{Context, Poll};

/// Why a task could not be spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnError {
    /// All N slots hold tasks (or completed tasks whose handles are still alive).
    NoSlot,
    /// The future or its output is bigger than a slot's S bytes, or needs more than
    /// 16-byte alignment.
    TooBig,
}

/// A task's priority: 0 (lowest) to 255 (highest), see [`super::PRIORITIES`].
pub type Priority = u8;

/// Everything the thread that runs the executor owns: the run queue and the slot allocator.
struct Local {
    runq: RunQueue,
    /// Slots below this index have been handed out at least once.
    fresh: u32,
}

/// An executor with `N` task slots of `S` bytes of future storage each. Build it in a `static`
/// with [`Executor::new`], then [`Executor::claim`] it on the thread that will run it.
///
/// Storage is fixed because userlib has no heap: a future lives in place in its slot (which
/// also pins it), a spawn whose future does not fit gets [`SpawnError::TooBig`], and slots are
/// recycled through a lock-free free list once the task, its handle and its wakers are gone.
pub struct Executor<const N: usize, const S: usize> {
    shared: Shared,
    claimed: AtomicBool,
    local: UnsafeCell<Local>,
    /// A `block_on`/`run_ready` is in progress (catches a nested one). Claiming thread only.
    busy: Cell<bool>,
    slots: [Slot<S>; N],
}

// SAFETY: `shared` and the slot headers are built for concurrent use; `local` and the rest of
// the slots are used only through the claimed, !Send `Handle` (or the !Send JoinHandles it
// makes), i.e. by one thread.
unsafe impl<const N: usize, const S: usize> Sync for Executor<N, S> {}

impl<const N: usize, const S: usize> Executor<N, S> {
    pub const fn new() -> Self {
        assert!(N < NIL as usize, "too many slots");
        Executor {
            shared: Shared::new(),
            claimed: AtomicBool::new(false),
            local: UnsafeCell::new(Local { runq: RunQueue::new(), fresh: 0 }),
            busy: Cell::new(false),
            slots: [const { Slot::new() }; N],
        }
    }

    /// Bind the executor to the calling thread, with `park` as its way to wait. `None` if it
    /// was claimed before: one thread runs an executor, for good.
    pub fn claim(&'static self, park: &'static dyn Park) -> Option<Handle<N, S>> {
        if self.claimed.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: first and only claim: no task and no waker exists yet.
        unsafe { self.shared.set_park(park) };
        Some(Handle { ex: self, _not_send: PhantomData })
    }

    fn link(&self, i: u32) -> &AtomicU32 {
        &self.slots[i as usize].core.hdr.next
    }
}

impl<const N: usize, const S: usize> Default for Executor<N, S> {
    fn default() -> Self {
        Self::new()
    }
}

/// The claiming thread's access to an executor: spawn, run, block_on. `Copy`, so tasks can keep
/// one to spawn more tasks; not `Send`, which is what keeps the executor single-threaded.
pub struct Handle<const N: usize, const S: usize> {
    ex: &'static Executor<N, S>,
    _not_send: PhantomData<*const ()>,
}

impl<const N: usize, const S: usize> Clone for Handle<N, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<const N: usize, const S: usize> Copy for Handle<N, S> {}

impl<const N: usize, const S: usize> Handle<N, S> {
    /// Start `fut` as a task of priority `prio`. It runs when the executor next runs
    /// (`block_on`, `run`, `run_ready`); its output comes through the [`JoinHandle`], and
    /// dropping the handle cancels it ([`JoinHandle::detach`] lets it run on alone).
    pub fn spawn<F>(&self, prio: Priority, fut: F) -> Result<JoinHandle<F::Output>, SpawnError>
    where
        F: Future + 'static,
    {
        self.spawn_with(prio, || fut)
    }

    /// [`Handle::spawn`] of the future `make` builds, built right in its slot (no copy of a
    /// large future through the stack). `make` runs only once a slot is taken: on an error it
    /// has not run.
    #[inline(always)]
    pub fn spawn_with<F, M>(&self, prio: Priority, make: M) -> Result<JoinHandle<F::Output>, SpawnError>
    where
        F: Future + 'static,
        M: FnOnce() -> F,
    {
        if !Slot::<S>::fits::<F>() {
            return Err(SpawnError::TooBig);
        }
        let idx = self.alloc().ok_or(SpawnError::NoSlot)?;
        let slot = &self.ex.slots[idx as usize];
        slot.fill_with(make, prio);
        slot.core.hdr.start(idx, &self.ex.shared);
        Ok(JoinHandle::new(&slot.core, slot.storage_ptr()))
    }

    fn alloc(&self) -> Option<u32> {
        let ex = self.ex;
        if let Some(i) = ex.shared.pop_free(|i| ex.slots[i as usize].core.hdr.free_next.load(Ordering::Relaxed)) {
            return Some(i);
        }
        // SAFETY: Local belongs to this (the claiming) thread; the borrow ends here.
        let local = unsafe { &mut *ex.local.get() };
        (local.fresh < N as u32).then(|| {
            local.fresh += 1;
            local.fresh - 1
        })
    }

    /// Run `fut` to completion on this thread, running the executor's tasks whenever it is not
    /// ready (it is polled first whenever it was woken), and parking when nothing can run.
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        let _turn = Turn::enter(self.ex);
        let mut fut = pin!(fut);
        let waker = super::waker::root_waker(&self.ex.shared);
        let mut cx = Context::from_waker(&waker);
        self.ex.shared.root_woken.store(true, Ordering::Relaxed);
        let mut busy = 0u32;
        loop {
            // A plain load first: the common busy turn writes nothing.
            let root = &self.ex.shared.root_woken;
            if root.load(Ordering::Relaxed) && root.swap(false, Ordering::Acquire) {
                if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                    self.ex.shared.flush();
                    return out;
                }
            }
            if !self.run_one() {
                busy = 0;
                self.ex.shared.sleep();
            } else {
                busy += 1;
                if busy == super::park::BUSY_POLL_INTERVAL {
                    // Tasks keep the executor from idling: let the hook look at its sources.
                    busy = 0;
                    self.ex.shared.poll_busy();
                }
            }
        }
    }

    /// Run tasks forever (a server's main loop).
    pub fn run(&self) -> ! {
        self.block_on(core::future::pending::<()>());
        unreachable!()
    }

    /// Run tasks until none is ready, without parking; returns how many polls that took (tests
    /// and cooperative callers that do their own waiting).
    pub fn run_ready(&self) -> usize {
        let _turn = Turn::enter(self.ex);
        let mut polls = 0;
        while self.run_one() {
            polls += 1;
        }
        polls
    }

    /// One scheduling step: queue the woken, then poll the best ready task. False if none.
    fn run_one(&self) -> bool {
        let ex = self.ex;
        let idx = {
            // SAFETY: Local belongs to this thread, and no task can reach it during this block.
            let local = unsafe { &mut *ex.local.get() };
            self.drain_inbox(&mut local.runq);
            match local.runq.pop(|i| ex.link(i)) {
                Some(i) => i,
                None => return false,
            }
        };
        let slot = &ex.slots[idx as usize];
        // From here the queue's reference is ours. Clear the bit first, so a wake during the
        // poll queues the task again (at the back of its priority: round-robin).
        slot.core.hdr.state.fetch_and(!SCHEDULED, Ordering::AcqRel);
        if slot.core.status.get() == Status::Pending {
            slot.core.run(slot.storage_ptr());
        }
        slot.core.hdr.release_ref();
        true
    }

    /// Move the inbox (newest first) to the run queue in wake order.
    fn drain_inbox(&self, runq: &mut RunQueue) {
        let ex = self.ex;
        let mut newest_first = ex.shared.take_inbox();
        let mut oldest_first = NIL;
        while newest_first != NIL {
            let next = ex.link(newest_first).load(Ordering::Relaxed);
            ex.link(newest_first).store(oldest_first, Ordering::Relaxed);
            oldest_first = newest_first;
            newest_first = next;
        }
        self.enqueue(runq, oldest_first);
        // Then those this thread woke itself (`wake_local`), already oldest first.
        self.enqueue(runq, ex.shared.take_local());
    }

    /// Append a list of woken slots (linked through `Header::next`) to the run queue.
    fn enqueue(&self, runq: &mut RunQueue, mut idx: u32) {
        let ex = self.ex;
        while idx != NIL {
            let next = ex.link(idx).load(Ordering::Relaxed);
            let prio = ex.slots[idx as usize].core.prio.get();
            runq.push(idx, prio, |i| ex.link(i));
            idx = next;
        }
    }
}

/// Marks a `block_on`/`run_ready` in progress: calling one from inside a task would poll tasks
/// re-entrantly (and possibly the caller itself), so it panics instead.
struct Turn<'a>(&'a Cell<bool>);

impl<'a> Turn<'a> {
    fn enter<const N: usize, const S: usize>(ex: &'a Executor<N, S>) -> Turn<'a> {
        assert!(!ex.busy.replace(true), "block_on/run_ready called from inside a task");
        Turn(&ex.busy)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}
