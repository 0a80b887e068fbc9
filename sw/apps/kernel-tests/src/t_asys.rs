//! Async system calls (`userlib::asys`, kernel `asyscall`, issue #18): the root task registers
//! a syscall buffer (two frames of its own) and its U-notification, and its calls run in its
//! kernel handler on another hart or inside WakeSyscallHandler. Checked: async and sync agree
//! (GetAddress, every error path), the effects are real (map then read/write, unmap then a
//! fault, bind/unbind seen by both objects), hostile ring contents and registrations are
//! refused or close the buffer without harm, a buffer whose frame is revoked (also by a request
//! of its own) writes nothing more, 10,000 register/unregister cycles and thread deletion leave
//! nothing behind, both wake paths (an idle hart, no idle hart) run the requests, the hart
//! mask of TCB_SetSyscallHandlerHarts decides where they run (bad masks refused), and each
//! hart's idle time reads right.
use crate::env::{sget, sset, wall_cycles, Env, Fail, TResult, CNODE, PAGE, ROOT_DEPTH, ROOT_TCB, VSPACE};
use abi::{asys as a, error as e, label as l, object as o, stat};
use aring::{Consumer, Item, Producer, RingMem};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::asys::{self, call_blocking, Client, Completion, Request, SysBuf};
use userlib::chan::ThreadPark;
use userlib::invoke::{invoke_sync, rights};
use userlib::task::Executor;
use userlib::{cnode, print, syscall, tcb, uintr, untyped, vspace};

/// Ring capacity (a 4 KiB frame per ring) and the client's table.
pub(crate) const CAP: usize = 32;
/// The completion vector on the root's U-notification.
const VEC: usize = 60;

static CLIENTS: [Client<CAP>; 6] = [const { Client::new() }; 6];
static NEXT_CLIENT: AtomicUsize = AtomicUsize::new(0);

fn stat(which: usize) -> usize {
    syscall::debug_stat(which)
}

/// The root as receiver of a fresh U-notification, and a fresh buffer (not registered).
struct Setup {
    ntfn: usize,
    buf: SysBuf,
}

pub(crate) fn buffer(env: &mut Env) -> Result<SysBuf, Fail> {
    let va = env.va(2);
    let req = env.new_page_at(VSPACE, va)?.cptr;
    let rep = env.new_page_at(VSPACE, va + PAGE)?.cptr;
    let buf = SysBuf { req_frame: req, req_vaddr: va, rep_frame: rep, rep_vaddr: va + PAGE, capacity: CAP };
    ensure!(buf.init().is_some(), "ring init");
    Ok(buf)
}

fn setup(env: &mut Env) -> Result<Setup, Fail> {
    let ntfn = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(ROOT_TCB, ntfn));
    ok!(uintr::register_receiver(ntfn));
    Ok(Setup { ntfn, buf: buffer(env)? })
}

/// The root's buffer registered and driven raw ([`Raw`]), for tests elsewhere (inside
/// [`with_teardown`]).
pub(crate) fn registered_raw(env: &mut Env) -> Result<Raw, Fail> {
    let s = setup(env)?;
    ok!(s.buf.register(ROOT_TCB, VEC));
    Ok(raw(&s.buf))
}

/// Register and attach a client, installed as the root's hook.
fn attach(s: &Setup, park: Option<&ThreadPark>) -> Result<&'static Client<CAP>, Fail> {
    ok!(s.buf.register(ROOT_TCB, VEC));
    let c = &CLIENTS[NEXT_CLIENT.fetch_add(1, SeqCst)];
    ensure!(c.attach(&s.buf, park).is_some(), "client attach");
    ensure!(asys::install(c), "install the hook");
    Ok(c)
}

/// Undo whatever a test left: hook, registration, the root's binding.
fn teardown() {
    asys::uninstall();
    let _ = tcb::set_syscall_handler_harts(ROOT_TCB, a::ANY_HART);
    let _ = asys::unregister(ROOT_TCB);
    let _ = tcb::unbind_notification(ROOT_TCB);
}

fn with_teardown(env: &mut Env, test: fn(&mut Env) -> TResult) -> TResult {
    let base = stat(stat::ASYS_HANDLERS);
    let r = test(env);
    teardown();
    r?;
    ensure_eq!(stat(stat::ASYS_HANDLERS), base, "registered handlers after the test");
    Ok(())
}

fn sync_completion(r: &Request) -> Completion {
    match r.sync() {
        Ok(rep) => Completion {
            code: 0,
            len: rep.info.length as u32,
            words: core::array::from_fn(|i| rep.regs.get(i).map_or(0, |&v| v as u64)),
        },
        Err(err) => Completion {
            code: err.code as u32,
            len: 0,
            words: core::array::from_fn(|i| err.mrs.get(i).map_or(0, |&v| v as u64)),
        },
    }
}

// ---------------------------------------------------------------------------------------------

