//! The primitives on the real executor: task priorities order waiters, the ceiling keeps a
//! middle-priority task from delaying a mutex holder, releases come from other threads.
use super::*;
use crate::task::{yield_now, Executor, Handle, Park};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Condvar as StdCondvar, Mutex as StdMutex};

#[derive(Default)]
struct CondPark {
    token: StdMutex<bool>,
    cv: StdCondvar,
}

impl Park for CondPark {
    fn park(&self) {
        let mut t = self.token.lock().unwrap();
        while !*t {
            t = self.cv.wait(t).unwrap();
        }
        *t = false;
    }
    fn unpark_from_irq(&self) {
        *self.token.lock().unwrap() = true;
        self.cv.notify_one();
    }
}

fn runtime() -> Handle<8, 512> {
    let ex: &'static Executor<8, 512> = Box::leak(Box::new(Executor::new()));
    ex.claim(Box::leak(Box::<CondPark>::default())).unwrap()
}

type Log = Rc<RefCell<Vec<&'static str>>>;

/// A low-priority task holds the mutex across an await while a high one waits for it and a
/// middle one is ready: the order the three finish in.
fn inversion_scenario(m: &'static Mutex<()>) -> Vec<&'static str> {
    let rt = runtime();
    let log: Log = Rc::default();
    let l = log.clone();
    let low = rt
        .spawn(1, async move {
            let g = m.lock().await;
            l.borrow_mut().push("low locked");
            let lh = l.clone();
            rt.spawn(5, async move { lh.borrow_mut().push("middle ran") }).unwrap().detach();
            let lh = l.clone();
            rt.spawn(9, async move {
                let _g = m.lock().await;
                lh.borrow_mut().push("high locked");
            })
            .unwrap()
            .detach();
            yield_now().await; // holds the lock across an await
            drop(g);
            l.borrow_mut().push("low unlocked");
        })
        .unwrap();
    rt.block_on(low);
    rt.run_ready();
    let out = log.borrow().clone();
    out
}

#[test]
fn ceiling_bounds_priority_inversion() {
    static CEILED: Mutex<()> = Mutex::with_ceiling(9, ());
    static PLAIN: Mutex<()> = Mutex::new(());
    assert_eq!(inversion_scenario(&CEILED), ["low locked", "low unlocked", "high locked", "middle ran"]);
    // Without the ceiling the middle task runs while the high one waits: the inversion.
    assert_eq!(inversion_scenario(&PLAIN), ["low locked", "middle ran", "low unlocked", "high locked"]);
}

#[test]
fn waiters_queue_by_task_priority_released_from_another_thread() {
    static SEM: Semaphore = Semaphore::new(0);
    let rt = runtime();
    let log: Log = Rc::default();
    let mut handles = vec![];
    for (name, prio) in [("p3", 3), ("p7", 7), ("p3b", 3)] {
        let l = log.clone();
        handles.push(
            rt.spawn(prio, async move {
                SEM.acquire().await;
                l.borrow_mut().push(name);
            })
            .unwrap(),
        );
    }
    rt.run_ready(); // all three queued
    let releaser = std::thread::spawn(|| (0..3).for_each(|_| SEM.release()));
    for h in handles {
        rt.block_on(h);
    }
    releaser.join().unwrap();
    assert_eq!(*log.borrow(), ["p7", "p3", "p3b"]);
}
