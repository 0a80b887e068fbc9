//! Creating the root task, as seL4 does at boot: its CNode, VSpace (loaded from the ELF among
//! the image's boot modules), TCB, IPC buffer and boot-info page, capabilities to all of it,
//! and every byte of free memory as Untyped capabilities described in the boot info.
use crate::mm::{self, frames};
use crate::object::{self, asid, tcb, vspace, KSlots};
use crate::{kprintln, sched};
use abi::bootinfo::{
    device_kind, BootInfo, DeviceDesc, Modules as BootModules, SlotRegion, UntypedDesc, MAX_MODULES, MAX_UNTYPEDS,
    MODULES_VADDR,
};
use abi::{init_cap, layout, object::MAX_UNTYPED_BITS};
use caps::{cap::PT_ROOT, Cap, Mdb, Rights, Slot, Slots};
use devtree::Region;
use sv39::{Flags, PAGE_SIZE};
use xmas_elf::{program::Type, ElfFile};

/// The boot-module window, if the image carries a valid table there (QEMU with OpenSBI and
/// `-kernel` has none unless the modules are loaded separately).
pub fn modules() -> Option<bootmods::Modules<'static>> {
    let base = platform::image::MODULES_BASE;
    let size = platform::image::MODULES_MAX_SIZE;
    let m = crate::machine::try_get()?;
    if !m.memory.iter().any(|r| r.contains(base) && r.contains(base + size - 1)) {
        return None;
    }
    // SAFETY: inside RAM, mapped in the window; only read.
    let window = unsafe { core::slice::from_raw_parts(mm::phys_to_virt(base) as *const u8, size) };
    bootmods::Modules::parse(window).ok()
}

/// Physical memory the modules occupy (kept from the frame allocator).
pub fn modules_region() -> Option<Region> {
    modules().map(|m| Region { base: platform::image::MODULES_BASE, size: m.used() })
}

#[derive(Debug)]
#[allow(dead_code)] // the fields are read through Debug in the boot panic message
pub enum LoadError {
    NotElf(&'static str),
    NotRiscv64,
    SegmentOutsideUserSpace(usize),
    OutOfMemory,
    RootCNodeFull,
}

/// Builds the root CNode's contents in order.
struct Root {
    cnode: u64,
    next: usize,
    vspace: u64,
}

impl Root {
    fn slot(&self, i: usize) -> u64 {
        KSlots.cnode_slot(self.cnode, i as u64)
    }
    /// An original cap (no parent) in slot `i`.
    fn put(&self, i: usize, cap: Cap) {
        KSlots.set(self.slot(i), Slot { cap, mdb: Mdb { prev: 0, next: 0, revocable: true, first_badged: true } });
    }
    fn push(&mut self, cap: Cap) -> Result<usize, LoadError> {
        if self.next >= 1 << init_cap::ROOT_CNODE_BITS {
            return Err(LoadError::RootCNodeFull);
        }
        let i = self.next;
        self.put(i, cap);
        self.next += 1;
        Ok(i)
    }
    /// Map a fresh zeroed frame at `va` and record its cap (mapped) in the root CNode.
    fn map_new(
        &mut self,
        va: usize,
        flags: Flags,
        paging: &mut heapless::Vec<(u64, u64), 64>,
    ) -> Result<u64, LoadError> {
        self.map_filled(va, flags, paging, |page| page.fill(0))
    }

