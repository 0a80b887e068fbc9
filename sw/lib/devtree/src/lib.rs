//! Reads a flattened device tree once into a small, allocation-free [`Machine`] description.
//! The firmware and the kernel both use it, so QEMU `virt` and our Rocket SoC are told apart
//! only by their device trees, never by build flags.
#![no_std]

use heapless::Vec;

pub mod flat;
use flat::Tree;

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
    /// hart id: our SoC's user-level device interrupts (docs/uintr-spec.md section 1); none on QEMU.
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
    /// More nodes or levels than [`flat::MAX_NODES`] and 16.
    TooBig,
    NoCpus,
    NoMemory,
    NoTimebase,
    TooManyHarts,
}

impl From<flat::FlatError> for Error {
    fn from(e: flat::FlatError) -> Self {
        match e {
            flat::FlatError::Malformed => Error::BadBlob,
            flat::FlatError::TooBig => Error::TooBig,
        }
    }
}

impl Machine {
    /// The machine described by the blob at `addr`, and the blob's size.
    ///
    /// # Safety
    /// `addr` must point to a readable flattened device tree (at least its header, and then
    /// as many bytes as the header's `totalsize` says).
    pub unsafe fn from_addr(addr: usize) -> Result<(Machine, usize), Error> {
        // SAFETY: the caller guarantees the header, then `size` bytes, are readable.
        let size = unsafe { Tree::size_at(addr)? };
        let blob = unsafe { core::slice::from_raw_parts(addr as *const u8, size) };
        Ok((Self::from_tree(&Tree::parse(blob)?)?, size))
    }

    pub fn from_bytes(blob: &[u8]) -> Result<Machine, Error> {
        Self::from_tree(&Tree::parse(blob)?)
    }