/// GetAddress both ways, map then read/write, unmap then a fault, bind/unbind seen by both
/// objects, debug output: all through the ordinary API with the hook installed.
pub fn functional(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let s = setup(env)?;
        let c = attach(&s, None)?;
        let (done0, req0) = (c.completed.load(SeqCst), stat(stat::ASYS_REQUESTS));
        // The env's own allocations (Retype) go async too from here on.
        let f = env.alloc(o::PAGE_4K, 0)?;
        let pa = ok!(vspace::page_get_address(f.cptr));
        ensure_eq!(pa, f.paddr, "async GetAddress = where the Untyped put it");
        let sync_pa = ok!(invoke_sync(f.cptr, l::RISCV_PAGE_GET_ADDRESS, &[], &[])).mr(0);
        ensure_eq!(pa, sync_pa, "async GetAddress = sync GetAddress");
        // A page table and the frame mapped through the ring, then used.
        let x = env.va_region(1);
        let pt = env.alloc_cap(o::PAGE_TABLE)?;
        ok!(vspace::page_table_map(pt, VSPACE, x, 0));
        ok!(vspace::page_map(f.cptr, VSPACE, x, rights::READ_WRITE, 0));
        // SAFETY: mapped just above.
        unsafe {
            core::ptr::write_volatile(x as *mut usize, 0xa5a5_1234);
            ensure_eq!(core::ptr::read_volatile(x as *const usize), 0xa5a5_1234, "read back through the async mapping");
        }
        // Unmapped through the ring: a thread reading it now faults.
        ok!(vspace::page_unmap(f.cptr));
        let (ep, fb) = crate::t_fault::fault_ep(env)?;
        sset(0, 0);
        env.spawn_cfg(
            crate::t_fault::load_child as *const () as usize,
            x,
            crate::t_fault::cfg_with(fb, env.bi.node_id),
        )?;
        let (_, info, mrs) = syscall::recv(ep);
        ensure_eq!(info.label, abi::fault::VM_FAULT, "a load after the async unmap faults");
        ensure_eq!(mrs[1], x, "fault address");
        env.stop_helpers();
        // Bind/unbind: both the TCB and the notification see it.
        let (t1, t2) = (env.alloc_cap(o::TCB)?, env.alloc_cap(o::TCB)?);
        let (n1, n2) = (env.alloc_cap(o::NOTIFICATION)?, env.alloc_cap(o::NOTIFICATION)?);
        ok!(tcb::bind_notification(t1, n1));
        expect_err!(tcb::bind_notification(t2, n1), e::ILLEGAL_OPERATION);
        expect_err!(tcb::bind_notification(t1, n2), e::ILLEGAL_OPERATION);
        ok!(tcb::unbind_notification(t1));
        expect_err!(tcb::unbind_notification(t1), e::ILLEGAL_OPERATION);
        ok!(tcb::bind_notification(t2, n1));
        ok!(tcb::bind_notification(t1, n2));
        // Debug output through the ring.
        let con = userlib::debug::console();
        let _ = asys::call_blocking(c, &Request::put_char(con, b'['));
        let w = asys::call_blocking(c, &Request::put_string(con, b"async put_string")).into_result();
        let _ = asys::call_blocking(c, &Request::put_char(con, b']'));
        ensure_eq!(ok!(w).mr(0), 16, "bytes written");
        print!(" ");
        // Each of those went through the ring (none fell back to sync).
        let calls = c.completed.load(SeqCst) - done0;
        ensure!(calls >= 20, "only {} calls completed through the ring", calls);
        ensure!(stat(stat::ASYS_REQUESTS) - req0 >= calls, "kernel ran fewer requests than completed");
        ensure_eq!(c.in_flight(), 0, "calls left in the table");
        let _ = s.ntfn;
        Ok(())
    })
}

/// Every async call's error paths: the same bad invocation async and sync gives the same
/// error and details; calls that cannot be async are refused with NOT_ASYNC; a cptr that does
/// not resolve is an error reply (a cap fault on the sync path).
pub fn error_paths(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let s = setup(env)?;
        let c = attach(&s, None)?;
        asys::uninstall();
        let f = env.alloc_cap(o::PAGE_4K)?;
        let ut = env.alloc(o::UNTYPED, 12)?.cptr;
        let t = env.alloc_cap(o::TCB)?;
        let ep = env.alloc_cap(o::ENDPOINT)?;
        let pt = env.alloc_cap(o::PAGE_TABLE)?;
        let full = env.alloc_cap(o::NOTIFICATION)?;
        let empty = env.slot()?;
        let x = env.va_region(1);
        let g = env.alloc_cap(o::PAGE_4K)?;
        env.map_frame(g, VSPACE, x, rights::READ_WRITE)?;
        let inv = |cap, lbl, mrs: &[usize], caps: &[usize]| Request::invocation(cap, lbl, mrs, caps).unwrap();
        let cases = [
            inv(CNODE, l::RISCV_PAGE_GET_ADDRESS, &[], &[]),
            inv(f, l::RISCV_PAGE_MAP, &[x + 8, rights::READ_WRITE, 0], &[VSPACE]),
            inv(f, l::RISCV_PAGE_MAP, &[x + PAGE, rights::READ_WRITE, 0], &[CNODE]),
            inv(f, l::RISCV_PAGE_MAP, &[x + PAGE, rights::READ_WRITE, 0], &[]),
            inv(f, l::RISCV_PAGE_MAP, &[1 << 40, rights::READ_WRITE, 0], &[VSPACE]),
            inv(f, l::RISCV_PAGE_MAP, &[x, rights::READ_WRITE, 0], &[VSPACE]),
            inv(f, l::RISCV_PAGE_MAP, &[x + PAGE, 0, 1], &[VSPACE]),
            inv(pt, l::RISCV_PAGE_TABLE_MAP, &[x, 0], &[VSPACE]),
            inv(pt, l::RISCV_PAGE_TABLE_MAP, &[x], &[VSPACE]),
            inv(VSPACE, l::RISCV_PAGE_TABLE_UNMAP, &[], &[]),
            inv(ut, l::UNTYPED_RETYPE, &[99, 0, 0, 0, empty, 1], &[CNODE]),
            inv(ut, l::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, empty, 0], &[CNODE]),
            inv(ut, l::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, full, 1], &[CNODE]),
            inv(ut, l::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, 1 << 20, 1], &[CNODE]),
            inv(ut, l::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, empty], &[CNODE]),
            inv(CNODE, l::CNODE_COPY, &[full, ROOT_DEPTH, f, ROOT_DEPTH, rights::ALL], &[CNODE]),
            inv(CNODE, l::CNODE_COPY, &[empty, ROOT_DEPTH, empty, ROOT_DEPTH, rights::ALL], &[CNODE]),
            inv(CNODE, l::CNODE_COPY, &[empty, 0, f, ROOT_DEPTH, rights::ALL], &[CNODE]),
            inv(CNODE, l::CNODE_MINT, &[full, ROOT_DEPTH, f, ROOT_DEPTH, rights::ALL, 5], &[CNODE]),
            inv(CNODE, l::CNODE_MINT, &[empty, ROOT_DEPTH, ut, 65, rights::ALL, 5], &[CNODE]),
            inv(CNODE, l::CNODE_MOVE, &[full, ROOT_DEPTH, f, ROOT_DEPTH], &[CNODE]),
            inv(CNODE, l::CNODE_DELETE, &[f, 65], &[]),
            inv(CNODE, l::CNODE_REVOKE, &[f, 0], &[]),
            inv(CNODE, l::CNODE_REVOKE, &[f], &[]),
            inv(CNODE, l::CNODE_CANCEL_BADGED_SENDS, &[f, ROOT_DEPTH], &[]),
            inv(t, l::TCB_UNBIND_NOTIFICATION, &[], &[]),
            inv(t, l::TCB_BIND_NOTIFICATION, &[], &[ep]),
            inv(t, l::TCB_BIND_NOTIFICATION, &[], &[]),
            inv(t, l::TCB_BIND_NOTIFICATION, &[], &[empty]),
            inv(f, l::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, empty, 1], &[CNODE]),
        ];
        for (i, r) in cases.iter().enumerate() {
            let got = call_blocking(c, r);
            let want = sync_completion(r);
            ensure!(want.code != 0, "case {}: the sync call succeeded", i);
            ensure!(got.code == want.code, "case {}: async error {} vs sync {}", i, got.code, want.code);
            let n = got.len as usize;
            ensure!(
                got.words[..n.min(4)] == want.words[..n.min(4)],
                "case {}: details {:?} vs {:?}",
                i,
                &got.words[..n],
                &want.words[..n]
            );
        }
        // Not async: refused, and nothing happened (the TCB was not resumed, nor the endpoint
        // sent to).
        for r in [
            inv(t, l::TCB_RESUME, &[], &[]),
            inv(t, l::TCB_SET_PRIORITY, &[1], &[ROOT_TCB]),
            inv(ep, l::RISCV_PAGE_MAP, &[0, 0, 0], &[VSPACE]),
        ] {
            ensure_eq!(call_blocking(c, &r).code, a::NOT_ASYNC, "a call that cannot be async");
        }
        // Unresolvable cptrs and a cap count the request does not carry.
        // An empty slot is InvalidCapability both ways (as in seL4).
        let q = inv(empty, l::RISCV_PAGE_UNMAP, &[], &[]);
        ensure_eq!(call_blocking(c, &q).code, e::INVALID_CAPABILITY, "empty invoked slot");
        ensure_eq!(sync_completion(&q).code, e::INVALID_CAPABILITY, "empty invoked slot, sync");
        let got = call_blocking(c, &inv(1 << 62, l::RISCV_PAGE_UNMAP, &[], &[]));
        ensure_eq!(got.code, e::FAILED_LOOKUP, "cptr far out");
        ensure_eq!(
            call_blocking(c, &Request::raw(l::RISCV_PAGE_UNMAP as u32, 2, &[f as u64, 4])).code,
            e::RANGE_ERROR,
            "4 extra caps"
        );
        ensure_eq!(
            call_blocking(c, &Request::raw(l::RISCV_PAGE_UNMAP as u32, 3, &[f as u64, 3, f as u64])).code,
            e::TRUNCATED_MESSAGE,
            "3 caps claimed, 1 given"
        );
        ensure_eq!(
            call_blocking(c, &Request::raw(l::RISCV_PAGE_UNMAP as u32, 1, &[f as u64])).code,
            e::TRUNCATED_MESSAGE,
            "no cap count"
        );
        ensure_eq!(
            call_blocking(c, &Request::raw(a::OP_PUT_CHAR, 0, &[])).code,
            e::TRUNCATED_MESSAGE,
            "PutChar without a byte"
        );
        // The objects the failed calls named are as they were.
        ensure!(crate::env::identify(empty).is_none(), "the empty slot stayed empty");
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Raw access to a registered buffer: what a hostile thread can write.

