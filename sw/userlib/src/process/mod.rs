//! Starting a process from a boot module: the root task's loader. A process gets a fresh
//! VSpace (a page table with an ASID) and CSpace (a CNode), its program copied from the ELF
//! into fresh frames with each segment's permissions, a stack, an IPC buffer, a read-only
//! `ProcessInfo` page (`abi::bootinfo::process`) and the caps it is given, then a thread on
//! the chosen hart and priority.
//!
//! Every object comes from one Untyped the caller dedicates to the process, and every cap to
//! those objects lands in a slot range of the caller's CNode: revoking that Untyped
//! (`Process::destroy`) deletes them all, wherever they are mapped or copied, and leaves
//! the slots empty, so a process is torn down with nothing leaked.
//!
//! `modules` finds the boot modules and the manifest's records of them (`sw/image.toml`);
//! `elf` checks a module before anything is read from it; `system` starts every process of
//! the manifest for a root task.
pub mod elf;
mod modules;
pub mod system;

pub use modules::{
    boot_module, given_caps, modules, BootModule, CapSpec, Record, ANY_HART, CAP_ENDPOINT, CAP_NOTIFICATION, MAX_CAPS,
    NO_FAULT,
};

use crate::invoke::{cnode_cap_data, rights, vm_attr};
use crate::tcb::UserContext;
use crate::{cnode, tcb, untyped, vspace};
use abi::bootinfo::process::{ProcessInfo, CNODE, CONSOLE, FIRST_GIVEN, MAGIC};
use abi::bootinfo::SlotRegion;
use abi::{error, layout, object};
use elf::{Elf, ElfError, Segment, PF_W, PF_X};

const PAGE: usize = 1 << object::PAGE_BITS;
/// The caller's CNode is single-level with a guard padding to a word (as the root task's):
/// a slot number is a cptr, resolved with the full depth.
const DEPTH: usize = 64;

/// Why a process could not be started. Whatever was made before the error is destroyed
/// again (the Untyped is revoked), so a failed start leaves the caller's slots empty.
#[derive(Clone, Copy, Debug)]
pub enum Error {
    /// The module is not a loadable program.
    Elf(ElfError),
    /// An invocation failed: which step, and the kernel's error.
    Kernel(&'static str, crate::Error),
    /// The caller's slot range is used up.
    OutOfSlots,
    /// The Untyped is too small for the process.
    OutOfMemory,
    /// A spec that cannot be met (too many caps, a fault index past them, a bad size).
    BadSpec(&'static str),
}

impl From<ElfError> for Error {
    fn from(e: ElfError) -> Error {
        Error::Elf(e)
    }
}

/// A cap to give: copied (minted when `badge` is set) from the caller's `cap` with `rights`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Give {
    pub cap: usize,
    pub rights: usize,
    pub badge: usize,
}

/// How the process runs.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a> {
    /// Its name in its `ProcessInfo` (at most 31 bytes are kept).
    pub name: &'a str,
    /// Hart index (`BootInfo::hart_ids` order) and priority; the priority is also its MCP.
    pub hart: usize,
    pub priority: usize,
    pub stack_pages: usize,
    /// log2 of its CNode's slots (room for `FIRST_GIVEN + caps.len()` at least).
    pub cnode_bits: usize,
    /// Placed at `FIRST_GIVEN..` of its CNode, in order.
    pub caps: &'a [Give],
    /// Index in `caps` of its fault endpoint.
    pub fault: Option<usize>,
    /// Frames of the caller's it shares (channels' rings): mapped into its VSpace too.
    pub shared: &'a [Shared],
}

/// A frame to map into the process as well: a copy of the caller's `frame` cap at `va`, read
/// and `write`, never executable.
#[derive(Clone, Copy, Debug)]
pub struct Shared {
    pub frame: usize,
    pub va: usize,
    pub write: bool,
}

/// What the caller lends the loader.
#[derive(Clone, Copy, Debug)]
pub struct Resources {
    /// An Untyped with no children: every object of the process is retyped from it.
    pub untyped: usize,
    /// Free slots of the caller's CNode for the caps to the process's objects.
    pub slots: SlotRegion,
    /// The caller's CNode and VSpace, an ASID pool and the TCB whose MCP allows `priority`.
    pub cnode: usize,
    pub vspace: usize,
    pub asid_pool: usize,
    pub authority: usize,
    /// A free, page-aligned address of the caller's VSpace where the loader maps each new
    /// frame for a moment to fill it (page tables for it come from the Untyped as well).
    pub scratch: usize,
}

