//! A root task starting its whole system: every process of the image manifest (`[process.*]`
//! of the system's manifest, packed as boot modules) is loaded, suspended, with the named
//! endpoints and notifications its record gives it (one object per name, made here), on its
//! hart and priority; the root task then finishes what the manifest cannot say (shared frames,
//! user-interrupt wiring) and resumes them. [`RootAlloc`] is the root task's simple allocator
//! of memory, slots and addresses for it.
use super::{elf, Error, Give, Process, Record, Resources, Shared, Spec, CAP_ENDPOINT, CAP_NOTIFICATION, MAX_CAPS};
use crate::invoke::{rights, vm_attr};
use crate::{bootinfo, untyped, vspace};
use abi::bootinfo::{BootInfo, SlotRegion};
use abi::{error, init_cap, object};

const PAGE: usize = 1 << object::PAGE_BITS;
/// Named objects a system can have, and processes besides the root task.
pub const MAX_OBJECTS: usize = 32;
pub const MAX_PROCESSES: usize = 12;
/// The module of the root task itself (the kernel started it).
pub const ROOT_MODULE: &str = "roottask";

/// Bump allocation for a root task: objects from the boot Untypeds (RAM, the largest first, so
/// most requests succeed at the first Retype), slots from `BootInfo.empty`, 2 MiB regions of
/// its address space from `VA_BASE` up. Nothing is freed.
pub struct RootAlloc {
    bi: &'static BootInfo,
    next_slot: usize,
    next_va: usize,
    /// RAM Untyped caps, largest first.
    order: [u16; abi::bootinfo::MAX_UNTYPEDS],
    n: usize,
}

/// Where the root task's own mappings made by `RootAlloc` start (above its image, far below
/// its stack).
pub const VA_BASE: usize = 0x10_0000_0000;
const REGION: usize = 1 << 21;

impl RootAlloc {
    pub fn new(bi: &'static BootInfo) -> RootAlloc {
        let mut a = RootAlloc {
            bi,
            next_slot: bi.empty.start,
            next_va: VA_BASE,
            order: [0; abi::bootinfo::MAX_UNTYPEDS],
            n: 0,
        };
        for (i, (_, d)) in bootinfo::untypeds(bi).enumerate() {
            if d.is_device == 0 {
                a.order[a.n] = i as u16;
                a.n += 1;
            }
        }
        let list = &bi.untyped_list;
        a.order[..a.n].sort_unstable_by_key(|&i| core::cmp::Reverse(list[i as usize].size_bits));
        a
    }

    pub fn slots(&mut self, n: usize) -> Result<SlotRegion, Error> {
        let start = self.next_slot;
        if start + n > self.bi.empty.end {
            return Err(Error::OutOfSlots);
        }
        self.next_slot += n;
        Ok(SlotRegion { start, end: start + n })
    }

    /// One object of type `ty` (`abi::object`, `bits` for the sized ones) in a fresh slot.
    pub fn object(&mut self, ty: usize, bits: usize) -> Result<usize, Error> {
        let slot = self.slots(1)?.start;
        self.retype_into(ty, bits, slot)?;
        Ok(slot)
    }

    /// A sender table for thread `tcb` (retyped here, so charged to the root task's memory),
    /// bound to it: `tcb` can then be given U-notification sender entries.
    pub fn sender_table(&mut self, tcb: usize) -> Result<usize, Error> {
        let table = self.object(abi::object::UINTR_SENDER_TABLE, 0)?;
        crate::uintr::sender_table_bind(table, tcb).map_err(|e| Error::Kernel("SenderTableBind", e))?;
        Ok(table)
    }

    /// A free 2 MiB-aligned region of the root task's address space (no page table yet).
    pub fn region(&mut self) -> usize {
        let va = self.next_va;
        self.next_va += REGION;
        va
    }

    /// Map `frame` at `va` of the root task's VSpace, adding page tables as needed.
    pub fn map(&mut self, frame: usize, va: usize, write: bool) -> Result<(), Error> {
        let r = if write { rights::READ_WRITE } else { rights::READ };
        for _ in 0..3 {
            match vspace::page_map(frame, init_cap::VSPACE, va, r, vm_attr::EXECUTE_NEVER) {
                Err(e) if e.code == error::FAILED_LOOKUP => {
                    let pt = self.object(object::PAGE_TABLE, 0)?;
                    vspace::page_table_map(pt, init_cap::VSPACE, va, vm_attr::DEFAULT)
                        .map_err(|e| Error::Kernel("PageTable_Map", e))?;
                }
                r => return r.map_err(|e| Error::Kernel("Page_Map", e)),
            }
        }
        Err(Error::Kernel("Page_Map", crate::Error { code: error::FAILED_LOOKUP, mrs: [0; 4] }))
    }

    /// `pages` fresh frames mapped contiguously (writable) in a new region of the root task's
    /// VSpace: (address, first frame cap; the others follow it slot by slot).
    pub fn shared_pages(&mut self, pages: usize) -> Result<(usize, usize), Error> {
        let va = self.region();
        if pages * PAGE > REGION {
            return Err(Error::BadSpec("shared pages beyond a 2 MiB region"));
        }
        let first = self.slots(pages)?;
        for i in 0..pages {
            // The frames take consecutive slots: retype into each reserved one.
            let slot = first.start + i;
            self.retype_into(object::PAGE_4K, 0, slot)?;
            self.map(slot, va + i * PAGE, true)?;
        }
        Ok((va, first.start))
    }

