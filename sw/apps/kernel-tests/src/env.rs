//! The test environment: a slot allocator over `BootInfo.empty`, an object allocator over the
//! non-device Untypeds (it mirrors seL4's watermark so it knows each object's physical address),
//! a virtual-address allocator with page-table creation, and helper threads.
use abi::{error, init_cap, object};
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicUsize, Ordering};
use userlib::bootinfo::BootInfo;
use userlib::invoke::{rights, vm_attr};
use userlib::tcb::UserContext;
use userlib::{cnode, syscall, tcb, untyped, vspace};

/// Depth of a slot index in the root CNode: radix 12 plus the guard that pads it to a word
/// (seL4's initial CNode cap), so a slot index is also a cptr.
pub const ROOT_DEPTH: usize = 64;
pub const CNODE: usize = init_cap::CNODE;
pub const VSPACE: usize = init_cap::VSPACE;
pub const ROOT_TCB: usize = init_cap::TCB;

/// Where tests map things: above the image, below the root task's stack and boot info.
const VA_BASE: usize = 0x8_0000_0000;
const VA_END: usize = 0x20_0000_0000;
pub const STACK_PAGES: usize = 4;
pub const PAGE: usize = 1 << object::PAGE_BITS;

/// Why a test failed. The text lives in one static buffer (only the root task's thread makes
/// `Fail`s, and a test returns at its first one), which keeps `Result`s small.
pub struct Fail {
    len: usize,
    /// Not a failure: the test cannot run here (e.g. it needs a second hart). The runner
    /// counts it apart, so a test that could not run never reads as passed.
    pub skipped: bool,
}

struct FailBuf(core::cell::UnsafeCell<[u8; 240]>);
// SAFETY: only the root task's thread (never a helper thread) creates or reads a `Fail`.
unsafe impl Sync for FailBuf {}
static FAIL_BUF: FailBuf = FailBuf(core::cell::UnsafeCell::new([0; 240]));

struct FailWriter(usize);

impl Write for FailWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: see FailBuf.
        let buf = unsafe { &mut *FAIL_BUF.0.get() };
        for &b in s.as_bytes() {
            if self.0 < buf.len() {
                buf[self.0] = b;
                self.0 += 1;
            }
        }
        Ok(())
    }
}

impl Fail {
    pub fn new(file: &str, line: u32, args: fmt::Arguments) -> Fail {
        let mut w = FailWriter(0);
        let _ = if file.is_empty() {
            write!(w, "{}", args)
        } else {
            write!(w, "{}:{}: {}", file.rsplit('/').next().unwrap_or(file), line, args)
        };
        Fail { len: w.0, skipped: false }
    }
    pub fn skip(args: fmt::Arguments) -> Fail {
        Fail { skipped: true, ..Fail::new("", 0, args) }
    }
    pub fn as_str(&self) -> &str {
        // SAFETY: see FailBuf.
        let buf = unsafe { &*FAIL_BUF.0.get() };
        core::str::from_utf8(&buf[..self.len]).unwrap_or("<bad utf-8>")
    }
}

pub type TResult = Result<(), Fail>;

pub fn fail(args: fmt::Arguments) -> Fail {
    Fail::new("env.rs", 0, args)
}

/// log2 of the bytes an object of `t` (with `size_bits` for the sized ones) takes.
pub fn obj_bits(t: usize, size_bits: usize) -> usize {
    match t {
        object::UNTYPED => size_bits,
        object::TCB => object::TCB_BITS,
        object::ENDPOINT => object::ENDPOINT_BITS,
        object::NOTIFICATION => object::NOTIFICATION_BITS,
        object::CNODE => size_bits + object::SLOT_BITS,
        object::GIGA_PAGE => object::GIGA_PAGE_BITS,
        object::PAGE_4K => object::PAGE_BITS,
        object::MEGA_PAGE => object::MEGA_PAGE_BITS,
        object::PAGE_TABLE => object::PAGE_TABLE_BITS,
        object::UINTR_SENDER_TABLE => object::UINTR_SENDER_TABLE_BITS,
        _ => 0,
    }
}