pub(crate) struct Raw {
    pub(crate) req: Producer,
    pub(crate) rep: Consumer,
}

pub(crate) fn raw(buf: &SysBuf) -> Raw {
    // SAFETY: both frames are mapped at these addresses for the rest of the suite.
    unsafe {
        Raw {
            req: RingMem::attach(buf.req_vaddr as *mut u8, buf.capacity).unwrap().producer(),
            rep: RingMem::attach(buf.rep_vaddr as *mut u8, buf.capacity).unwrap().consumer(),
        }
    }
}

impl Raw {
    pub(crate) fn push(&mut self, r: &Request, id: u64) -> TResult {
        let items = r.to_items(id);
        for it in &items[..r.items()] {
            if ok!(self.req.push(it).map_err(|_| "ring full")) == aring::Notify::Signal {
                let _ = asys::wake();
            }
        }
        Ok(())
    }

    /// The next reply, waking the handler if needed; None if none comes within `spins`.
    pub(crate) fn reply(&mut self, spins: usize) -> Result<Option<Item>, Fail> {
        for i in 0..spins {
            if let Some(p) = ok!(self.rep.pop().map_err(|_| "reply ring broken")) {
                return Ok(Some(p.item));
            }
            if i % 64 == 0 {
                let _ = asys::wake();
            }
            syscall::yield_now();
        }
        Ok(None)
    }
}

/// Header word of a ring (0 head, 8 tail: each on its own 64-byte line).
fn ring_word(va: usize, line: usize) -> &'static core::sync::atomic::AtomicU64 {
    // SAFETY: a mapped ring header.
    unsafe { &*((va + 64 * line) as *const core::sync::atomic::AtomicU64) }
}

