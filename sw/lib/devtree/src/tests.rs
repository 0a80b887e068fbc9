extern crate std;
use super::*;
use std::{
    format,
    path::PathBuf,
    process::Command,
    string::{String, ToString},
    vec::Vec as StdVec,
};

/// A fresh path per call: tests run in parallel threads of one process.
fn tmp(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("devtree-test-{}-{}", std::process::id(), n));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn compile_dts(path: &str) -> StdVec<u8> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    let out = tmp("fixture.dtb");
    let st = Command::new("dtc")
        .args(["-I", "dts", "-O", "dtb", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("dtc (device-tree-compiler) is required: run `make deps`");
    assert!(st.success());
    std::fs::read(out).unwrap()
}

/// The device tree QEMU 7.2 really hands to firmware for `virt -smp 4`.
fn qemu_virt_dtb() -> StdVec<u8> {
    let out = tmp("virt.dtb");
    let st = Command::new("qemu-system-riscv64")
        .args(["-machine"])
        .arg(format!("virt,dumpdtb={}", out.display()))
        .args(["-smp", "4", "-m", "256M", "-nographic", "-bios", "none"])
        .output()
        .expect("qemu-system-riscv64 is required: run `make deps`");
    assert!(out.exists(), "qemu did not dump its dtb: {}", String::from_utf8_lossy(&st.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn qemu_virt_machine_is_fully_described() {
    let m = Machine::from_bytes(&qemu_virt_dtb()).unwrap();
    assert_eq!(m.harts.iter().map(|h| h.id).collect::<StdVec<_>>(), [0, 1, 2, 3]);
    assert_eq!(m.timebase_hz, 10_000_000);
    assert_eq!(m.memory[0], Region { base: 0x8000_0000, size: 256 << 20 });
    assert_eq!(m.clint, Some(Region { base: 0x200_0000, size: 0x1_0000 }));
    assert_eq!(m.exit_device.map(|r| r.base), Some(0x10_0000));
    let uart = m.uart.unwrap();
    assert_eq!((uart.reg.base, uart.reg_shift, uart.reg_io_width, uart.irq), (0x1000_0000, 0, 1, Some(10)));
    let plic = m.plic.unwrap();
    assert_eq!(plic.reg.base, 0xc00_0000);
    assert!(plic.sources >= 8);
    assert_eq!(plic.s_context[..4], [Some(1), Some(3), Some(5), Some(7)], "QEMU: M and S context per hart");
    assert_eq!(plic.u_context, [None; MAX_HARTS], "QEMU: no U context");
    assert_eq!(m.virtio_mmio.len(), 8);
    assert_eq!(m.virtio_mmio[0].reg.base, 0x1000_1000);
    assert_eq!(m.virtio_mmio[0].irq, Some(1));
    assert!(m.axi_dma.is_none() && m.axi_ethernet.is_none());
    assert!(m.uintc.is_none(), "stock QEMU has no UINTC");
}

#[test]
fn rocket_soc_devices_and_disabled_harts() {
    let m = Machine::from_bytes(&compile_dts("fixtures/rocket-soc.dts")).unwrap();
    assert_eq!(m.model.as_str(), "uintr,rocket-soc");
    assert_eq!(m.harts.len(), 3, "the disabled hart is not offered to software");
    assert!(m.harts.iter().all(|h| !h.sstc));
    assert!(!m.all_sstc());
    let uart = m.uart.unwrap();
    assert_eq!((uart.reg.base, uart.reg_shift, uart.reg_io_width, uart.clock_hz), (0x6000_1000, 2, 4, 100_000_000));
    assert_eq!(uart.irq, Some(1));
    assert_eq!(m.uintc, Some(Uintc { reg: Region { base: 0x300_0000, size: 0x4000 }, slots: 64 }));
    assert_eq!(m.plic.unwrap().sources, 6);
    assert_eq!(m.plic.unwrap().s_context[..4], [Some(1), Some(4), Some(7), None], "ours: M, S and U context per hart");
    assert_eq!(m.plic.unwrap().u_context[..4], [Some(2), Some(5), Some(8), None], "ours: U context 3h+2");
    assert_eq!(m.exit_device.map(|r| r.base), Some(0x6020_0000));
    assert!(m.virtio_mmio.is_empty());
    assert_eq!(m.axi_dma, Some(AxiDma { reg: Region { base: 0x6010_0000, size: 0x1_0000 }, tx_irq: 4, rx_irq: 5 }));
    assert_eq!(
        m.axi_ethernet,
        Some(AxiEthernet { reg: Region { base: 0x6014_0000, size: 0x4_0000 }, mac_irq: 2, irq: 3 })
    );
    assert!(m.has_bootarg("selftest.inject-panic") && m.has_bootarg("quiet"));
    assert!(!m.has_bootarg("selftest"), "whole words only");
}

/// The fixture with its DMA node's interrupt properties replaced by `props`.
fn soc_with_dma_interrupts(props: &str) -> StdVec<u8> {
    let src =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/rocket-soc.dts")).unwrap();
    let old = "interrupts = <4 5>;\n                        interrupt-names = \"mm2s_introut\", \"s2mm_introut\";";
    assert!(src.contains(old));
    let dts = tmp("dma.dts");
    std::fs::write(&dts, src.replace(old, props)).unwrap();
    let out = tmp("dma.dtb");
    assert!(Command::new("dtc").args(["-I", "dts", "-O", "dtb", "-o"]).arg(&out).arg(&dts).status().unwrap().success());
    std::fs::read(out).unwrap()
}

#[test]
fn axi_dma_interrupts_by_name_by_order_or_not_at_all() {
    // Names decide over order.
    let m = Machine::from_bytes(&soc_with_dma_interrupts(
        "interrupts = <5 4>; interrupt-names = \"s2mm_introut\", \"mm2s_introut\";",
    ))
    .unwrap();
    assert_eq!(m.axi_dma.map(|d| (d.tx_irq, d.rx_irq)), Some((4, 5)));
    // Without names: transmit first, as Xilinx's binding lists them.
    let m = Machine::from_bytes(&soc_with_dma_interrupts("interrupts = <4 5>;")).unwrap();
    assert_eq!(m.axi_dma.map(|d| (d.tx_irq, d.rx_irq)), Some((4, 5)));
    // A DMA whose receive interrupt is missing is no usable NIC: not offered.
    let m = Machine::from_bytes(&soc_with_dma_interrupts("interrupts = <4>;")).unwrap();
    assert_eq!(m.axi_dma, None);
    let m = Machine::from_bytes(&soc_with_dma_interrupts(
        "interrupts = <4 5>; interrupt-names = \"mm2s_introut\", \"other\";",
    ))
    .unwrap();
    assert_eq!(m.axi_dma, None);
}

#[test]
fn garbage_is_rejected_not_trusted() {
    assert_eq!(Machine::from_bytes(&[0u8; 64]).unwrap_err(), Error::BadBlob);
    let mut blob = compile_dts("fixtures/rocket-soc.dts");
    blob.truncate(blob.len() / 2);
    assert!(Machine::from_bytes(&blob).is_err());
}

#[test]
fn isa_string_parsing() {
    assert!(has_isa_extension("rv64imafdch_zicsr_zifencei_sstc", "sstc"));
    assert!(!has_isa_extension("rv64imafdch_zicsr_zifencei", "sstc"));
    assert!(has_isa_extension("rv64gcn", "n"));
    assert!(!has_isa_extension("rv64imafdc", "n"));
    assert!(has_isa_extension("rv64gc", "d"), "g implies d");
    assert!(!has_isa_extension("rv64imafdc_zicsr", "n"), "letters after '_' are not single-letter extensions");
    assert!(!has_isa_extension("", "n"));
}

#[test]
fn subtracting_reservations_leaves_aligned_free_memory() {
    let ram = [Region { base: 0x8000_0000, size: 0x1000_0000 }];
    let holes = [
        Region { base: 0x8000_0000, size: 0x20_0000 }, // firmware
        Region { base: 0x8020_0000, size: 0x3_1234 },  // kernel image, unaligned end
        Region { base: 0x8fe0_0000, size: 0x1800 },    // device tree at the top of RAM
        Region { base: 0x9000_0000, size: 0x1000 },    // outside RAM: ignored
    ];
    let free = subtract_regions(&ram, &holes, 0x1000);
    assert_eq!(
        free.as_slice(),
        [
            Region { base: 0x8023_2000, size: 0x8fe0_0000 - 0x8023_2000 },
            Region { base: 0x8fe0_2000, size: 0x9000_0000 - 0x8fe0_2000 },
        ]
    );
    assert!(subtract_regions(&ram, &[ram[0]], 0x1000).is_empty());
}

/// A DTS source compiled to a blob.
fn dtb_of(dts: &str) -> StdVec<u8> {
    let src = tmp("inline.dts");
    std::fs::write(&src, dts).unwrap();
    let out = tmp("inline.dtb");
    let st = Command::new("dtc").args(["-I", "dts", "-O", "dtb", "-o"]).arg(&out).arg(&src).output().unwrap();
    assert!(st.status.success(), "dtc: {}", String::from_utf8_lossy(&st.stderr));
    std::fs::read(out).unwrap()
}

/// QEMU's own trees at other hart counts: ids, and each hart's S context (M, S per hart).
#[test]
fn qemu_virt_at_one_and_eight_harts() {
    for harts in [1usize, 8] {
        let out = tmp("virt.dtb");
        Command::new("qemu-system-riscv64")
            .arg("-machine")
            .arg(format!("virt,dumpdtb={}", out.display()))
            .args(["-smp", &harts.to_string(), "-m", "512M", "-nographic", "-bios", "none"])
            .output()
            .unwrap();
        let m = Machine::from_bytes(&std::fs::read(out).unwrap()).unwrap();
        assert_eq!(m.harts.iter().map(|h| h.id).collect::<StdVec<_>>(), (0..harts).collect::<StdVec<_>>());
        let want: StdVec<_> = (0..harts).map(|h| Some(2 * h as u16 + 1)).collect();
        assert_eq!(m.plic.unwrap().s_context[..harts], want[..]);
        assert_eq!(m.memory[0], Region { base: 0x8000_0000, size: 512 << 20 });
    }
}

/// A tree shaped unlike QEMU's and ours: 1-cell addresses on a bus, the interrupt parent named
/// once on an ancestor, stdout through an alias with options, a second memory node, a
/// reservation in the header's block.
const ODD_TREE: &str = r#"/dts-v1/;
/memreserve/ 0x80000000 0x20000;
/ {
    #address-cells = <2>; #size-cells = <2>;
    model = "odd";
    aliases { serial1 = "/bus@10000000/serial@2000"; };
    chosen { stdout-path = "serial1:115200n8"; bootargs = "a b"; };
    cpus { #address-cells = <1>; #size-cells = <0>; timebase-frequency = <1000000>;
        cpu@5 { device_type = "cpu"; reg = <5>; riscv,isa = "rv64imac";
            riscv,isa-extensions = "i", "m", "SSTC";
            intc5: interrupt-controller { #interrupt-cells = <1>; interrupt-controller; }; };
        cpu-map { };
    };
    memory@80000000 { device_type = "memory"; reg = <0 0x80000000 0 0x1000000>; };
    memory@100000000 { device_type = "memory"; reg = <1 0 0 0x2000000>; };
    bus@10000000 { #address-cells = <1>; #size-cells = <1>; interrupt-parent = <&plic>;
        compatible = "simple-bus"; ranges;
        plic: interrupt-controller@c000000 { compatible = "riscv,plic0"; #interrupt-cells = <1>;
            interrupt-controller; reg = <0xc000000 0x4000000>; riscv,ndev = <31>;
            interrupts-extended = <&intc5 11 &intc5 9>; };
        serial@1000 { compatible = "ns16550a"; reg = <0x1000 0x100>; interrupts = <3>; };
        serial@2000 { compatible = "ns16550a"; reg = <0x2000 0x100>; interrupts = <4>; reg-shift = <2>; };
    };
};
"#;

#[test]
fn cells_inherited_interrupt_parent_aliases_and_memory_nodes() {
    let m = Machine::from_bytes(&dtb_of(ODD_TREE)).unwrap();
    assert_eq!(m.model.as_str(), "odd");
    assert_eq!(m.harts.as_slice(), [Hart { id: 5, sstc: true }], "isa-extensions are case-insensitive");
    assert_eq!(m.timebase_hz, 1_000_000);
    assert_eq!(
        m.memory.as_slice(),
        [Region { base: 0x8000_0000, size: 0x100_0000 }, Region { base: 0x1_0000_0000, size: 0x200_0000 }]
    );
    assert_eq!(m.reserved.as_slice(), [Region { base: 0x8000_0000, size: 0x2_0000 }]);
    let uart = m.uart.unwrap();
    assert_eq!((uart.reg.base, uart.reg_shift, uart.irq), (0x2000, 2, Some(4)), "stdout's uart, not the first one");
    let plic = m.plic.unwrap();
    assert_eq!((plic.reg, plic.sources), (Region { base: 0xc00_0000, size: 0x400_0000 }, 31));
    assert_eq!(plic.s_context[5], Some(1));
    assert!(plic.s_context[..5].iter().all(|c| c.is_none()));
    assert!(m.has_bootarg("b"));
}

#[test]
fn size_limits_are_errors() {
    let many: String = (0..flat::MAX_NODES).map(|i| format!("n{i} {{ }};\n")).collect();
    let dts = |body: &str| {
        format!("/dts-v1/;\n/ {{ cpus {{ #address-cells = <1>; #size-cells = <0>; cpu@0 {{ reg = <0>; }}; }};\n memory@0 {{ device_type = \"memory\"; reg = <0 0 0 1>; }};\n{body} }};\n")
    };
    assert_eq!(Machine::from_bytes(&dtb_of(&dts(&many))).unwrap_err(), Error::TooBig);
    let deep = "a { ".repeat(20) + &"};".repeat(20);
    assert_eq!(Machine::from_bytes(&dtb_of(&dts(&deep))).unwrap_err(), Error::TooBig);
    // Within the limits, the same shapes parse (and a tree without a timebase says so).
    let some: String = (0..50).map(|i| format!("n{i} {{ }};\n")).collect();
    assert_eq!(Machine::from_bytes(&dtb_of(&dts(&some))).unwrap_err(), Error::NoTimebase);
}

/// Random damage to real trees: every outcome is a Machine or an error, never a panic or a hang.
#[test]
fn damaged_blobs_never_panic() {
    let blobs = [qemu_virt_dtb(), compile_dts("fixtures/rocket-soc.dts"), dtb_of(ODD_TREE)];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut ok, mut refused) = (0, 0);
    for round in 0..30_000 {
        let mut b = blobs[round % blobs.len()].clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % b.len();
            let word = (at & !3).min(b.len().saturating_sub(4) & !3);
            match next() % 4 {
                0 => b[at] ^= 1 << (next() % 8),
                1 if b.len() >= 4 => b[word..word + 4].copy_from_slice(&(next() as u32 % 16).to_be_bytes()),
                2 if b.len() >= 4 => b[word..word + 4].copy_from_slice(&(next() as u32).to_be_bytes()),
                1 | 2 => {}
                _ => b.truncate(at.max(1)),
            }
        }
        match Machine::from_bytes(&b) {
            Ok(_) => ok += 1,
            Err(_) => refused += 1,
        }
    }
    // Both outcomes occur: the damage reaches the parser's checks and its happy path.
    assert!(ok > 1000 && refused > 1000, "ok {ok}, refused {refused}");
}