#[derive(Clone, Copy, Default)]
struct Ut {
    cptr: usize,
    paddr: usize,
    bits: usize,
    /// Bytes used (seL4's free index), as our model of the kernel's watermark.
    used: usize,
    usable: bool,
}

/// A freshly created object: its cap and physical address.
#[derive(Clone, Copy, Debug)]
pub struct Obj {
    pub cptr: usize,
    pub paddr: usize,
}

/// A helper thread.
#[derive(Clone, Copy, Debug)]
pub struct Thread {
    pub tcb: usize,
    pub ipc_va: usize,
    pub stack_top: usize,
}

/// How to set up a helper thread.
#[derive(Clone, Copy)]
pub struct ThreadCfg {
    pub prio: usize,
    pub mcp: usize,
    pub affinity: Option<usize>,
    pub fault_ep: usize,
    pub cspace: usize,
    pub cspace_data: usize,
    pub vspace: usize,
    /// Resume it once set up.
    pub start: bool,
    /// SetSpace + SetIPCBuffer instead of Configure.
    pub set_space: bool,
}

impl Default for ThreadCfg {
    fn default() -> Self {
        ThreadCfg {
            prio: 255,
            mcp: 255,
            affinity: None,
            fault_ep: 0,
            cspace: CNODE,
            cspace_data: 0,
            vspace: VSPACE,
            start: true,
            set_space: false,
        }
    }
}

pub type Entry = extern "C" fn(usize) -> !;

pub struct Env {
    pub bi: &'static BootInfo,
    next_slot: usize,
    end_slot: usize,
    uts: [Ut; abi::bootinfo::MAX_UNTYPEDS],
    nuts: usize,
    va_next: usize,
    spawned: [usize; 64],
    nspawned: usize,
}

/// A notification nobody signals: finished helper threads wait on it forever.
pub static PARK: AtomicUsize = AtomicUsize::new(0);

/// Benchmark results printed after the summary: cycles per Call+ReplyRecv round trip on the
/// same hart and across harts; fastpath Call and ReplyRecv counts during the same-hart run
/// (0..4); the user-interrupt benchmark's results from 4 on (`t_uintr::B_*`).
pub static BENCH: [AtomicUsize; 32] = [const { AtomicUsize::new(0) }; 32];

/// Words shared between the root and its helper threads (each test gives them meanings).
pub static SHARED: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];

pub fn sget(i: usize) -> usize {
    SHARED[i].load(Ordering::SeqCst)
}
pub fn sset(i: usize, v: usize) {
    SHARED[i].store(v, Ordering::SeqCst)
}
pub fn sadd(i: usize, v: usize) -> usize {
    SHARED[i].fetch_add(v, Ordering::SeqCst)
}

/// End of a helper thread: block forever.
pub fn park() -> ! {
    loop {
        syscall::wait(PARK.load(Ordering::SeqCst));
    }
}

pub fn gp() -> usize {
    let v: usize;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mv {0}, gp", out(reg) v, options(nomem, nostack)) };
    v
}

pub fn tp() -> usize {
    userlib::ipc::ipc_buffer_addr()
}

/// Core cycles of wall time: mtime scaled to the core clock (on the RTL the RTC ticks at the bus
/// clock / 10). For intervals in which this hart may sleep: Rocket's cycle counter stops in
/// `wfi`. On our SoC `rdtime` traps to the firmware (a few hundred cycles per read).
pub fn wall_cycles() -> usize {
    let v: usize;
    // SAFETY: reads a counter CSR user mode may read.
    unsafe { core::arch::asm!("rdtime {0}", out(reg) v, options(nomem, nostack)) };
    v * (platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ)
}