/// Hostile rings and registrations: bad lengths and caps get error replies; a half-sent
/// request waits; impossible indices close the buffer with a fault; a frame revoked before a
/// wake, or by a request of the buffer itself, ends the buffer with nothing more written.
pub fn hostile_ring(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let s = setup(env)?;
        let buf = s.buf;
        // Registration errors.
        let reg = |rq: usize, rqc: usize, rp: usize, rpc: usize, v: usize, caps: [usize; 2]| {
            userlib::invoke::invoke0(ROOT_TCB, l::TCB_REGISTER_SYSCALL_BUFFER, &[rq, rqc, rp, rpc, v], &caps)
        };
        let fr = [buf.req_frame, buf.rep_frame];
        expect_err!(reg(0, 3, 0, CAP, VEC, fr), e::RANGE_ERROR);
        expect_err!(reg(0, CAP, 0, 8192, VEC, fr), e::RANGE_ERROR);
        expect_err!(reg(8, CAP, 0, CAP, VEC, fr), e::ALIGNMENT_ERROR);
        expect_err!(reg(2048, CAP, 0, CAP, VEC, fr), e::INVALID_ARGUMENT);
        expect_err!(reg(0, CAP, usize::MAX - 63, CAP, VEC, fr), e::INVALID_ARGUMENT);
        expect_err!(reg(0, CAP, 0, CAP, 64, fr), e::RANGE_ERROR);
        expect_err!(reg(0, 8, 512, 8, VEC, [buf.req_frame, buf.req_frame]), e::INVALID_ARGUMENT);
        expect_any_err!(reg(0, CAP, 0, CAP, VEC, [CNODE, buf.rep_frame]), e::INVALID_CAPABILITY);
        let ro = env.mint(buf.rep_frame, rights::READ, 0)?;
        expect_err!(reg(0, CAP, 0, CAP, VEC, [buf.req_frame, ro]), e::INVALID_CAPABILITY);
        expect_err!(
            userlib::invoke::invoke0(
                ROOT_TCB,
                l::TCB_REGISTER_SYSCALL_BUFFER,
                &[0, CAP, 0, CAP, VEC],
                &[buf.req_frame]
            ),
            e::TRUNCATED_MESSAGE
        );
        // A thread without a U-notification receiver slot cannot have one.
        let t = env.alloc_cap(o::TCB)?;
        expect_err!(
            userlib::invoke::invoke0(t, l::TCB_REGISTER_SYSCALL_BUFFER, &[0, CAP, 0, CAP, VEC], &fr),
            e::ILLEGAL_OPERATION
        );
        expect_err!(asys::unregister(t), e::ILLEGAL_OPERATION);
        // Two rings in one frame are fine when they do not overlap.
        ok!(reg(0, 8, 1024, 8, VEC, [buf.rep_frame, buf.rep_frame]));
        ok!(asys::unregister(ROOT_TCB));
        ensure!(buf.init().is_some(), "ring re-init");

        let faults0 = stat(stat::ASYS_FAULTS);
        let base = stat(stat::ASYS_HANDLERS);
        ok!(buf.register(ROOT_TCB, VEC));
        ensure_eq!(stat(stat::ASYS_HANDLERS), base + 1, "one more handler");
        let mut r = raw(&buf);
        let f = env.alloc_cap(o::PAGE_4K)?;
        // Lengths and caps the kernel must refuse item by item.
        let bad = [
            (Request::raw(l::RISCV_PAGE_GET_ADDRESS as u32, 15, &[f as u64, 0]), e::RANGE_ERROR),
            (Request::raw(l::RISCV_PAGE_GET_ADDRESS as u32, u32::MAX as usize, &[f as u64, 0]), e::RANGE_ERROR),
            (Request::raw(l::RISCV_PAGE_GET_ADDRESS as u32, 2, &[f as u64, u64::MAX]), e::RANGE_ERROR),
            (Request::raw(l::RISCV_PAGE_GET_ADDRESS as u32, 2, &[u64::MAX, 0]), e::FAILED_LOOKUP),
            (Request::raw(l::RISCV_PAGE_MAP as u32, 6, &[f as u64, 1, f as u64, 0x1000, 3, 0]), e::INVALID_CAPABILITY),
            (Request::raw(l::RISCV_PAGE_MAP as u32, 6, &[f as u64, 1, 1 << 40, 0x1000, 3, 0]), e::INVALID_CAPABILITY),
            (Request::raw(u32::MAX, 2, &[f as u64, 0]), a::NOT_ASYNC as usize),
        ];
        for (i, (q, want)) in bad.iter().enumerate() {
            r.push(q, 100 + i as u64)?;
            let Some(rep) = r.reply(100_000)? else {
                return Err(crate::env::fail(format_args!("case {}: no reply", i)));
            };
            ensure_eq!(rep.id, 100 + i as u64, "reply id");
            ensure_eq!(rep.label, *want, "error for a bad request");
        }
        // Half a two-item request: nothing happens until the second half is there.
        let q = Request::invocation(CNODE, l::CNODE_MINT, &[f, ROOT_DEPTH, f, ROOT_DEPTH, 0, 0], &[CNODE]).unwrap();
        let items = q.to_items(7);
        let _ = ok!(r.req.push(&items[0]).map_err(|_| "push"));
        let _ = asys::wake();
        ensure!(r.reply(200)?.is_none(), "a reply for half a request");
        let _ = ok!(r.req.push(&items[1]).map_err(|_| "push"));
        let rep = r.reply(100_000)?;
        ensure!(
            rep.is_some_and(|i| i.id == 7 && i.label as usize == e::DELETE_FIRST),
            "the whole request answered: {:?}",
            rep
        );
        // An impossible tail: the buffer is closed with a fault.
        let tail = ring_word(buf.req_vaddr, 1);
        tail.store(tail.load(SeqCst) + CAP as u64 + 5, SeqCst);
        let mut closed = false;
        for _ in 0..100_000 {
            if asys::wake() == Err(e::ILLEGAL_OPERATION) {
                closed = true;
                break;
            }
            syscall::yield_now();
        }
        ensure!(closed, "the broken buffer is still registered");
        ensure_eq!(stat(stat::ASYS_FAULTS), faults0 + 1, "ASYS_FAULTS");
        ensure_eq!(stat(stat::ASYS_HANDLERS), base, "handler gone");

        // A frame revoked before the wake: its buffer is closed, nothing written.
        let b2 = buffer(env)?;
        let (req_frame, rep_frame) = (b2.req_frame, b2.rep_frame);
        ok!(b2.register(ROOT_TCB, VEC));
        let mut r2 = raw(&b2);
        // Pushed without a wake (the handler sleeps through it).
        let [it, _] = Request::invocation(f, l::RISCV_PAGE_GET_ADDRESS, &[], &[]).unwrap().to_items(1);
        let _ = ok!(r2.req.push(&it).map_err(|_| "push"));
        ok!(cnode::revoke(CNODE, req_frame, ROOT_DEPTH));
        ensure_eq!(asys::wake().err().unwrap_or(0), e::ILLEGAL_OPERATION, "wake after the revoke");
        ensure_eq!(ring_word(b2.rep_vaddr, 1).load(SeqCst), 0, "reply tail after the revoke");
        ensure_eq!(stat(stat::ASYS_HANDLERS), base, "handler gone after the revoke");

        // Mid-flight: a request of the buffer revokes the reply ring's frame; the requests
        // behind it are not run and nothing is written any more.
        let b3 = buffer(env)?;
        ok!(b3.register(ROOT_TCB, VEC));
        let mut r3 = raw(&b3);
        let spare = env.slot()?;
        r3.push(&Request::invocation(CNODE, l::CNODE_REVOKE, &[b3.rep_frame, ROOT_DEPTH], &[]).unwrap(), 1)?;
        r3.push(
            &Request::invocation(CNODE, l::CNODE_COPY, &[spare, ROOT_DEPTH, f, ROOT_DEPTH, rights::ALL], &[CNODE])
                .unwrap(),
            2,
        )?;
        let mut gone = false;
        for _ in 0..100_000 {
            let _ = asys::wake();
            if stat(stat::ASYS_HANDLERS) == base {
                gone = true;
                break;
            }
            syscall::yield_now();
        }
        ensure!(gone, "the buffer survived the revocation of its reply frame");
        ensure_eq!(ring_word(b3.rep_vaddr, 1).load(SeqCst), 0, "replies written after the revoke");
        ensure!(crate::env::identify(spare).is_none(), "the request behind the revoke ran");
        let _ = (rep_frame, s.ntfn);
        Ok(())
    })
}