/// A started process: caps to its objects in the caller's CNode.
#[derive(Clone, Copy, Debug)]
pub struct Process {
    pub tcb: usize,
    pub cnode: usize,
    pub vspace: usize,
    pub entry: usize,
    /// The slots of `Resources::slots` it used (empty again after `destroy`).
    pub used: SlotRegion,
    untyped: usize,
    caller_cnode: usize,
}

impl Process {
    /// Let a process made by [`load`] run.
    pub fn resume(&self) -> Result<(), Error> {
        tcb::resume(self.tcb).map_err(|e| Error::Kernel("TCB_Resume", e))
    }

    /// Stop the thread and destroy everything made for the process (revoking its Untyped):
    /// its frames, page tables, CNode (with the caps given to it) and TCB; then the copies of
    /// shared frames (not from the Untyped) left in its slots.
    pub fn destroy(self) -> Result<(), Error> {
        tcb::suspend(self.tcb).map_err(|e| Error::Kernel("TCB_Suspend", e))?;
        cnode::revoke(self.caller_cnode, self.untyped, DEPTH).map_err(|e| Error::Kernel("CNode_Revoke", e))?;
        for s in self.used.start..self.used.end {
            cnode::delete(self.caller_cnode, s, DEPTH).map_err(|e| Error::Kernel("CNode_Delete (shared frame)", e))?;
        }
        Ok(())
    }
}

/// Lowest address a program may load at (page 0 stays unmapped), and the top of its range:
/// below its stack (and one guard page), whose top is the root task's.
pub const LOAD_LO: usize = PAGE;
pub fn load_hi(stack_pages: usize) -> usize {
    layout::ROOT_STACK_TOP - (stack_pages + 1) * PAGE
}

/// Start `module` (an ELF file) as a process; see the module docs.
pub fn start(module: &[u8], spec: &Spec, res: &Resources) -> Result<Process, Error> {
    let p = load(module, spec, res)?;
    p.resume().inspect_err(|_| undo(res))?;
    Ok(p)
}

/// As [`start`], but the thread is left suspended (`Process::resume` lets it run): the caller
/// can finish setting it up first (bind a notification, grant user interrupts).
pub fn load(module: &[u8], spec: &Spec, res: &Resources) -> Result<Process, Error> {
    if spec.caps.len() > (1usize << spec.cnode_bits).saturating_sub(FIRST_GIVEN) || !(4..=12).contains(&spec.cnode_bits)
    {
        return Err(Error::BadSpec("cnode-bits too small for its caps"));
    }
    if spec.fault.is_some_and(|f| f >= spec.caps.len()) {
        return Err(Error::BadSpec("fault endpoint index past the caps"));
    }
    if !(1..=256).contains(&spec.stack_pages) {
        return Err(Error::BadSpec("stack-pages out of 1..=256"));
    }
    // Everything is checked before the first object is made.
    let elf = Elf::parse(module, LOAD_LO, load_hi(spec.stack_pages))?;
    build(&elf, spec, res).inspect_err(|_| undo(res))
}

/// Undo a partial process: everything in it came from the Untyped, but for the copies of
/// shared frames in its slots.
fn undo(res: &Resources) {
    let _ = cnode::revoke(res.cnode, res.untyped, DEPTH);
    for s in res.slots.start..res.slots.end {
        let _ = cnode::delete(res.cnode, s, DEPTH);
    }
}