    fn from_tree(t: &Tree) -> Result<Machine, Error> {
        let mut m = Machine::default();
        let _ = m.model.push_str(truncate(t.root().str_prop(b"model").unwrap_or(""), 64));

        let cpus = t.find_path(b"/cpus").ok_or(Error::NoCpus)?;
        let mut timebase = cpus.usize_prop(b"timebase-frequency").map(|v| v as u64);
        for cpu in cpus.children().filter(|c| c.base_name() == b"cpu") {
            if cpu.str_prop(b"status").is_some_and(|s| s != "okay") {
                continue;
            }
            let Some(id) = cpu.first_reg().map(|r| r.base) else { continue };
            let isa = cpu.str_prop(b"riscv,isa").unwrap_or("");
            let ext = |name: &str| {
                has_isa_extension(isa, name)
                    || cpu.strings(b"riscv,isa-extensions").any(|s| s.eq_ignore_ascii_case(name.as_bytes()))
            };
            // User interrupts are not in the ISA string: a `uintc` node says the SoC has them.
            m.harts.push(Hart { id, sstc: ext("sstc") }).map_err(|_| Error::TooManyHarts)?;
            // QEMU and rocket-chip put timebase-frequency on /cpus, others on each cpu node.
            if let Some(tb) = cpu.usize_prop(b"timebase-frequency") {
                timebase = Some(tb as u64);
            }
        }
        if m.harts.is_empty() {
            return Err(Error::NoCpus);
        }
        m.harts.sort_unstable_by_key(|h| h.id);
        m.timebase_hz = timebase.ok_or(Error::NoTimebase)?;

        for mem in t.root().children().filter(|n| n.str_prop(b"device_type") == Some("memory")) {
            for r in mem.regs().filter(|r| r.size > 0) {
                let _ = m.memory.push(r);
            }
        }
        if m.memory.is_empty() {
            return Err(Error::NoMemory);
        }
        for r in t.reservations() {
            let _ = m.reserved.push(r);
        }
        if let Some(rm) = t.find_path(b"/reserved-memory") {
            for r in rm.children().filter_map(|c| c.first_reg()) {
                let _ = m.reserved.push(r);
            }
        }

        m.clint = find_reg(t, &["riscv,clint0", "sifive,clint0"]);
        m.exit_device = find_reg(t, &["sifive,test0", "sifive,test1"]);
        m.plic = t.find_compatible(&["riscv,plic0", "sifive,plic-1.0.0"]).and_then(|n| {
            let sources = n.usize_prop(b"riscv,ndev").unwrap_or(0) as u32;
            let s_context = plic_contexts(&cpus, &n, S_EXTERNAL);
            let u_context = plic_contexts(&cpus, &n, U_EXTERNAL);
            n.first_reg().map(|reg| Plic { reg, sources, s_context, u_context })
        });
        m.uintc = t.find_compatible(&["riscv,uintc0"]).and_then(|n| {
            let slots = n.usize_prop(b"riscv,uintc-slots").unwrap_or(0) as u32;
            n.first_reg().map(|reg| Uintc { reg, slots })
        });

        let chosen = t.find_path(b"/chosen");
        if let Some(args) = chosen.and_then(|c| c.str_prop(b"bootargs")) {
            let _ = m.bootargs.push_str(truncate(args, 256));
        }
        // `stdout-path` may carry options after a ':' (`serial0:115200n8`).
        let stdout = chosen
            .and_then(|c| c.prop(b"stdout-path"))
            .and_then(|p| t.resolve(p.split(|&b| b == b':' || b == 0).next().unwrap_or(p)));
        const UARTS: [&str; 3] = ["ns16550a", "ns16550", "xlnx,xps-uart16550-2.00.a"];
        let uart_node = stdout.filter(|n| n.is_compatible(&UARTS)).or_else(|| t.find_compatible(&UARTS));
        m.uart = uart_node.and_then(|n| {
            Some(Uart {
                reg: n.first_reg()?,
                reg_shift: n.u32_prop(b"reg-shift").unwrap_or(0),
                reg_io_width: n.u32_prop(b"reg-io-width").unwrap_or(1),
                clock_hz: n.u32_prop(b"clock-frequency").unwrap_or(0),
                irq: n.interrupts().and_then(|mut i| i.next()),
            })
        });

        for n in t.nodes().filter(|n| n.is_compatible(&["virtio,mmio"])) {
            if let Some(reg) = n.first_reg() {
                let irq = n.interrupts().and_then(|mut i| i.next());
                let _ = m.virtio_mmio.push(VirtioMmio { reg, irq });
            }
        }
        m.virtio_mmio.sort_unstable_by_key(|v| v.reg.base);
        m.axi_dma = t.find_compatible(&["xlnx,axi-dma-1.00.a"]).and_then(|n| {
            let reg = n.first_reg()?;
            let tx_irq = named_irq(&n, "mm2s_introut", 0)?;
            let rx_irq = named_irq(&n, "s2mm_introut", 1)?;
            Some(AxiDma { reg, tx_irq, rx_irq })
        });
        m.axi_ethernet = t.find_compatible(&["xlnx,axi-ethernet-1.00.a"]).and_then(|n| {
            let reg = n.first_reg()?;
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

const S_EXTERNAL: u32 = 9;
const U_EXTERNAL: u32 = 8;

/// Each hart's context for interrupt cause `want` (9: S-mode, 8: U-mode): `interrupts-extended`
/// lists (controller phandle, cause) per context; a hart's controller is the
/// `interrupt-controller` child of its cpu node.
fn plic_contexts(cpus: &flat::Node, plic: &flat::Node, want: u32) -> [Option<u16>; MAX_HARTS] {
    let mut out = [None; MAX_HARTS];
    // (controller phandle, hart id) of every cpu, looked up once.
    let mut intcs: Vec<(u32, usize), MAX_HARTS> = Vec::new();
    for cpu in cpus.children() {
        let intc = cpu.children().find(|c| c.name().starts_with(b"interrupt-controller"));
        let ph = intc.and_then(|c| c.u32_prop(b"phandle").or_else(|| c.u32_prop(b"linux,phandle")));
        if let (Some(ph), Some(id)) = (ph, cpu.first_reg().map(|r| r.base).filter(|&i| i < MAX_HARTS)) {
            let _ = intcs.push((ph, id));
        }
    }
    let Some(ext) = plic.prop(b"interrupts-extended") else { return out };
    for (ctx, spec) in ext.chunks_exact(8).enumerate() {
        let cell = |i: usize| u32::from_be_bytes([spec[i], spec[i + 1], spec[i + 2], spec[i + 3]]);
        if cell(4) == want {
            for &(_, id) in intcs.iter().filter(|(ph, _)| *ph == cell(0)) {
                out[id] = u16::try_from(ctx).ok();
            }
        }
    }
    out
}

/// The interrupt `name` of `interrupt-names`, or without names the one at `index` of
/// `interrupts` (the Xilinx bindings' order); None if there is none (or it is source 0).
fn named_irq(node: &flat::Node, name: &str, index: usize) -> Option<u32> {
    let at = if node.prop(b"interrupt-names").is_some() {
        node.strings(b"interrupt-names").position(|s| s == name.as_bytes())?
    } else {
        index
    };
    node.interrupts()?.nth(at).filter(|&i| i != 0)
}

fn find_reg(t: &Tree, names: &[&str]) -> Option<Region> {
    t.find_compatible(names).and_then(|n| n.first_reg())
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