pub fn rdcycle() -> usize {
    let v: usize;
    // SAFETY: reads a counter CSR (the kernel lets user mode read it).
    unsafe { core::arch::asm!("rdcycle {0}", out(reg) v, options(nomem, nostack)) };
    v
}

/// The hart the caller runs on (from DebugGetClock's a1).
pub fn hart() -> usize {
    syscall::debug_get_clock().1
}

pub fn identify(cptr: usize) -> Option<usize> {
    syscall::debug_cap_identify(cptr)
}

impl Env {
    pub fn new(bi: &'static BootInfo) -> Env {
        let mut env = Env {
            bi,
            next_slot: bi.empty.start,
            end_slot: bi.empty.end,
            uts: [Ut::default(); abi::bootinfo::MAX_UNTYPEDS],
            nuts: 0,
            va_next: VA_BASE,
            spawned: [0; 64],
            nspawned: 0,
        };
        for (cptr, d) in userlib::bootinfo::untypeds(bi) {
            env.uts[env.nuts] =
                Ut { cptr, paddr: d.paddr, bits: d.size_bits as usize, used: 0, usable: d.is_device == 0 };
            env.nuts += 1;
        }
        env
    }

    /// A free slot of the root CNode.
    pub fn slot(&mut self) -> Result<usize, Fail> {
        if self.next_slot >= self.end_slot {
            return Err(fail(format_args!("out of CNode slots")));
        }
        self.next_slot += 1;
        Ok(self.next_slot - 1)
    }

    /// Delete every cap in the slots taken since `mark` (latest first) and give the slots back:
    /// for tests that make hundreds of objects, so the suite's CSpace lasts. The objects'
    /// memory is not given back (the Untypeds are bump-allocated).
    pub fn clean_to(&mut self, mark: usize) -> TResult {
        for s in (mark..self.next_slot).rev() {
            if let Err(e) = cnode::delete(CNODE, s, ROOT_DEPTH) {
                return Err(fail(format_args!("deleting slot {}: {}", s, e)));
            }
        }
        self.next_slot = mark.min(self.next_slot);
        // Threads made since are gone with their caps.
        let mut k = 0;
        for i in 0..self.nspawned {
            if self.spawned[i] < mark {
                self.spawned[k] = self.spawned[i];
                k += 1;
            }
        }
        self.nspawned = k;
        Ok(())
    }

    /// The next slot `slot` would give: the slots taken after this mark are `mark..mark()`.
    pub fn mark(&self) -> usize {
        self.next_slot
    }

    /// `n` consecutive free slots; returns the first.
    pub fn slots(&mut self, n: usize) -> Result<usize, Fail> {
        if self.next_slot + n > self.end_slot {
            return Err(fail(format_args!("out of CNode slots")));
        }
        self.next_slot += n;
        Ok(self.next_slot - n)
    }

    /// Give back the last `n` slots taken (`slots(n)` returned `first`), once they are all
    /// empty again: for tests that need many slots for a while.
    pub fn release_slots(&mut self, first: usize, n: usize) -> Result<(), Fail> {
        if first + n != self.next_slot {
            return Err(fail(format_args!("release_slots: {first}+{n} are not the last slots taken")));
        }
        if let Some(s) = (first..first + n).find(|&s| identify(s).is_some()) {
            return Err(fail(format_args!("release_slots: slot {s} still holds a cap")));
        }
        self.next_slot = first;
        Ok(())
    }