/// `start` once the module is known to be good.
fn build(elf: &Elf, spec: &Spec, res: &Resources) -> Result<Process, Error> {
    let mut b = Builder { res, next: res.slots.start };
    let vs = b.retype(object::PAGE_TABLE, 0, "VSpace")?;
    b.kernel(vspace::asid_pool_assign(res.asid_pool, vs), "ASIDPool_Assign")?;
    let cn = b.retype(object::CNODE, spec.cnode_bits, "CNode")?;
    let t = b.retype(object::TCB, 0, "TCB")?;

    load_segments(&mut b, elf, vs)?;
    let stack_top = layout::ROOT_STACK_TOP;
    for i in 1..=spec.stack_pages {
        let f = b.retype(object::PAGE_4K, 0, "stack frame")?;
        b.map(f, vs, stack_top - i * PAGE, rights::READ_WRITE, vm_attr::EXECUTE_NEVER)?;
    }
    let ipc = b.retype(object::PAGE_4K, 0, "IPC buffer")?;
    b.map(ipc, vs, layout::ROOT_IPC_BUFFER, rights::READ_WRITE, vm_attr::EXECUTE_NEVER)?;
    for sh in spec.shared {
        let c = b.copy(sh.frame)?;
        let r = if sh.write { rights::READ_WRITE } else { rights::READ };
        b.map(c, vs, sh.va, r, vm_attr::EXECUTE_NEVER)?;
    }

    // Its CSpace: its own CNode (guarded so a slot number is a cptr), then the given caps.
    let guard = cnode_cap_data(0, DEPTH - spec.cnode_bits);
    let (cn_depth, all) = (spec.cnode_bits, rights::ALL);
    b.kernel(cnode::mint(cn, CNODE, cn_depth, res.cnode, cn, DEPTH, all, guard), "CNode_Mint (own CNode)")?;
    // A copy of the caller's Console cap, so the process can print; a caller without one
    // starts it without (its output is refused).
    let _ = cnode::copy(cn, CONSOLE, cn_depth, res.cnode, crate::debug::console(), DEPTH, all);
    for (i, g) in spec.caps.iter().enumerate() {
        let dest = FIRST_GIVEN + i;
        let r = if g.badge != 0 {
            cnode::mint(cn, dest, cn_depth, res.cnode, g.cap, DEPTH, g.rights, g.badge)
        } else {
            cnode::copy(cn, dest, cn_depth, res.cnode, g.cap, DEPTH, g.rights)
        };
        b.kernel(r, "CNode_Copy/Mint (given cap)")?;
    }

    let info_frame = b.retype(object::PAGE_4K, 0, "ProcessInfo frame")?;
    let n = spec.caps.len();
    let mut info = ProcessInfo {
        magic: MAGIC,
        name: [0; 32],
        hart: spec.hart,
        priority: spec.priority,
        ipc_buffer: layout::ROOT_IPC_BUFFER,
        stack_top,
        cnode_size_bits: spec.cnode_bits,
        given: SlotRegion { start: FIRST_GIVEN, end: FIRST_GIVEN + n },
        empty: SlotRegion { start: FIRST_GIVEN + n, end: 1 << spec.cnode_bits },
        fault: spec.fault.unwrap_or(usize::MAX),
    };
    let len = spec.name.len().min(info.name.len() - 1);
    info.name[..len].copy_from_slice(&spec.name.as_bytes()[..len]);
    b.fill(info_frame, |page| {
        // SAFETY: ProcessInfo is plain words and fits the page (asserted in abi).
        let src = unsafe {
            core::slice::from_raw_parts(&info as *const ProcessInfo as *const u8, core::mem::size_of::<ProcessInfo>())
        };
        page[..src.len()].copy_from_slice(src);
    })?;
    b.map(info_frame, vs, layout::ROOT_BOOTINFO, rights::READ, vm_attr::EXECUTE_NEVER)?;

    // The thread: its fault endpoint is a cptr in its own CSpace.
    let fault_ep = spec.fault.map_or(0, |f| FIRST_GIVEN + f);
    b.kernel(tcb::configure(t, fault_ep, cn, guard, vs, 0, layout::ROOT_IPC_BUFFER, ipc), "TCB_Configure")?;
    b.kernel(tcb::set_sched_params(t, res.authority, spec.priority, spec.priority), "TCB_SetSchedParams")?;
    b.kernel(tcb::set_affinity(t, spec.hart), "TCB_SetAffinity")?;
    let mut ctx = UserContext::default();
    ctx.regs[UserContext::PC] = elf.entry;
    ctx.regs[UserContext::SP] = stack_top;
    ctx.regs[UserContext::TP] = layout::ROOT_IPC_BUFFER; // where userlib keeps the IPC buffer
    ctx.set_a(0, layout::ROOT_BOOTINFO);
    b.kernel(tcb::write_registers(t, false, 0, abi::regs::COUNT, &ctx), "TCB_WriteRegisters")?;
    Ok(Process {
        tcb: t,
        cnode: cn,
        vspace: vs,
        entry: elf.entry,
        used: SlotRegion { start: res.slots.start, end: b.next },
        untyped: res.untyped,
        caller_cnode: res.cnode,
    })
}