/// 10,000 register/unregister cycles of the root's buffer, and threads deleted (or their
/// Untyped revoked) with a buffer registered: handlers, object bytes and UINTC slots all back.
pub fn register_unregister_10000(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let s = setup(env)?;
        let ut = env.alloc(o::UNTYPED, 16)?.cptr;
        let sl = env.slots(2)?;
        let (h0, b0, u0) = (stat(stat::ASYS_HANDLERS), stat(stat::OBJECT_BYTES), stat(stat::UINTR_SLOTS_USED));
        for i in 0..10_000 {
            ok!(s.buf.register(ROOT_TCB, VEC));
            if i % 2500 == 0 {
                ensure_eq!(stat(stat::ASYS_HANDLERS), h0 + 1, "registered");
            }
            ok!(asys::unregister(ROOT_TCB));
        }
        ensure_eq!(stat(stat::ASYS_HANDLERS), h0, "handlers after 10,000 cycles");
        ensure_eq!(stat(stat::OBJECT_BYTES), b0, "object bytes after 10,000 cycles");
        // Other threads: the buffer goes with the thread.
        let (t, n) = (sl, sl + 1);
        for i in 0..200 {
            ok!(untyped::retype(ut, o::TCB, 0, CNODE, 0, 0, t, 1));
            ok!(untyped::retype(ut, o::NOTIFICATION, 0, CNODE, 0, 0, n, 1));
            ok!(uintr::grant(abi::init_cap::UINTR_CONTROL, t, abi::uintr::GRANT_RECEIVE));
            ok!(tcb::bind_notification(t, n));
            ok!(uintr::register_receiver(n));
            ok!(s.buf.register(t, VEC));
            ensure_eq!(stat(stat::ASYS_HANDLERS), h0 + 1, "the thread's handler");
            match i % 3 {
                0 => ok!(cnode::delete(CNODE, t, ROOT_DEPTH)),
                1 => ok!(cnode::revoke(CNODE, s.buf.req_frame, ROOT_DEPTH)),
                _ => {}
            }
            ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
            ensure_eq!(stat(stat::ASYS_HANDLERS), h0, "handler after the thread went");
        }
        ensure_eq!(stat(stat::OBJECT_BYTES), b0, "object bytes after the threads");
        ensure_eq!(stat(stat::UINTR_SLOTS_USED), u0, "UINTC slots after the threads");
        Ok(())
    })
}

extern "C" fn spinner(_: usize) -> ! {
    crate::env::SHARED[2].fetch_add(1, SeqCst);
    while sget(0) == 0 {
        core::hint::spin_loop();
    }
    crate::env::park()
}

