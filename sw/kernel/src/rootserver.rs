//! Starting the root task: find it among the image's boot modules, load its ELF into a new
//! address space, give it a stack, and enter it in user mode.
use crate::arch::{self, trap::UserContext};
use crate::mm::{self, vspace::VSpace};
use crate::{kprintln, thread};
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
    Map(sv39::MapError),
}

fn load_elf(vs: &mut VSpace, bytes: &[u8]) -> Result<usize, LoadError> {
    let elf = ElfFile::new(bytes).map_err(LoadError::NotElf)?;
    if elf.header.pt2.machine().as_machine() != xmas_elf::header::Machine::RISC_V {
        return Err(LoadError::NotRiscv64);
    }
    for ph in elf.program_iter() {
        if ph.get_type() != Ok(Type::Load) || ph.mem_size() == 0 {
            continue;
        }
        let (va, memsz, filesz, off) = (ph.virtual_addr() as usize, ph.mem_size() as usize, ph.file_size() as usize, ph.offset() as usize);
        let end = va.checked_add(memsz).ok_or(LoadError::SegmentOutsideUserSpace(va))?;
        if end > abi::layout::USER_TOP || filesz > memsz || off.checked_add(filesz).is_none_or(|e| e > bytes.len()) {
            return Err(LoadError::SegmentOutsideUserSpace(va));
        }
        let f = ph.flags();
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
        let mut page = va & !(PAGE_SIZE - 1);
        while page < end {
            // Segments may share a page at their boundary: reuse it if already mapped.
            let pa = match vs.translate(page) {
                Some((pa, _)) => pa,
                None => vs.map_new_page(page, flags).map_err(LoadError::Map)?,
            };
            // Copy the part of the file image that falls in this page.
            let lo = page.max(va);
            let hi = (page + PAGE_SIZE).min(va + filesz);
            if lo < hi {
                let src = &bytes[off + (lo - va)..off + (hi - va)];
                // SAFETY: `pa` is a frame we own, mapped in the kernel window.
                unsafe {
                    core::ptr::copy_nonoverlapping(src.as_ptr(), (mm::phys_to_virt(pa) + (lo - page)) as *mut u8, src.len())
                };
            }
            page += PAGE_SIZE;
        }
    }
    Ok(elf.header.pt2.entry_point() as usize)
}

static mut ROOT: UserContext = UserContext::new();

/// Load and enter the root task on this hart. Returns only if there is none or it is invalid.
pub fn start() -> Result<(), LoadError> {
    let Some(mods) = modules() else {
        kprintln!("[kernel] no boot modules in the image: no root task to start");
        return Ok(());
    };
    let Some(root) = mods.find("roottask") else {
        kprintln!("[kernel] boot modules without a 'roottask'");
        return Ok(());
    };
    let mut vs = VSpace::new().map_err(LoadError::Map)?;
    let entry = load_elf(&mut vs, root.data)?;
    let top = abi::layout::ROOT_STACK_TOP;
    for i in 1..=abi::layout::ROOT_STACK_PAGES {
        vs.map_new_page(top - i * PAGE_SIZE, Flags::RW).map_err(LoadError::Map)?;
    }
    kprintln!(
        "[kernel] root task: {} bytes of ELF, entry {:#x}, stack top {:#x}",
        root.data.len(),
        entry,
        top
    );
    vs.activate();
    // SAFETY: only the boot hart touches ROOT, once.
    let ctx = unsafe { &mut *(&raw mut ROOT) };
    *ctx = thread::initial_context(entry, top);
    arch::trap::enter_user(ctx)
}