    /// `map_new` with the frame's contents written by `fill` (every byte of the page).
    fn map_filled(
        &mut self,
        va: usize,
        flags: Flags,
        paging: &mut heapless::Vec<(u64, u64), 64>,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<u64, LoadError> {
        let pa = frames::alloc_filled(fill).ok_or(LoadError::OutOfMemory)? as u64;
        let mut err = false;
        vspace::boot_map(self.vspace, va, pa as usize, flags, &mut |level| {
            let t = frames::alloc_zeroed().unwrap_or(0) as u64;
            // Its cap records the address the table covers from, as PageTable_Map does.
            let covered = va as u64 & !((1u64 << (12 + 9 * level)) - 1);
            err |= t == 0 || paging.push((t, covered)).is_err();
            t
        });
        if err {
            return Err(LoadError::OutOfMemory);
        }
        self.push(Cap::Frame { base: pa, size_bits: 12, rights: Rights::ALL, mapped: Some((1, va as u64)) })?;
        Ok(pa)
    }
}

fn elf_flags(f: xmas_elf::program::Flags) -> Flags {
    let mut flags = Flags(0);
    if f.is_read() {
        flags = flags | Flags::R;
    }
    if f.is_write() {
        flags = flags | Flags::R | Flags::W;
    }
    if f.is_execute() {
        flags = flags | Flags::X;
    }
    flags
}

fn load_elf(root: &mut Root, bytes: &[u8], paging: &mut heapless::Vec<(u64, u64), 64>) -> Result<usize, LoadError> {
    let elf = ElfFile::new(bytes).map_err(LoadError::NotElf)?;
    if elf.header.pt2.machine().as_machine() != xmas_elf::header::Machine::RISC_V {
        return Err(LoadError::NotRiscv64);
    }
    for ph in elf.program_iter() {
        if ph.get_type() != Ok(Type::Load) || ph.mem_size() == 0 {
            continue;
        }
        let (va, memsz, filesz, off) =
            (ph.virtual_addr() as usize, ph.mem_size() as usize, ph.file_size() as usize, ph.offset() as usize);
        let end = va.checked_add(memsz).ok_or(LoadError::SegmentOutsideUserSpace(va))?;
        if end > layout::ROOT_STACK_TOP - layout::ROOT_STACK_PAGES * PAGE_SIZE
            || filesz > memsz
            || off.checked_add(filesz).is_none_or(|e| e > bytes.len())
        {
            return Err(LoadError::SegmentOutsideUserSpace(va));
        }
        let flags = elf_flags(ph.flags());
        let mut page = va & !(PAGE_SIZE - 1);
        while page < end {
            // The file's bytes on this page (none past `filesz`: that is zeroed memory).
            let lo = page.max(va);
            let hi = (page + PAGE_SIZE).min(va + filesz).max(lo);
            let src: &[u8] = if hi > lo { &bytes[off + (lo - va)..off + (hi - va)] } else { &[] };
            let (at, len) = (lo - page, hi - lo);
            match vspace::boot_translate(root.vspace, page) {
                // Segments may share a page at their boundary: write into the one mapped.
                Some(pa) => {
                    // SAFETY: `pa` is a frame we own, mapped in the kernel window.
                    let dst = unsafe { core::slice::from_raw_parts_mut(mm::phys_to_virt(pa) as *mut u8, PAGE_SIZE) };
                    dst[at..at + len].copy_from_slice(src);
                }
                // A new page is written once: zeros around the file's bytes.
                None => {
                    root.map_filled(page, flags, paging, |p| {
                        p[..at].fill(0);
                        p[at..at + len].copy_from_slice(src);
                        p[at + len..].fill(0);
                    })?;
                }
            }
            page += PAGE_SIZE;
        }
    }
    Ok(elf.header.pt2.entry_point() as usize)
}

/// Map the whole boot-module window (table and files) read-only at `bootinfo::MODULES_VADDR`
/// with a read-only frame cap per page, so the root task can start processes from the
/// modules (`userlib::process`) without a copy. The window is kept from the frame allocator
/// (`modules_region`), so these frames belong to no Untyped. Returns the caps' slots and the
/// bytes mapped.
fn map_modules(root: &mut Root, paging: &mut heapless::Vec<(u64, u64), 64>) -> Result<(SlotRegion, usize), LoadError> {
    let start = root.next;
    let Some(region) = modules_region() else { return Ok((SlotRegion { start, end: start }, 0)) };
    let size = region.size.next_multiple_of(PAGE_SIZE);
    let read_only = Rights { read: true, ..Rights::NONE };
    for off in (0..size).step_by(PAGE_SIZE) {
        let (va, pa) = (MODULES_VADDR + off, region.base + off);
        let mut err = false;
        vspace::boot_map(root.vspace, va, pa, Flags::R, &mut |level| {
            let t = frames::alloc_zeroed().unwrap_or(0) as u64;
            err |= t == 0 || paging.push((t, va as u64 & !((1u64 << (12 + 9 * level)) - 1))).is_err();
            t
        });
        if err {
            return Err(LoadError::OutOfMemory);
        }
        root.push(Cap::Frame { base: pa as u64, size_bits: 12, rights: read_only, mapped: Some((1, va as u64)) })?;
    }
    Ok((SlotRegion { start, end: root.next }, size))
}

/// The boot info's list of the modules: name, where each is mapped, size, its frames' slots.
fn list_modules(out: &mut BootModules, mods: &bootmods::Modules, frames: SlotRegion, window_size: usize) {
    out.window_vaddr = MODULES_VADDR;
    out.window_size = window_size;
    out.frames = frames;
    out.count = 0;
    for m in (0..mods.len()).filter_map(|i| mods.get(i).ok()).take(MAX_MODULES) {
        let d = &mut out.list[out.count];
        let n = m.name.len().min(d.name.len() - 1);
        d.name[..n].copy_from_slice(&m.name.as_bytes()[..n]);
        d.vaddr = MODULES_VADDR + m.offset;
        d.size = m.data.len();
        let first = frames.start + m.offset / PAGE_SIZE;
        d.frames = SlotRegion { start: first, end: first + m.data.len().div_ceil(PAGE_SIZE) };
        out.count += 1;
        kprintln!("[kernel] boot module '{}': {} bytes, read-only at {:#x} for the root task", m.name, d.size, d.vaddr);
    }
}

/// Split a region into naturally aligned power-of-two blocks (Untyped objects).
fn untyped_blocks(r: Region, mut f: impl FnMut(usize, u8)) {
    let (mut base, end) = (r.base, r.end());
    while base < end {
        let align_bits = base.trailing_zeros().min(MAX_UNTYPED_BITS as u32);
        let size_bits = (usize::BITS - 1 - (end - base).leading_zeros()).min(align_bits) as u8;
        if size_bits < 4 {
            break;
        }
        f(base, size_bits);
        base += 1 << size_bits;
    }
}

/// Build the root task and make it runnable on this hart. `Ok(false)`: no root task in the
/// image (the boot checks were the whole run).
pub fn create(m: &devtree::Machine) -> Result<bool, LoadError> {
    let Some(mods) = modules() else {
        kprintln!("[kernel] no boot modules in the image: no root task to start");
        return Ok(false);
    };
    let Some(module) = mods.find("roottask") else {
        kprintln!("[kernel] boot modules without a 'roottask'");
        return Ok(false);
    };
    let hart = crate::percpu::this().hart;
    let slot_bytes = caps::cdt::SLOT_BYTES as usize;
    let cnode_bits = init_cap::ROOT_CNODE_BITS as u8;
    let cnode = frames::alloc_aligned((1 << cnode_bits) * slot_bytes).ok_or(LoadError::OutOfMemory)? as u64;
    for i in 0..(1u64 << cnode_bits) {
        KSlots.set(KSlots.cnode_slot(cnode, i), Slot::default());
    }
    let alloc = || frames::alloc_zeroed().map(|p| p as u64).ok_or(LoadError::OutOfMemory);
    let (vs, pool, tcb_pa, bi_pa, ipc_pa) = (alloc()?, alloc()?, alloc()?, alloc()?, alloc()?);
    let mut root = Root { cnode, next: init_cap::FIRST_FREE, vspace: vs };

    // The VSpace with ASID 1 from the initial pool.
    vspace::copy_kernel_half(vs);
    asid::boot_pool(pool);
    asid::assign(pool, 1, vs);
    let root_cnode = Cap::CNode { base: cnode, radix: cnode_bits, guard: 0, guard_bits: 64 - cnode_bits };
    root.put(init_cap::CNODE, root_cnode);
    root.put(init_cap::VSPACE, Cap::PageTable { base: vs, mapped: Some((1, PT_ROOT)) });
    root.put(init_cap::IRQ_CONTROL, Cap::IrqControl);
    object::irq::set_control_slot(root.slot(init_cap::IRQ_CONTROL));
    root.put(init_cap::ASID_CONTROL, Cap::AsidControl);
    root.put(init_cap::DEBUG, Cap::DebugControl);
    root.put(init_cap::UINTR_CONTROL, Cap::UintrControl);
    root.put(init_cap::CONSOLE, Cap::Console);
    root.put(init_cap::ASID_POOL, Cap::AsidPool { base: pool, asid_base: 0 });

    // The image, then stack, boot info and IPC buffer, each with a frame cap.
    let mut paging: heapless::Vec<(u64, u64), 64> = heapless::Vec::new();
    let frames_start = root.next;
    let entry = load_elf(&mut root, module.data, &mut paging)?;
    for i in 1..=layout::ROOT_STACK_PAGES {
        root.map_new(layout::ROOT_STACK_TOP - i * PAGE_SIZE, Flags::RW, &mut paging)?;
    }
    let frames_end = root.next;
    // Their tables get caps like every other (the consistency checker wants every table
    // vouched for, and the root task can then unmap them).
    for (va, pa, flags) in [(layout::ROOT_BOOTINFO, bi_pa, Flags::R), (layout::ROOT_IPC_BUFFER, ipc_pa, Flags::RW)] {
        let mut err = false;
        vspace::boot_map(vs, va, pa as usize, flags, &mut |level| {
            let t = frames::alloc_zeroed().unwrap_or(0) as u64;
            err |= t == 0 || paging.push((t, va as u64 & !((1u64 << (12 + 9 * level)) - 1))).is_err();
            t
        });
        if err {
            return Err(LoadError::OutOfMemory);
        }
    }
    let (module_frames, window_size) = map_modules(&mut root, &mut paging)?;
    root.put(
        init_cap::BOOTINFO_FRAME,
        Cap::Frame { base: bi_pa, size_bits: 12, rights: Rights::ALL, mapped: Some((1, layout::ROOT_BOOTINFO as u64)) },
    );
    root.put(
        init_cap::IPC_BUFFER,
        Cap::Frame {
            base: ipc_pa,
            size_bits: 12,
            rights: Rights::ALL,
            mapped: Some((1, layout::ROOT_IPC_BUFFER as u64)),
        },
    );
    let paging_start = root.next;
    for (pt, va) in paging.iter() {
        root.push(Cap::PageTable { base: *pt, mapped: Some((1, *va)) })?;
    }
    let paging_end = root.next;

    // The thread.
    tcb::create(tcb_pa, hart);
    root.put(init_cap::TCB, Cap::Tcb { obj: tcb_pa });
    let t = object::at::<tcb::Tcb>(tcb_pa);
    let s = &mut KSlots;
    let _ = caps::cdt::insert(s, root.slot(init_cap::CNODE), t.slot(tcb::CTABLE), root_cnode);
    let _ = caps::cdt::insert(
        s,
        root.slot(init_cap::VSPACE),
        t.slot(tcb::VTABLE),
        Cap::PageTable { base: vs, mapped: Some((1, PT_ROOT)) },
    );
    let buf = Cap::Frame { base: ipc_pa, size_bits: 12, rights: Rights::ALL, mapped: None };
    let _ = caps::cdt::insert(s, root.slot(init_cap::IPC_BUFFER), t.slot(tcb::BUFFER), buf);
    t.ipc_buffer = layout::ROOT_IPC_BUFFER;
    t.prio = abi::sched::ROOT_PRIORITY as u8;
    t.mcp = abi::sched::ROOT_PRIORITY as u8;
    t.is_root = true;
    t.uintr_grants = abi::uintr::GRANT_RECEIVE as u8;
    t.ctx.sepc = entry;
    t.ctx.regs[2] = layout::ROOT_STACK_TOP;
    t.ctx.regs[10] = layout::ROOT_BOOTINFO;

    // Boot info, and all remaining RAM (plus device regions nobody else uses) as Untyped.
    let bi = object::at::<BootInfo>(bi_pa);
    bi.num_nodes = m.harts.len();
    bi.node_id = m.harts.iter().position(|h| h.id == hart).unwrap_or(0);
    for (i, h) in m.harts.iter().enumerate().take(bi.hart_ids.len()) {
        bi.hart_ids[i] = h.id;
    }
    bi.ipc_buffer = layout::ROOT_IPC_BUFFER;
    bi.user_image_frames = SlotRegion { start: frames_start, end: frames_end };
    bi.user_image_paging = SlotRegion { start: paging_start, end: paging_end };
    bi.init_cnode_size_bits = cnode_bits as usize;
    bi.timebase_hz = m.timebase_hz as usize;
    (bi.uintr_mode, bi.uintr_slots) = crate::uintr::abi_mode();
    // The CLINT's mtime page, read-only: user clocks read the timebase with a load instead of
    // `rdtime`, which traps to the firmware on cores without a `time` CSR (~400 cycles). The
    // page holds mtime alone, so no timer compare or IPI register is reachable through it.
    if let Some(c) = m.clint.filter(|c| c.size > devtree::clint::MTIME + 7) {
        let mtime = c.base + devtree::clint::MTIME;
        let read_only = Rights { read: true, ..Rights::NONE };
        let page = (mtime & !(PAGE_SIZE - 1)) as u64;
        if let Ok(slot) = root.push(Cap::Frame { base: page, size_bits: 12, rights: read_only, mapped: None }) {
            bi.timer_frame = abi::bootinfo::TimerFrame { slot, offset: mtime & (PAGE_SIZE - 1) };
        }
    }
    let ut_start = root.next;
    let mut n = 0;
    let mut total = 0usize;
    // (kind, irq, irq2) of a device untyped: abi::bootinfo::device_kind and its PLIC sources.
    let mut add = |root: &mut Root, base: usize, bits: u8, device: bool, (kind, irq, irq2): (u8, u32, u32)| {
        if n < MAX_UNTYPEDS
            && root.push(Cap::Untyped { base: base as u64, size_bits: bits, free_index: 0, device, cleared: 0 }).is_ok()
        {
            let irq = u16::try_from(irq).unwrap_or(0);
            let irq2 = u16::try_from(irq2).unwrap_or(0);
            bi.untyped_list[n] =
                UntypedDesc { paddr: base, size_bits: bits, is_device: device as u8, irq, kind, _pad: 0, irq2 };
            n += 1;
        }
    };
    for r in frames::take_remaining() {
        untyped_blocks(r, |b, bits| {
            add(&mut root, b, bits, false, (device_kind::NONE, 0, 0));
            total += 1 << bits;
        });
    }
    for v in m.virtio_mmio.iter() {
        let base = v.reg.base & !(PAGE_SIZE - 1);
        add(&mut root, base, 12, true, (device_kind::VIRTIO_MMIO, v.irq.unwrap_or(0), 0));
    }
    // The board's NIC (AXI DMA + AXI Ethernet): the first page of each holds every register a
    // driver uses (PG021: 0x00-0x5C; PG138: up to the MDIO registers at 0x500-0x50C).
    if let Some(d) = m.axi_dma {
        add(&mut root, d.reg.base & !(PAGE_SIZE - 1), 12, true, (device_kind::AXI_DMA, d.tx_irq, d.rx_irq));
    }
    if let Some(e) = m.axi_ethernet {
        add(&mut root, e.reg.base & !(PAGE_SIZE - 1), 12, true, (device_kind::AXI_ETHERNET, e.mac_irq, e.irq));
    }
    // User-level device interrupts: each hart's PLIC U-context page.
    for (i, h) in m.harts.iter().enumerate().take(bi.plic_user_context.len()) {
        if let Some(page) = crate::uintr::ueip::context_page(h.id) {
            bi.plic_user_context[i] = page;
            add(&mut root, page, 12, true, (device_kind::PLIC_USER_CONTEXT, 0, 0));
        }
    }
    // The console UART, for a user driver (the kernel only polls it to print).
    if let Some(u) = m.uart {
        let page = u.reg.base & !(PAGE_SIZE - 1);
        bi.console_uart = DeviceDesc {
            paddr: u.reg.base,
            reg_shift: u.reg_shift as usize,
            io_width: u.reg_io_width.max(1) as usize,
            irq: u.irq.unwrap_or(0) as usize,
        };
        add(&mut root, page, 12, true, (device_kind::CONSOLE_UART, u.irq.unwrap_or(0), 0));
    }
    list_modules(&mut bi.modules, &mods, module_frames, window_size);
    bi.untyped = SlotRegion { start: ut_start, end: root.next };
    bi.empty = SlotRegion { start: root.next, end: 1 << cnode_bits };
    kprintln!(
        "[kernel] root task: {} bytes of ELF, entry {:#x}; {} image frames, {} untyped caps ({} MiB of RAM), slots {}..{} free",
        module.data.len(),
        entry,
        frames_end - frames_start,
        n,
        total >> 20,
        bi.empty.start,
        bi.empty.end
    );
    object::irq::init(m, hart);
    sched::make_runnable(t);
    Ok(true)
}