/// The wake path: with idle harts the handler runs on one of them (remote wake); with every
/// other hart running a thread of our priority it runs inside the wake call (inline), and
/// both complete every request.
pub fn wake_paths(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let s = setup(env)?;
        let c = attach(&s, None)?;
        let f = env.alloc(o::PAGE_4K, 0)?;
        let harts = userlib::bootinfo::harts(env.bi);
        let get = || vspace::page_get_address(f.cptr);
        if harts > 1 {
            let remote = stat(stat::ASYS_WAKE_REMOTE);
            // 2 ms between calls: the handler stops polling after its idle window (40k cycles)
            // and sleeps, so calls need a wake however fast or loaded the host is.
            let gap = env.bi.timebase_hz as u64 / 500;
            for _ in 0..20 {
                let t = userlib::time::now();
                while userlib::time::now().wrapping_sub(t) < gap {
                    core::hint::spin_loop();
                }
                ensure_eq!(ok!(get()), f.paddr, "GetAddress, idle harts");
            }
            ensure!(stat(stat::ASYS_WAKE_REMOTE) > remote, "no remote wake with idle harts");
        }
        // Keep every other hart busy at our priority: no hart below us.
        sset(0, 0);
        sset(2, 0);
        for h in (0..harts).filter(|&h| h != env.bi.node_id) {
            env.spawn_on(spinner, 0, 255, h)?;
        }
        crate::env::wait_for(2, harts - 1, 100_000)?;
        let (inline, remote) = (stat(stat::ASYS_WAKE_INLINE), stat(stat::ASYS_WAKE_REMOTE));
        for _ in 0..20 {
            ensure_eq!(ok!(get()), f.paddr, "GetAddress, no idle hart");
        }
        let (inline, remote) = (stat(stat::ASYS_WAKE_INLINE) - inline, stat(stat::ASYS_WAKE_REMOTE) - remote);
        sset(0, 1);
        ensure!(inline > 0, "no inline wake without an idle hart");
        ensure_eq!(remote, 0, "remote wakes while every hart was busy");
        ensure_eq!(c.in_flight(), 0, "calls left");
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Many calls in flight from coroutines, and the figures.

const TASKS: usize = 64;
static EXEC: Executor<{ TASKS + 8 }, 1024> = Executor::new();
static PARK: ThreadPark = ThreadPark::new();
static EXEC_TAKEN: AtomicUsize = AtomicUsize::new(0);
static FAILURES: AtomicUsize = AtomicUsize::new(0);

/// Map+unmap pairs per coroutine.
const ROUNDS: usize = if cfg!(feature = "rtl-subset") { 2 } else { 8 };

/// 64 coroutines each map, touch and unmap their own page through the ring at once, all in
/// flight together; then the cycles per map+unmap pair async vs sync and the kernel entries per
/// async call are printed (figures, not checks).
pub fn many_in_flight(env: &mut Env) -> TResult {
    if EXEC_TAKEN.swap(1, SeqCst) != 0 {
        return Err(Fail::skip(format_args!("the executor is claimed once per run")));
    }
    with_teardown(env, |env| {
        let s = setup(env)?;
        PARK.setup(s.ntfn, 1 << 16);
        let c = attach(&s, Some(&PARK))?;
        let rt = EXEC.claim(&PARK).expect("claimed once");
        let base = env.va_region(TASKS);
        let mut frames = [0usize; TASKS];
        // The page table exists before the timing (a sync map/unmap at the base).
        asys::uninstall();
        for fr in frames.iter_mut() {
            *fr = env.alloc_cap(o::PAGE_4K)?;
        }
        env.map_frame(frames[0], VSPACE, base, rights::READ_WRITE)?;
        ok!(vspace::page_unmap(frames[0]));
        // Sync reference: the same pairs, one at a time.
        let t0 = wall_cycles();
        for _ in 0..ROUNDS {
            for (i, &fr) in frames.iter().enumerate() {
                ok!(vspace::page_map(fr, VSPACE, base + i * PAGE, rights::READ_WRITE, 0));
                ok!(vspace::page_unmap(fr));
            }
        }
        let sync_cycles = wall_cycles() - t0;
        FAILURES.store(0, SeqCst);
        ensure!(asys::install(c), "install again");
        let entries0 = syscall::debug_thread_entries(abi::init_cap::DEBUG, ROOT_TCB).unwrap_or(0);
        let all0 = stat(stat::KERNEL_ENTRIES);
        let (done0, wakes0) = (c.completed.load(SeqCst), c.wakes.load(SeqCst));
        let t0 = wall_cycles();
        {
            let mut handles = heapless::Vec::<_, TASKS>::new();
            for (i, &fr) in frames.iter().enumerate() {
                let va = base + i * PAGE;
                let h = rt.spawn(10, async move {
                    for k in 0..ROUNDS {
                        if vspace::page_map_async(fr, VSPACE, va, rights::READ_WRITE, 0).await.is_err() {
                            FAILURES.fetch_add(1, SeqCst);
                            return;
                        }
                        // SAFETY: mapped just above, by this coroutine only.
                        unsafe {
                            core::ptr::write_volatile(va as *mut usize, i * 1000 + k);
                            if core::ptr::read_volatile(va as *const usize) != i * 1000 + k {
                                FAILURES.fetch_add(1, SeqCst);
                            }
                        }
                        if vspace::page_unmap_async(fr).await.is_err() {
                            FAILURES.fetch_add(1, SeqCst);
                            return;
                        }
                    }
                });
                match h {
                    Ok(h) => {
                        let _ = handles.push(h);
                    }
                    Err(_) => return Err(crate::env::fail(format_args!("spawn {}", i))),
                }
            }
            for h in handles {
                rt.block_on(h);
            }
        }
        let async_cycles = wall_cycles() - t0;
        let entries = syscall::debug_thread_entries(abi::init_cap::DEBUG, ROOT_TCB).unwrap_or(0) - entries0;
        let all = stat(stat::KERNEL_ENTRIES) - all0;
        let calls = c.completed.load(SeqCst) - done0;
        ensure_eq!(FAILURES.load(SeqCst), 0, "failed map/unmap/touch");
        ensure_eq!(calls, 2 * TASKS * ROUNDS, "calls completed through the ring");
        ensure_eq!(c.in_flight(), 0, "calls left in the table");
        let pairs = TASKS * ROUNDS;
        print!(
            "[{} pairs: sync {} cycles/pair, async {} cycles/pair (x{}.{:02}), {} root kernel entries ({} wakes), {} on all harts, for {} async calls] ",
            pairs,
            sync_cycles / pairs,
            async_cycles / pairs,
            async_cycles / sync_cycles.max(1),
            async_cycles * 100 / sync_cycles.max(1) % 100,
            entries,
            c.wakes.load(SeqCst) - wakes0,
            all,
            calls
        );
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Memory reused while a deferred shootdown is outstanding (issue #38).

/// Sv39 leaf flags V|R|W|U|A|D: what the writer forges.
const FORGED_LEAF: usize = 0x1 | 0x2 | 0x4 | 0x10 | 0x40 | 0x80;
/// Attempts at the race (each a fresh writer and batch); the RTL runs in parallel for real.
const REUSE_ATTEMPTS: usize = if cfg!(feature = "rtl-subset") { 3 } else { 24 };
/// Frames the slow fourth request makes: within one entry's preemption budget.
const SLOW_FRAMES: usize = 48;
/// Entries of the new table probed: every one on QEMU, where a writer may land part of a
/// round; a spread on the RTL, whose writer rewrites the whole page many times in the window.
const PROBE_STRIDE: usize = if cfg!(feature = "rtl-subset") { 64 } else { 1 };

/// Stores SHARED[1] (a forged leaf entry) into all 512 words of the page at `va`, round after
/// round (SHARED[2] counts them), until SHARED[3] is set or a store faults (no fault handler:
/// the thread stops).
extern "C" fn stale_writer(va: usize) -> ! {
    let pte = sget(1);
    while sget(3) == 0 {
        for i in 0..512 {
            // SAFETY: mapped read-write when this thread starts; once unmapped, a store faults.
            unsafe { core::ptr::write_volatile((va + 8 * i) as *mut usize, pte) };
        }
        crate::env::SHARED[2].fetch_add(1, SeqCst);
    }
    crate::env::park()
}

/// One chunk of async requests revokes the Untyped under a frame F that a thread of our
/// VSpace on another hart is storing into, retypes it into a page table, maps that table and
/// runs a slow Retype. The writer's stores through its stale translation must not reach the
/// table: the kernel may not hand F out again until that translation is gone on every hart.
/// Probed by mapping a page at every entry of the new table: a forged entry makes it
/// DeleteFirst.
pub fn stale_translation_reuse(env: &mut Env) -> TResult {
    with_teardown(env, |env| {
        let other = env.need_other_hart()?;
        let s = setup(env)?;
        ok!(s.buf.register(ROOT_TCB, VEC));
        let mut r = raw(&s.buf);
        let ut = env.alloc(o::UNTYPED, 12)?.cptr;
        let slow_ut = env.alloc(o::UNTYPED, 18)?.cptr;
        let (f, pt) = (env.slot()?, env.slot()?);
        let slow = env.slots(SLOW_FRAMES)?;
        let x = env.va(1);
        // Where the forged entries point: a page of ours, so a hit harms nothing.
        let target = env.alloc(o::PAGE_4K, 0)?;
        let probe = env.alloc_cap(o::PAGE_4K)?;
        sset(1, (target.paddr >> 12) << 10 | FORGED_LEAF);
        for attempt in 0..REUSE_ATTEMPTS {
            ok!(untyped::retype(ut, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
            env.map_frame(f, VSPACE, x, rights::READ_WRITE)?;
            // A fresh 2 MiB region: its level-1 entry is free for the new table.
            let y = env.va_region(1);
            sset(2, 0);
            sset(3, 0);
            env.spawn_on(stale_writer, x, 255, other)?;
            // The writer has the translation in its TLB and is storing.
            crate::env::wait_for(2, 2, 1_000_000)?;
            let reqs = [
                Request::invocation(CNODE, l::CNODE_REVOKE, &[ut, ROOT_DEPTH], &[]),
                Request::invocation(ut, l::UNTYPED_RETYPE, &[o::PAGE_TABLE, 0, 0, 0, pt, 1], &[CNODE]),
                Request::invocation(pt, l::RISCV_PAGE_TABLE_MAP, &[y, 0], &[VSPACE]),
                Request::invocation(slow_ut, l::UNTYPED_RETYPE, &[o::PAGE_4K, 0, 0, 0, slow, SLOW_FRAMES], &[CNODE]),
            ];
            // All in the ring before one wake: one chunk runs them.
            for (i, q) in reqs.iter().enumerate() {
                let q = ok!(q.ok_or("request too long"));
                for it in &q.to_items(i as u64)[..q.items()] {
                    let _ = ok!(r.req.push(it).map_err(|_| "ring full"));
                }
            }
            let _ = asys::wake();
            for i in 0..reqs.len() {
                let Some(rep) = r.reply(1_000_000)? else {
                    return Err(crate::env::fail(format_args!("attempt {}: no reply to request {}", attempt, i)));
                };
                ensure_eq!(rep.id, i as u64, "reply order");
                ensure!(rep.label == 0, "attempt {}: request {} failed with {}", attempt, i, rep.label);
            }
            sset(3, 1);
            for k in (0..512).step_by(PROBE_STRIDE) {
                let va = y + k * PAGE;
                match vspace::page_map(probe, VSPACE, va, rights::READ_WRITE, 0) {
                    Ok(()) => ok!(vspace::page_unmap(probe)),
                    Err(err) if err.code == e::DELETE_FIRST => {
                        // The forged table goes with its Untyped before the report.
                        env.stop_helpers();
                        let _ = cnode::revoke(CNODE, ut, ROOT_DEPTH);
                        return Err(crate::env::fail(format_args!(
                            "attempt {}: entry {} of the page table made from the frame the writer stored into is valid: a store through a stale translation reached reused memory",
                            attempt, k
                        )));
                    }
                    Err(err) => return Err(crate::env::fail(format_args!("probe map at {:#x}: {}", va, err))),
                }
            }
            env.stop_helpers();
            ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
            ok!(cnode::revoke(CNODE, slow_ut, ROOT_DEPTH));
        }
        Ok(())
    })
}

/// The sync path's shootdown (`sched::fence_others`: a remote sfence.vma, no kernel entry on
/// the writer's hart): once Page_Unmap returns, a thread of our VSpace on another hart that was
/// storing into the frame cannot store into it any more, so the frame may at once become a
/// page table. Probed as in `stale_translation_reuse`. Its slots (a writer per attempt) go back
/// to the suite's budget at the end.
pub fn stale_translation_reuse_sync(env: &mut Env) -> TResult {
    with_slots_back(env, reuse_after_sync_unmap)
}

fn reuse_after_sync_unmap(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let ut = env.alloc(o::UNTYPED, 12)?.cptr;
    let (f, pt) = (env.slot()?, env.slot()?);
    let x = env.va(1);
    let target = env.alloc(o::PAGE_4K, 0)?;
    let probe = env.alloc_cap(o::PAGE_4K)?;
    sset(1, (target.paddr >> 12) << 10 | FORGED_LEAF);
    for attempt in 0..REUSE_ATTEMPTS {
        ok!(untyped::retype(ut, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
        env.map_frame(f, VSPACE, x, rights::READ_WRITE)?;
        let y = env.va_region(1);
        sset(2, 0);
        sset(3, 0);
        env.spawn_on(stale_writer, x, 255, other)?;
        crate::env::wait_for(2, 2, 1_000_000)?;
        // Unmapped while the writer stores; then the frame is a page table at once.
        ok!(vspace::page_unmap(f));
        ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
        ok!(untyped::retype(ut, o::PAGE_TABLE, 0, CNODE, 0, 0, pt, 1));
        ok!(vspace::page_table_map(pt, VSPACE, y, 0));
        // Give a stale translation time to show: such a writer would go on storing (over the
        // whole page, many times) meanwhile.
        let t = userlib::time::now();
        while userlib::time::now().wrapping_sub(t) < env.bi.timebase_hz as u64 / 1000 {
            core::hint::spin_loop();
        }
        sset(3, 1);
        for k in (0..512).step_by(PROBE_STRIDE) {
            let va = y + k * PAGE;
            match vspace::page_map(probe, VSPACE, va, rights::READ_WRITE, 0) {
                Ok(()) => ok!(vspace::page_unmap(probe)),
                Err(err) if err.code == e::DELETE_FIRST => {
                    env.stop_helpers();
                    let _ = cnode::revoke(CNODE, ut, ROOT_DEPTH);
                    return Err(crate::env::fail(format_args!(
                        "attempt {}: entry {} of the page table made from the frame the writer stored into is valid: a store through a stale translation reached it after Page_Unmap returned",
                        attempt, k
                    )));
                }
                Err(err) => return Err(crate::env::fail(format_args!("probe map at {:#x}: {}", va, err))),
            }
        }
        env.stop_helpers();
        ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Where the handler may run (TCB_SetSyscallHandlerHarts) and each hart's idle time.

/// Per-hart counter `which` (`stat::ONE_HART`), for the first `harts` hart indices.
fn per_hart(which: usize, harts: usize) -> [usize; a::MAX_HART_BITS] {
    core::array::from_fn(|h| if h < harts { syscall::debug_stat_hart(which, h) } else { 0 })
}

/// `n` GetAddress calls through the ring, 2 ms apart (past the handler's poll window, so each
/// needs a wake), each checked; returns the (inline, remote) wakes they took.
fn spaced_calls(env: &Env, frame: usize, paddr: usize, n: usize, what: &str) -> Result<(usize, usize), Fail> {
    let (inline, remote) = (stat(stat::ASYS_WAKE_INLINE), stat(stat::ASYS_WAKE_REMOTE));
    let gap = env.bi.timebase_hz as u64 / 500;
    for _ in 0..n {
        let t = userlib::time::now();
        while userlib::time::now().wrapping_sub(t) < gap {
            core::hint::spin_loop();
        }
        ensure_eq!(ok!(vspace::page_get_address(frame)), paddr, what);
    }
    Ok((stat(stat::ASYS_WAKE_INLINE) - inline, stat(stat::ASYS_WAKE_REMOTE) - remote))
}

/// Run `test` (with teardown), then delete every cap it took and give its slots back: the root
/// CNode's free slots are a budget the whole suite shares.
pub(crate) fn with_slots_back(env: &mut Env, test: fn(&mut Env) -> TResult) -> TResult {
    let first = env.slots(0)?;
    let r = with_teardown(env, test);
    let end = env.slots(0)?;
    for slot in first..end {
        let _ = cnode::delete(CNODE, slot, ROOT_DEPTH);
    }
    env.release_slots(first, end - first)?;
    r
}

/// Bad masks, refused with INVALID_ARGUMENT (`hart_mask` checks they change nothing).
fn refuse_bad_masks(harts: usize) -> TResult {
    let set = |m: usize| tcb::set_syscall_handler_harts(ROOT_TCB, m);
    expect_err!(set(1 << a::MAX_HART_BITS), e::INVALID_ARGUMENT);
    expect_err!(set(1 << 63), e::INVALID_ARGUMENT);
    expect_err!(set(usize::MAX), e::INVALID_ARGUMENT);
    if harts < a::MAX_HART_BITS {
        // Only hart indices the machine does not have.
        expect_err!(set(((1 << a::MAX_HART_BITS) - 1) & !((1 << harts) - 1)), e::INVALID_ARGUMENT);
    }
    Ok(())
}

/// The mask is honoured: with idle harts about, naming only our own hart makes every wake run
/// inside the call (by default an idle hart would take it), and bad masks tried meanwhile
/// leave it so; naming one other hart makes that hart, and no third one, run the requests
/// (per-hart ASYS_REQUESTS); any hart again: remote wakes again.
pub fn hart_mask(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi);
    if harts < 3 {
        print!("[needs 3 harts: two others to tell apart] ");
        return Ok(());
    }
    with_slots_back(env, |env| {
        let s = setup(env)?;
        let c = attach(&s, None)?;
        let f = env.alloc(o::PAGE_4K, 0)?;
        let harts = userlib::bootinfo::harts(env.bi);
        let me = env.bi.node_id;
        ok!(tcb::set_syscall_handler_harts(ROOT_TCB, 1 << me));
        let (inline, remote) = spaced_calls(env, f.cptr, f.paddr, 10, "GetAddress, our hart only")?;
        ensure!(inline > 0, "no inline wake with only our hart allowed");
        ensure_eq!(remote, 0, "remote wakes with only our hart allowed");
        refuse_bad_masks(harts)?;
        let (inline, remote) = spaced_calls(env, f.cptr, f.paddr, 10, "GetAddress after refused masks")?;
        ensure!(inline > 0, "no inline wake after refused masks");
        ensure_eq!(remote, 0, "a refused mask replaced the one in force");

        let other = (0..harts).rev().find(|&h| h != me).unwrap_or(0);
        ok!(tcb::set_syscall_handler_harts(ROOT_TCB, 1 << other));
        let before = per_hart(stat::ASYS_REQUESTS, harts);
        let (_, remote) = spaced_calls(env, f.cptr, f.paddr, 20, "GetAddress, one other hart")?;
        let after = per_hart(stat::ASYS_REQUESTS, harts);
        ensure!(remote > 0, "no remote wake to the one hart allowed (idle)");
        ensure!(after[other] > before[other], "hart {} allowed but ran no request", other);
        for h in (0..harts).filter(|&h| h != other && h != me) {
            ensure_eq!(after[h] - before[h], 0, "requests run on a hart the mask leaves out");
        }

        ok!(tcb::set_syscall_handler_harts(ROOT_TCB, a::ANY_HART));
        let (_, remote) = spaced_calls(env, f.cptr, f.paddr, 20, "GetAddress, any hart")?;
        ensure!(remote > 0, "no remote wake with any hart allowed again");
        ensure_eq!(c.in_flight(), 0, "calls left");
        Ok(())
    })
}

/// Bad masks are refused with INVALID_ARGUMENT, never a fault: a bit past the ABI's hart
/// bits, all bits, a mask naming only hart indices the machine does not have; and the label
/// on a cap other than a TCB is an ILLEGAL_OPERATION. (No buffer needed: the mask is the
/// thread's.)
pub fn hart_mask_refused(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi);
    let r = refuse_bad_masks(harts);
    let _ = tcb::set_syscall_handler_harts(ROOT_TCB, a::ANY_HART);
    r?;
    expect_err!(userlib::invoke::invoke0(CNODE, l::TCB_SET_SYSCALL_HANDLER_HARTS, &[1], &[]), e::ILLEGAL_OPERATION);
    Ok(())
}

/// Each hart's idle time (`stat::IDLE_TIME` with `stat::ONE_HART`): over a 4 ms window in
/// which we spin in user mode, our hart's does not grow at all, no hart's grows by more than
/// the window, and an idle hart's grows (asleep in `wfi` the whole window
/// counts, though its idle pass has not ended). The sum is the plain DebugStat; an unknown
/// hart or a counter that is not per hart reads as usize::MAX.
pub fn idle_time_per_hart(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi);
    let me = env.bi.node_id;
    ensure_eq!(syscall::debug_stat_hart(stat::IDLE_TIME, harts), usize::MAX, "idle time of a hart past the last");
    ensure_eq!(syscall::debug_stat_hart(stat::OBJECT_BYTES, me), usize::MAX, "a gauge per hart");
    ensure_eq!(syscall::debug_stat_hart(stat::COUNT, me), usize::MAX, "an unknown counter per hart");
    // Measured from here on (the other harts are kicked into a timed idle pass).
    syscall::debug_stat_reset(abi::init_cap::DEBUG, stat::IDLE_TIME);
    let window = env.bi.timebase_hz as u64 / 250;
    // Until every other hart is in a timed pass (its count leaves 0), for up to a second: under
    // QEMU on a loaded host a kicked vCPU may take long to run again.
    let settle = userlib::time::now();
    while (0..harts).any(|h| h != me && syscall::debug_stat_hart(stat::IDLE_TIME, h) == 0)
        && userlib::time::now().wrapping_sub(settle) < env.bi.timebase_hz as u64
    {
        syscall::yield_now();
    }
    // The clock read first and last: every idle time read lies inside [t0, now].
    let t0 = userlib::time::now();
    let a = per_hart(stat::IDLE_TIME, harts);
    while userlib::time::now().wrapping_sub(t0) < window {
        core::hint::spin_loop();
    }
    let b = per_hart(stat::IDLE_TIME, harts);
    let elapsed = userlib::time::now().wrapping_sub(t0) as usize;
    let sum = stat(stat::IDLE_TIME);
    ensure_eq!(b[me] - a[me], 0, "idle time of our own hart while we ran");
    for h in 0..harts {
        ensure!(b[h] >= a[h] && b[h] - a[h] <= elapsed, "hart {}: idle {} of {} ticks", h, b[h] - a[h], elapsed);
    }
    if harts > 1 {
        // Some other hart's idle time grew. Not "most of the window": under QEMU on a loaded
        // host an idle vCPU may spend much of it descheduled between two passes.
        let most = (0..harts).map(|h| b[h] - a[h]).max().unwrap_or(0);
        ensure!(most > 0, "no other hart idle at all in the window ({} ticks)", elapsed);
    }
    ensure!(sum >= b[..harts].iter().sum::<usize>(), "the sum {} below the harts' idle times", sum);
    Ok(())
}