    /// Retype one object from the first non-device Untyped with room, into a fresh slot.
    pub fn alloc(&mut self, t: usize, size_bits: usize) -> Result<Obj, Fail> {
        let bits = obj_bits(t, size_bits);
        let size = 1usize << bits;
        let slot = self.slot()?;
        for i in 0..self.nuts {
            let ut = self.uts[i];
            if !ut.usable || ut.bits < bits {
                continue;
            }
            let start = (ut.used + size - 1) & !(size - 1);
            if start + size > (1usize << ut.bits) {
                continue;
            }
            match untyped::retype(ut.cptr, t, size_bits, CNODE, 0, 0, slot, 1) {
                Ok(()) => {
                    self.uts[i].used = start + size;
                    return Ok(Obj { cptr: slot, paddr: ut.paddr + start });
                }
                Err(e) if e.code == error::NOT_ENOUGH_MEMORY => self.uts[i].usable = false,
                Err(e) => return Err(fail(format_args!("retype type {} bits {}: {}", t, size_bits, e))),
            }
        }
        Err(fail(format_args!("no Untyped left for type {} size {}", t, size_bits)))
    }

    /// A sender table from our memory, bound to thread `tcb`; returns its cap.
    pub fn sender_table(&mut self, tcb: usize) -> Result<usize, Fail> {
        let table = self.alloc_cap(object::UINTR_SENDER_TABLE)?;
        ok_env(userlib::uintr::sender_table_bind(table, tcb), "SenderTableBind")?;
        Ok(table)
    }

    pub fn alloc_cap(&mut self, t: usize) -> Result<usize, Fail> {
        self.alloc(t, 0).map(|o| o.cptr)
    }

    /// Fresh virtual addresses for `pages` pages (with an unmapped page after them).
    pub fn va(&mut self, pages: usize) -> usize {
        let va = self.va_next;
        self.va_next += (pages + 1) * PAGE;
        assert!(self.va_next < VA_END);
        va
    }

    /// A fresh 2 MiB-aligned virtual region (its own leaf page table), `pages` long.
    pub fn va_region(&mut self, pages: usize) -> usize {
        let mega = 1usize << object::MEGA_PAGE_BITS;
        let va = (self.va_next + mega - 1) & !(mega - 1);
        self.va_next = va + pages.max(1) * PAGE + mega;
        assert!(self.va_next < VA_END);
        va
    }

    /// Map `frame` at `va` in `vs`, creating page tables as seL4 asks for them.
    pub fn map_frame(&mut self, frame: usize, vs: usize, va: usize, r: usize) -> TResult {
        for _ in 0..4 {
            match vspace::page_map(frame, vs, va, r, vm_attr::DEFAULT) {
                Ok(()) => return Ok(()),
                Err(e) if e.code == error::FAILED_LOOKUP => {
                    let pt = self.alloc_cap(object::PAGE_TABLE)?;
                    if let Err(e) = vspace::page_table_map(pt, vs, va, vm_attr::DEFAULT) {
                        return Err(fail(format_args!("PageTable_Map at {:#x}: {}", va, e)));
                    }
                }
                Err(e) => return Err(fail(format_args!("Page_Map at {:#x}: {}", va, e))),
            }
        }
        Err(fail(format_args!("Page_Map at {:#x} still fails after adding page tables", va)))
    }

    /// A new 4 KiB frame mapped read-write at `va` of `vs`; returns the frame.
    pub fn new_page_at(&mut self, vs: usize, va: usize) -> Result<Obj, Fail> {
        let f = self.alloc(object::PAGE_4K, 0)?;
        self.map_frame(f.cptr, vs, va, rights::READ_WRITE)?;
        Ok(f)
    }

    /// `pages` new frames mapped read-write in the root VSpace; returns the first address.
    pub fn new_pages(&mut self, pages: usize) -> Result<usize, Fail> {
        let va = self.va(pages);
        for i in 0..pages {
            self.new_page_at(VSPACE, va + i * PAGE)?;
        }
        Ok(va)
    }

