//! Reads a flattened device tree once into a small, allocation-free [`Machine`] description.
//! The firmware and the kernel both use it, so QEMU `virt` and our Rocket SoC are told apart
//! only by their device trees, never by build flags.
#![no_std]

use heapless::Vec;

pub const MAX_HARTS: usize = 8;
pub const MAX_REGIONS: usize = 8;
pub const MAX_VIRTIO: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub base: usize,
    pub size: usize,
}

impl Region {
    pub fn end(&self) -> usize {
        self.base + self.size
    }
    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr - self.base < self.size
    }
    pub fn overlaps(&self, other: &Region) -> bool {
        self.base < other.end() && other.base < self.end()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hart {
    pub id: usize,
    /// Supervisor timer compare (`stimecmp`) is implemented.
    pub sstc: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uart {
    pub reg: Region,
    pub reg_shift: u32,
    pub reg_io_width: u32,
    pub clock_hz: u32,
    pub irq: Option<u32>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plic {
    pub reg: Region,
    pub sources: u32,
    /// The PLIC context that interrupts each hart in S-mode, by hart id (from
    /// `interrupts-extended`: the entry naming the hart's controller with cause 9).
    pub s_context: [Option<u16>; MAX_HARTS],
    /// The context that raises each hart's user external interrupt (mip.UEIP, cause 8), by
    /// hart id: our SoC's user-level device interrupts (uintr-spec.md section 1); none on QEMU.
    pub u_context: [Option<u16>; MAX_HARTS],
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uintc {
    pub reg: Region,
    pub slots: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VirtioMmio {
    pub reg: Region,
    pub irq: Option<u32>,
}

/// The board's AXI DMA (`xlnx,axi-dma-1.00.a`, PG021), scatter-gather, feeding the Ethernet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxiDma {
    pub reg: Region,
    /// PLIC sources of the MM2S (transmit) and S2MM (receive) channels.
    pub tx_irq: u32,
    pub rx_irq: u32,
}

/// The board's AXI 1G/2.5G Ethernet (`xlnx,axi-ethernet-1.00.a`, PG138).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxiEthernet {
    pub reg: Region,
    /// PLIC sources of `mac_irq` and `interrupt` (0: not given).
    pub mac_irq: u32,
    pub irq: u32,
}

/// The CLINT's registers (SiFive layout, also QEMU's): msip per hart at +0, mtimecmp per hart at
/// +0x4000, mtime at +0xbff8, alone on its page.
pub mod clint {
    pub const MSIP: usize = 0x0;
    pub const MTIMECMP: usize = 0x4000;
    pub const MTIME: usize = 0xbff8;
}

#[derive(Clone, Debug, Default)]
pub struct Machine {
    pub model: heapless::String<64>,
    pub harts: Vec<Hart, MAX_HARTS>,
    pub timebase_hz: u64,
    pub memory: Vec<Region, MAX_REGIONS>,
    /// `/reserved-memory` children and `/memreserve/` entries: never hand these out.
    pub reserved: Vec<Region, MAX_REGIONS>,
    pub clint: Option<Region>,
    pub plic: Option<Plic>,
    pub uart: Option<Uart>,
    /// `sifive,test0` exit/reset device (QEMU virt, and the Verilator harness).
    pub exit_device: Option<Region>,
    pub uintc: Option<Uintc>,
    pub virtio_mmio: Vec<VirtioMmio, MAX_VIRTIO>,
    /// The AXI DMA and Ethernet behind the MMIO port (our SoC's boot ROM device tree); only a
    /// DMA with both channel interrupts counts.
    pub axi_dma: Option<AxiDma>,
    pub axi_ethernet: Option<AxiEthernet>,
    /// `/chosen/bootargs` (QEMU `-append`), cut at 256 bytes.
    pub bootargs: heapless::String<256>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not a device tree (bad magic, truncated or malformed).
    BadBlob,
    NoCpus,
    NoMemory,
    NoTimebase,
    TooManyHarts,
}

impl Machine {
    /// # Safety
    /// `addr` must point to a readable flattened device tree.
    pub unsafe fn from_addr(addr: usize) -> Result<(Machine, usize), Error> {
        let fdt = fdt::Fdt::from_ptr(addr as *const u8).map_err(|_| Error::BadBlob)?;
        let size = fdt.total_size();
        Ok((Self::from_fdt(&fdt)?, size))
    }

    pub fn from_bytes(blob: &[u8]) -> Result<Machine, Error> {
        let fdt = fdt::Fdt::new(blob).map_err(|_| Error::BadBlob)?;
        Self::from_fdt(&fdt)
    }

    fn from_fdt(fdt: &fdt::Fdt) -> Result<Machine, Error> {
        let mut m = Machine::default();
        let root = fdt.root();
        let _ = m.model.push_str(truncate(root.model(), 64));

        let mut timebase = None;
        for cpu in fdt.cpus() {
            if cpu.property("status").and_then(|p| p.as_str()).is_some_and(|s| s != "okay") {
                continue;
            }
            let id = cpu.ids().first();
            let isa = cpu.property("riscv,isa").and_then(|p| p.as_str()).unwrap_or("");
            let ext = |name: &str| {
                has_isa_extension(isa, name)
                    || cpu.property("riscv,isa-extensions").is_some_and(|p| string_list_contains(p.value, name))
            };
            // User interrupts are not in the ISA string: a `uintc` node says the SoC has them.
            let hart = Hart { id, sstc: ext("sstc") };
            m.harts.push(hart).map_err(|_| Error::TooManyHarts)?;
            if let Some(tb) = cpu.property("timebase-frequency").and_then(|p| p.as_usize()) {
                timebase = Some(tb as u64);
            }
        }
        if m.harts.is_empty() {
            return Err(Error::NoCpus);
        }
        m.harts.sort_unstable_by_key(|h| h.id);
        // QEMU and rocket-chip put timebase-frequency on /cpus, others on each cpu node.
        if timebase.is_none() {
            timebase = fdt
                .find_node("/cpus")
                .and_then(|n| n.property("timebase-frequency"))
                .and_then(|p| p.as_usize())
                .map(|v| v as u64);
        }
        m.timebase_hz = timebase.ok_or(Error::NoTimebase)?;

        for region in fdt.memory().regions() {
            if let Some(size) = region.size {
                let _ = m.memory.push(Region { base: region.starting_address as usize, size });
            }
        }
        if m.memory.is_empty() {
            return Err(Error::NoMemory);
        }
        for r in fdt.memory_reservations() {
            let _ = m.reserved.push(Region { base: r.address() as usize, size: r.size() });
        }
        if let Some(rm) = fdt.find_node("/reserved-memory") {
            for child in rm.children() {
                if let Some(r) = first_reg(&child) {
                    let _ = m.reserved.push(r);
                }
            }
        }

        m.clint = find_reg(fdt, &["riscv,clint0", "sifive,clint0"]);
        m.exit_device = find_reg(fdt, &["sifive,test0", "sifive,test1"]);
        m.plic = fdt.find_compatible(&["riscv,plic0", "sifive,plic-1.0.0"]).and_then(|n| {
            let sources = n.property("riscv,ndev").and_then(|p| p.as_usize()).unwrap_or(0) as u32;
            let s_context = plic_contexts(fdt, &n, S_EXTERNAL);
            let u_context = plic_contexts(fdt, &n, U_EXTERNAL);
            first_reg(&n).map(|reg| Plic { reg, sources, s_context, u_context })
        });
        m.uintc = fdt.find_compatible(&["riscv,uintc0"]).and_then(|n| {
            let slots = n.property("riscv,uintc-slots").and_then(|p| p.as_usize()).unwrap_or(0) as u32;
            first_reg(&n).map(|reg| Uintc { reg, slots })
        });

        if let Some(args) = fdt.chosen().bootargs() {
            let _ = m.bootargs.push_str(truncate(args, 256));
        }
        let stdout = fdt.chosen().stdout();
        let uart_node = stdout
            .filter(|n| is_compatible(n, &["ns16550a", "ns16550", "xlnx,xps-uart16550-2.00.a"]))
            .or_else(|| fdt.find_compatible(&["ns16550a", "ns16550", "xlnx,xps-uart16550-2.00.a"]));
        m.uart = uart_node.and_then(|n| {
            let reg = first_reg(&n)?;
            let u32_prop = |name: &str| n.property(name).and_then(|p| p.as_usize()).map(|v| v as u32);
            Some(Uart {
                reg,
                reg_shift: u32_prop("reg-shift").unwrap_or(0),
                reg_io_width: u32_prop("reg-io-width").unwrap_or(1),
                clock_hz: u32_prop("clock-frequency").unwrap_or(0),
                irq: n.interrupts().and_then(|mut i| i.next()).map(|i| i as u32),
            })
        });

        for n in fdt.all_nodes() {
            if is_compatible(&n, &["virtio,mmio"]) {
                if let Some(reg) = first_reg(&n) {
                    let irq = n.interrupts().and_then(|mut i| i.next()).map(|i| i as u32);
                    let _ = m.virtio_mmio.push(VirtioMmio { reg, irq });
                }
            }
        }
        m.virtio_mmio.sort_unstable_by_key(|v| v.reg.base);
        m.axi_dma = fdt.find_compatible(&["xlnx,axi-dma-1.00.a"]).and_then(|n| {
            let reg = first_reg(&n)?;
            let tx_irq = named_irq(&n, "mm2s_introut", 0)?;
            let rx_irq = named_irq(&n, "s2mm_introut", 1)?;
            Some(AxiDma { reg, tx_irq, rx_irq })
        });
        m.axi_ethernet = fdt.find_compatible(&["xlnx,axi-ethernet-1.00.a"]).and_then(|n| {
            let reg = first_reg(&n)?;
            let mac_irq = named_irq(&n, "mac_irq", 0).unwrap_or(0);
            let irq = named_irq(&n, "interrupt", 1).unwrap_or(0);
            Some(AxiEthernet { reg, mac_irq, irq })
        });
        Ok(m)
    }

    /// Is `word` one of the space-separated boot arguments?
    pub fn has_bootarg(&self, word: &str) -> bool {
        self.bootargs.split_ascii_whitespace().any(|w| w == word)
    }

    pub fn hart(&self, id: usize) -> Option<&Hart> {
        self.harts.iter().find(|h| h.id == id)
    }

    /// Every hart has Sstc, so S-mode can program `stimecmp` itself.
    pub fn all_sstc(&self) -> bool {
        self.harts.iter().all(|h| h.sstc)
    }
}

/// `avail` minus every region in `holes`, page-aligned inwards, in ascending order: the memory
/// that is really free once firmware, kernel, device tree and reservations are taken out.
pub fn subtract_regions(avail: &[Region], holes: &[Region], align: usize) -> Vec<Region, 16> {
    let mut out: Vec<Region, 16> = Vec::new();
    for a in avail {
        let mut pieces: Vec<(usize, usize), 16> = Vec::new();
        let _ = pieces.push((a.base, a.end()));
        for h in holes.iter().filter(|h| h.size > 0) {
            let mut next: Vec<(usize, usize), 16> = Vec::new();
            for &(s, e) in &pieces {
                if h.end() <= s || h.base >= e {
                    let _ = next.push((s, e));
                    continue;
                }
                if h.base > s {
                    let _ = next.push((s, h.base));
                }
                if h.end() < e {
                    let _ = next.push((h.end(), e));
                }
            }
            pieces = next;
        }
        for (s, e) in pieces {
            let s = s.next_multiple_of(align);
            let e = e & !(align - 1);
            if e > s {
                let _ = out.push(Region { base: s, size: e - s });
            }
        }
    }
    out.sort_unstable_by_key(|r| r.base);
    out
}

fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn is_compatible(node: &fdt::node::FdtNode, names: &[&str]) -> bool {
    node.compatible().is_some_and(|c| c.all().any(|s| names.contains(&s)))
}

const S_EXTERNAL: u32 = 9;
const U_EXTERNAL: u32 = 8;

/// Each hart's context for interrupt cause `want` (9: S-mode, 8: U-mode): `interrupts-extended`
/// lists (controller phandle, cause) per context; a hart's controller is the
/// `interrupt-controller` child of its cpu node.
fn plic_contexts(fdt: &fdt::Fdt, plic: &fdt::node::FdtNode, want: u32) -> [Option<u16>; MAX_HARTS] {
    let mut out = [None; MAX_HARTS];
    let Some(ext) = plic.property("interrupts-extended") else { return out };
    let cell = |i: usize| ext.value.get(i * 4..i * 4 + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let mut ctx = 0;
    while let (Some(phandle), Some(cause)) = (cell(ctx * 2), cell(ctx * 2 + 1)) {
        if cause == want {
            for cpu in fdt.find_node("/cpus").into_iter().flat_map(|c| c.children()) {
                let intc = cpu.children().find(|c| c.name.starts_with("interrupt-controller"));
                let ph = intc.and_then(|c| c.property("phandle")).and_then(|p| p.as_usize());
                let id = cpu.property("reg").and_then(|p| p.as_usize());
                if let (true, Some(id)) = (ph == Some(phandle as usize), id.filter(|&i| i < MAX_HARTS)) {
                    out[id] = Some(ctx as u16);
                }
            }
        }
        ctx += 1;
    }
    out
}

/// The interrupt `name` of `interrupt-names`, or without names the one at `index` of
/// `interrupts` (the Xilinx bindings' order); None if there is none (or it is source 0).
fn named_irq(node: &fdt::node::FdtNode, name: &str, index: usize) -> Option<u32> {
    let at = match node.property("interrupt-names") {
        Some(p) => p.value.split(|&b| b == 0).position(|s| s == name.as_bytes())?,
        None => index,
    };
    node.interrupts()?.nth(at).map(|i| i as u32).filter(|&i| i != 0)
}

fn first_reg(node: &fdt::node::FdtNode) -> Option<Region> {
    let r = node.reg()?.next()?;
    Some(Region { base: r.starting_address as usize, size: r.size.unwrap_or(0) })
}

fn find_reg(fdt: &fdt::Fdt, names: &[&str]) -> Option<Region> {
    fdt.find_compatible(names).and_then(|n| first_reg(&n))
}

fn string_list_contains(value: &[u8], name: &str) -> bool {
    value.split(|&b| b == 0).any(|s| s.eq_ignore_ascii_case(name.as_bytes()))
}

/// Is `name` in a `riscv,isa` string such as `rv64imafdc_zicsr_sstc`? Single-letter extensions
/// come right after the base (`rv64imafdcn`), multi-letter ones are `_`-separated.
pub fn has_isa_extension(isa: &str, name: &str) -> bool {
    let isa = isa.trim_end_matches('\0');
    let lower = |s: &str, t: &str| s.eq_ignore_ascii_case(t);
    let mut parts = isa.split('_');
    let Some(first) = parts.next() else { return false };
    if name.len() == 1 {
        let letters = first.get(4..).unwrap_or("");
        // 'g' stands for imafd (plus zicsr/zifencei).
        let c = name.as_bytes()[0].to_ascii_lowercase();
        return letters.bytes().any(|b| b.eq_ignore_ascii_case(&c))
            || (b"imafd".contains(&c) && letters.bytes().any(|b| b.eq_ignore_ascii_case(&b'g')));
    }
    parts.any(|p| lower(p, name))
}

#[cfg(test)]
mod tests;