    fn retype_into(&mut self, ty: usize, bits: usize, slot: usize) -> Result<(), Error> {
        for &i in &self.order[..self.n] {
            let ut = self.bi.untyped.start + i as usize;
            match untyped::retype(ut, ty, bits, init_cap::CNODE, 0, 0, slot, 1) {
                Ok(()) => return Ok(()),
                Err(e) if e.code == error::NOT_ENOUGH_MEMORY => continue,
                Err(e) => return Err(Error::Kernel("Untyped_Retype", e)),
            }
        }
        Err(Error::OutOfMemory)
    }
}

/// A process of the system, loaded and (after `System::resume_all`) running.
#[derive(Clone, Copy, Debug)]
pub struct Member {
    pub name: &'static str,
    pub record: Record,
    pub process: Process,
    /// Hart index it was placed on.
    pub hart: usize,
}

pub struct System {
    /// The root task's cap to each named object (by the manifest's object number; 0: none).
    pub objects: [usize; MAX_OBJECTS],
    members: [Option<Member>; MAX_PROCESSES],
    count: usize,
}

impl System {
    /// Load every process of the boot modules but the root task's, suspended, in manifest
    /// order. `shared(name)` gives the frames to map into that process besides its program.
    /// On an error, the name of the process it concerns.
    pub fn load<'a>(
        bi: &'static BootInfo,
        alloc: &mut RootAlloc,
        shared: impl Fn(&str) -> &'a [Shared],
    ) -> Result<System, (&'static str, Error)> {
        let mut sys = System { objects: [0; MAX_OBJECTS], members: [None; MAX_PROCESSES], count: 0 };
        for m in super::modules(bi) {
            if m.name == ROOT_MODULE {
                continue;
            }
            if sys.count == MAX_PROCESSES {
                return Err((m.name, Error::BadSpec("more processes than System holds")));
            }
            let member = sys.load_one(bi, alloc, &m, shared(m.name)).map_err(|e| (m.name, e))?;
            sys.members[sys.count] = Some(member);
            sys.count += 1;
        }
        Ok(sys)
    }

    fn load_one(
        &mut self,
        bi: &BootInfo,
        alloc: &mut RootAlloc,
        m: &super::BootModule,
        shared: &[Shared],
    ) -> Result<Member, Error> {
        let rec = m.record;
        for c in rec.caps() {
            let o = c.object as usize;
            if o >= MAX_OBJECTS {
                return Err(Error::BadSpec("more named objects than System holds"));
            }
            if self.objects[o] == 0 {
                let ty = match c.kind {
                    CAP_ENDPOINT => object::ENDPOINT,
                    CAP_NOTIFICATION => object::NOTIFICATION,
                    _ => return Err(Error::BadSpec("unknown cap kind")),
                };
                self.objects[o] = alloc.object(ty, 0)?;
            }
        }
        let mut give = [Give::default(); MAX_CAPS];
        let n = super::given_caps(&rec, &self.objects, &mut give)?;
        let harts = bootinfo::harts(bi);
        let hart = if (rec.hart as usize) < harts { rec.hart as usize } else { bi.node_id };
        let spec = Spec {
            name: m.name,
            hart,
            priority: rec.priority as usize,
            stack_pages: rec.stack_pages as usize,
            cnode_bits: rec.cnode_bits as usize,
            caps: &give[..n],
            fault: (rec.fault != super::NO_FAULT).then_some(rec.fault as usize),
            shared,
        };
        // Memory: its pages, stack, shared mappings, page tables and kernel objects, rounded
        // up to a power of two; one slot per object.
        let elf = elf::Elf::parse(m.bytes, super::LOAD_LO, super::load_hi(spec.stack_pages))?;
        let image_pages: usize = elf.segments().map(|s| s.end().div_ceil(PAGE) - s.vaddr / PAGE).sum();
        let objects = image_pages + spec.stack_pages + shared.len() + 32;
        let bytes = objects * PAGE + (1 << (spec.cnode_bits + object::SLOT_BITS));
        let bits = bytes.next_power_of_two().trailing_zeros() as usize;
        let res = Resources {
            untyped: alloc.object(object::UNTYPED, bits)?,
            slots: alloc.slots(objects)?,
            cnode: init_cap::CNODE,
            vspace: init_cap::VSPACE,
            asid_pool: init_cap::ASID_POOL,
            authority: init_cap::TCB,
            scratch: alloc.region(),
        };
        let process = super::load(m.bytes, &spec, &res)?;
        Ok(Member { name: m.name, record: rec, process, hart })
    }

    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.members[..self.count].iter().flatten()
    }

    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members().find(|m| m.name == name)
    }

    /// The root task's cap to the object a member's given cap `i` names.
    pub fn object_of(&self, m: &Member, i: usize) -> Option<usize> {
        let c = m.record.caps().get(i)?;
        self.objects.get(c.object as usize).copied().filter(|&o| o != 0)
    }

    /// Let every member run.
    pub fn resume_all(&self) -> Result<(), (&'static str, Error)> {
        for m in self.members() {
            m.process.resume().map_err(|e| (m.name, e))?;
        }
        Ok(())
    }
}