    /// A second VSpace running this image: copies of the image frames' caps mapped at the same
    /// addresses (its data is shared memory with ours). Threads in it need their own stack and
    /// IPC buffer (`spawn_cfg` with `vspace` makes them there).
    pub fn image_vspace(&mut self) -> Result<usize, Fail> {
        extern "C" {
            static __image_start: u8;
            static __image_end: u8;
        }
        // SAFETY: linker symbols; only their addresses are used.
        let (start, end) = unsafe { (&__image_start as *const u8 as usize, &__image_end as *const u8 as usize) };
        let frames = userlib::bootinfo::slots(self.bi.user_image_frames);
        // The image's pages come first, in address order (our kernel lists the root stack's
        // frames after them).
        let pages = (end - start) / PAGE;
        if frames.len() < pages {
            return Err(fail(format_args!("{} image frames for {} image pages", frames.len(), pages)));
        }
        let vs = self.alloc_cap(object::PAGE_TABLE)?;
        ok_env(vspace::asid_pool_assign(init_cap::ASID_POOL, vs), "ASIDPool_Assign")?;
        for (i, f) in frames.take(pages).enumerate() {
            let c = self.copy(f)?;
            self.map_frame(c, vs, start + i * PAGE, rights::READ_WRITE)?;
        }
        Ok(vs)
    }

    /// A copy of the cap to the image frame that holds address `va` of this image (to map our
    /// code into another VSpace).
    pub fn image_frame(&mut self, va: usize) -> Result<usize, Fail> {
        extern "C" {
            static __image_start: u8;
            static __image_end: u8;
        }
        // SAFETY: linker symbols; only their addresses are used.
        let (start, end) = unsafe { (&__image_start as *const u8 as usize, &__image_end as *const u8 as usize) };
        if !(start..end).contains(&va) {
            return Err(fail(format_args!("{:#x} is not in the image", va)));
        }
        let f = userlib::bootinfo::slots(self.bi.user_image_frames).nth((va - start) / PAGE);
        let f = f.ok_or_else(|| fail(format_args!("no image frame for {:#x}", va)))?;
        self.copy(f)
    }

    /// A TCB with a stack and IPC buffer, registers set to run the code at `pc` with a0 = `arg`.
    pub fn spawn_cfg(&mut self, pc: usize, arg: usize, cfg: ThreadCfg) -> Result<Thread, Fail> {
        let t = self.alloc_cap(object::TCB)?;
        self.spawn_tcb(t, pc, arg, cfg)
    }

    /// `spawn_cfg` with a TCB the caller made (from an Untyped of its choice).
    pub fn spawn_tcb(&mut self, t: usize, pc: usize, arg: usize, cfg: ThreadCfg) -> Result<Thread, Fail> {
        let ipc_va = self.va(1);
        let ipc = self.new_page_at(cfg.vspace, ipc_va)?;
        let stack = self.va(STACK_PAGES);
        for i in 0..STACK_PAGES {
            self.new_page_at(cfg.vspace, stack + i * PAGE)?;
        }
        let stack_top = stack + STACK_PAGES * PAGE;
        if cfg.set_space {
            ok_env(tcb::set_space(t, cfg.fault_ep, cfg.cspace, cfg.cspace_data, cfg.vspace, 0), "SetSpace")?;
            ok_env(tcb::set_ipc_buffer(t, ipc_va, ipc.cptr), "SetIPCBuffer")?;
        } else {
            ok_env(
                tcb::configure(t, cfg.fault_ep, cfg.cspace, cfg.cspace_data, cfg.vspace, 0, ipc_va, ipc.cptr),
                "Configure",
            )?;
        }
        ok_env(tcb::set_sched_params(t, ROOT_TCB, cfg.mcp, cfg.prio), "SetSchedParams")?;
        // Helpers may take a receiver slot like the root task and have a sender table of their
        // own (tests that check the grant or the tables make their threads themselves).
        ok_env(
            userlib::uintr::grant(abi::init_cap::UINTR_CONTROL, t, abi::uintr::GRANT_RECEIVE),
            "UintrControl_Grant",
        )?;
        self.sender_table(t)?;
        if let Some(a) = cfg.affinity {
            ok_env(tcb::set_affinity(t, a), "SetAffinity")?;
        }
        let mut ctx = UserContext::default();
        ctx.regs[UserContext::PC] = pc;
        ctx.regs[UserContext::SP] = stack_top;
        ctx.regs[UserContext::GP] = gp();
        ctx.regs[UserContext::TP] = ipc_va;
        ctx.set_a(0, arg);
        ok_env(tcb::write_registers(t, false, 0, abi::regs::COUNT, &ctx), "WriteRegisters")?;
        if cfg.start {
            ok_env(tcb::resume(t), "Resume")?;
        }
        if self.nspawned < self.spawned.len() {
            self.spawned[self.nspawned] = t;
            self.nspawned += 1;
        }
        Ok(Thread { tcb: t, ipc_va, stack_top })
    }