/// Each page any segment touches gets one fresh frame holding the bytes of every segment in
/// it and the union of their permissions (two segments may share their boundary page).
fn load_segments(b: &mut Builder, elf: &Elf, vs: usize) -> Result<(), Error> {
    let mut done_to = 0; // pages below this address are loaded
    for seg in elf.segments() {
        let mut page = (seg.vaddr & !(PAGE - 1)).max(done_to);
        while page < seg.end() {
            let touching = || elf.segments().filter(move |s| s.vaddr < page + PAGE && s.end() > page);
            let flags = touching().fold(0, |f, s: Segment| f | s.flags);
            let f = b.retype(object::PAGE_4K, 0, "image frame")?;
            // A page with no file bytes (.bss) is left as Retype made it: zero.
            if touching().any(|s| s.bytes_in(elf.bytes, page, page + PAGE).is_some()) {
                b.fill(f, |dst| {
                    for s in touching() {
                        if let Some((at, bytes)) = s.bytes_in(elf.bytes, page, page + PAGE) {
                            dst[at - page..at - page + bytes.len()].copy_from_slice(bytes);
                        }
                    }
                })?;
            }
            let r = if flags & PF_W != 0 { rights::READ_WRITE } else { rights::READ };
            let attr = if flags & PF_X != 0 { vm_attr::DEFAULT } else { vm_attr::EXECUTE_NEVER };
            b.map(f, vs, page, r, attr)?;
            page += PAGE;
            done_to = page;
        }
    }
    Ok(())
}

/// Makes objects from the caller's Untyped into the caller's slots, one after another.
struct Builder<'r> {
    res: &'r Resources,
    next: usize,
}

impl Builder<'_> {
    fn kernel<T>(&self, r: crate::Result<T>, what: &'static str) -> Result<T, Error> {
        r.map_err(|e| if e.code == error::NOT_ENOUGH_MEMORY { Error::OutOfMemory } else { Error::Kernel(what, e) })
    }

    fn retype(&mut self, t: usize, size_bits: usize, what: &'static str) -> Result<usize, Error> {
        if self.next >= self.res.slots.end {
            return Err(Error::OutOfSlots);
        }
        let slot = self.next;
        self.kernel(untyped::retype(self.res.untyped, t, size_bits, self.res.cnode, 0, 0, slot, 1), what)?;
        self.next += 1;
        Ok(slot)
    }

    /// A copy of the caller's cap `cap` in the next slot.
    fn copy(&mut self, cap: usize) -> Result<usize, Error> {
        if self.next >= self.res.slots.end {
            return Err(Error::OutOfSlots);
        }
        let slot = self.next;
        self.kernel(
            cnode::copy(self.res.cnode, slot, DEPTH, self.res.cnode, cap, DEPTH, rights::ALL),
            "CNode_Copy (shared frame)",
        )?;
        self.next += 1;
        Ok(slot)
    }

    /// Map `frame` at `va` of `vs`, adding the page tables the kernel asks for.
    fn map(&mut self, frame: usize, vs: usize, va: usize, r: usize, attr: usize) -> Result<(), Error> {
        // Sv39 has three levels: at most two tables are missing below the root.
        for _ in 0..3 {
            match vspace::page_map(frame, vs, va, r, attr) {
                Err(e) if e.code == error::FAILED_LOOKUP => {
                    let pt = self.retype(object::PAGE_TABLE, 0, "page table")?;
                    self.kernel(vspace::page_table_map(pt, vs, va, vm_attr::DEFAULT), "PageTable_Map")?;
                }
                r => return self.kernel(r, "Page_Map"),
            }
        }
        Err(Error::Kernel("Page_Map", crate::Error { code: error::FAILED_LOOKUP, mrs: [0; 4] }))
    }

    /// Map `frame` at the scratch address for a moment and let `f` write it.
    fn fill(&mut self, frame: usize, f: impl FnOnce(&mut [u8; PAGE])) -> Result<(), Error> {
        let (vs, va) = (self.res.vspace, self.res.scratch);
        self.map(frame, vs, va, rights::READ_WRITE, vm_attr::EXECUTE_NEVER)?;
        // SAFETY: `frame` is a fresh frame the kernel just mapped at `va`, page-aligned, and
        // nothing else refers to it until it is unmapped below.
        f(unsafe { &mut *(va as *mut [u8; PAGE]) });
        self.kernel(vspace::page_unmap(frame), "Page_Unmap (scratch)")
    }
}