    /// A started helper at `prio` on the root task's hart.
    pub fn spawn(&mut self, entry: Entry, arg: usize, prio: usize) -> Result<Thread, Fail> {
        let affinity = Some(self.bi.node_id);
        self.spawn_cfg(entry as *const () as usize, arg, ThreadCfg { prio, affinity, ..ThreadCfg::default() })
    }

    /// A started helper at `prio` on hart index `affinity`.
    pub fn spawn_on(&mut self, entry: Entry, arg: usize, prio: usize, affinity: usize) -> Result<Thread, Fail> {
        self.spawn_cfg(
            entry as *const () as usize,
            arg,
            ThreadCfg { prio, affinity: Some(affinity), ..ThreadCfg::default() },
        )
    }

    /// After each test: stop every helper it started.
    pub fn stop_helpers(&mut self) {
        for &t in &self.spawned[..self.nspawned] {
            let _ = tcb::suspend(t);
        }
        self.nspawned = 0;
    }

    /// An affinity index other than the root task's, or a skip: the test needs two harts.
    pub fn need_other_hart(&self) -> Result<usize, Fail> {
        self.other_hart().ok_or_else(|| Fail::skip(format_args!("needs a second hart")))
    }

    /// Number of harts, and an affinity index other than the root task's (if any).
    pub fn other_hart(&self) -> Option<usize> {
        let n = userlib::bootinfo::harts(self.bi);
        (n > 1).then(|| (self.bi.node_id + 1) % n)
    }

    pub fn copy(&mut self, src: usize) -> Result<usize, Fail> {
        let s = self.slot()?;
        ok_env(cnode::copy(CNODE, s, ROOT_DEPTH, CNODE, src, ROOT_DEPTH, rights::ALL), "CNode_Copy")?;
        Ok(s)
    }

    pub fn mint(&mut self, src: usize, r: usize, badge: usize) -> Result<usize, Fail> {
        let s = self.slot()?;
        ok_env(cnode::mint(CNODE, s, ROOT_DEPTH, CNODE, src, ROOT_DEPTH, r, badge), "CNode_Mint")?;
        Ok(s)
    }
}

fn ok_env(r: userlib::Result<()>, what: &str) -> TResult {
    r.map_err(|e| fail(format_args!("{}: {}", what, e)))
}

/// The kernel's consistency checker (derivation tree, watermarks, overlap, mappings) finds
/// nothing wrong.
pub fn check_invariants() -> TResult {
    match syscall::debug_check_invariants(abi::init_cap::DEBUG) {
        Some((0, _, _)) => Ok(()),
        Some((n, slots, _)) => {
            Err(fail(format_args!("kernel invariants: {} violations over {} slots (see the kernel log)", n, slots)))
        }
        None => Err(fail(format_args!("DebugCheckInvariants refused the debug cap"))),
    }
}

/// Wait (in the root) until `SHARED[i] >= v`, yielding; fails after `rounds` yields.
pub fn wait_for(i: usize, v: usize, rounds: usize) -> TResult {
    for _ in 0..rounds {
        if sget(i) >= v {
            return Ok(());
        }
        syscall::yield_now();
    }
    Err(fail(format_args!("timed out waiting for shared[{}] >= {:#x} (is {:#x})", i, v, sget(i))))
}
