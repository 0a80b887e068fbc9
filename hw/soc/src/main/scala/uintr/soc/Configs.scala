package uintr.soc

import freechips.rocketchip.config.Config
import freechips.rocketchip.devices.debug.{DebugModuleKey, DefaultDebugModuleParams, ExportDebug, JTAG}
import freechips.rocketchip.devices.tilelink._
import freechips.rocketchip.diplomacy.DTSTimebase
import freechips.rocketchip.rocket.ASIdBits
import freechips.rocketchip.subsystem._
import freechips.rocketchip.tile.XLen
import uintr.platform.Platform
import uintr.uintc.{UINTCKey, UINTCParams, WithUipiRoCC}

// Config fragments for the board SoC. Every address and frequency comes from platform.toml.

/** Boot ROM at the board address; harts reset to its first instruction (no "hang" loop: our ROM
  * sends every hart straight to DRAM). The image path is set by [[Generator]] (-Duintr.bootrom). */
class WithUintrBootROM extends Config((site, here, up) => {
  case BootROMParams => BootROMParams(
    address = Platform.memmap.BOOTROM_BASE,
    size = Platform.memmap.BOOTROM_SIZE.toInt,
    hang = Platform.memmap.BOOTROM_BASE,
    contentFileName = sys.props.getOrElse("uintr.bootrom", "bootrom/bootrom.img"))
})

/** CLINT and PLIC at the board addresses. */
class WithUintrInterruptControllers extends Config((site, here, up) => {
  case CLINTKey => Some(CLINTParams(baseAddress = Platform.memmap.CLINT_BASE))
  case PLICKey  => Some(PLICParams(baseAddress = Platform.memmap.PLIC_BASE))
  case NExtTopInterrupts => Platform.irq.COUNT.toInt
})

/** The user-interrupt controller with `slots` implemented slots. */
class WithUINTC(slots: Int = Platform.uintc.DEFAULT_SLOTS.toInt) extends Config((site, here, up) => {
  case UINTCKey => Some(UINTCParams(baseAddress = Platform.memmap.UINTC_BASE, nSlots = slots))
})

/** 100 MHz bus clock, mtime at 10 MHz (the RTC divides the bus clock by 10). */
class WithUintrClocks extends Config((site, here, up) => {
  case PeripheryBusKey => up(PeripheryBusKey, site).copy(dtsFrequency = Some(Platform.clock.CORE_HZ))
  case DTSTimebase => Platform.clock.TIMEBASE_HZ
})

/** The cores' clock in their device-tree nodes. Must sit left of the WithN*Cores fragment. */
class WithUintrCoreFreq extends Config((site, here, up) => {
  case RocketTilesKey => up(RocketTilesKey, site).map { t =>
    t.copy(core = t.core.copy(bootFreqHz = Platform.clock.CORE_HZ))
  }
})

/** satp.ASID implemented, and the TLBs tagged with it (core patch 0006): a switch of address
  * space keeps the other spaces' translations. */
class WithUintrAsids extends Config((site, here, up) => {
  case ASIdBits => Platform.cpu.ASID_BITS.toInt
})

/** AXI4 ports to the PL: DRAM, the MMIO window, and the DMA slave port into the front bus. */
class WithUintrPorts extends Config((site, here, up) => {
  case ExtMem => Some(MemoryPortParams(MasterPortParams(
    base = Platform.memmap.DRAM_BASE,
    size = Platform.memmap.DRAM_SIZE,
    beatBytes = site(MemoryBusKey).beatBytes,
    idBits = 4), 1))
  case ExtBus => Some(MasterPortParams(
    base = Platform.memmap.MMIO_PORT_BASE,
    size = Platform.memmap.MMIO_PORT_SIZE,
    beatBytes = site(MemoryBusKey).beatBytes,
    idBits = 4))
  case ExtIn => Some(SlavePortParams(beatBytes = 8, idBits = 8, sourceBits = 4))
})

/** No debug module: there is no debug transport host on this machine or the board flow, and it
  * would add DMI ports the harness and the block design must tie off. */
class WithoutDebugModule extends Config((site, here, up) => {
  case DebugModuleKey => None
})

/** The debug module back, behind a JTAG DTM whose pins are top-level ports
  * (`debug_systemjtag_*`): the Verilator harness drives them from OpenOCD's remote-bitbang
  * protocol (hw/sim/jtag.h, `make sim DEBUG=1`). Only the simulation config below uses it; the
  * board configs keep [[WithoutDebugModule]] (the block design has no JTAG pins for it). */
class WithUintrJtagDebug extends Config((site, here, up) => {
  case DebugModuleKey => Some(DefaultDebugModuleParams(site(XLen)))
  case ExportDebug => up(ExportDebug, site).copy(protocols = Set(JTAG))
})

class UintrBaseConfig extends Config(
  new WithUintrAsids ++
  new WithUipiRoCC ++
  new WithUINTC ++
  new WithUintrBootROM ++
  new WithUintrInterruptControllers ++
  new WithUintrClocks ++
  new WithUintrPorts ++
  new WithoutDebugModule ++
  new WithDTS("uintr,axu15eg-rocket", Seq("uintr,rocket-soc")) ++
  new BaseSubsystemConfig
)

/** The board SoC: 4 x RV64GC (Sv39) Rocket cores. */
class UintrQuadConfig extends Config(new WithUintrCoreFreq ++ new WithNBigCores(4) ++ new UintrBaseConfig)

/** The same SoC with one core, for fast simulation. */
class UintrSingleConfig extends Config(new WithUintrCoreFreq ++ new WithNBigCores(1) ++ new UintrBaseConfig)

/** The Verilator harness's variants: the board SoC plus the harness exit device in its DTB. */
class UintrQuadSimConfig extends Config(new WithSimExitDevice ++ new UintrQuadConfig)
class UintrSingleSimConfig extends Config(new WithSimExitDevice ++ new UintrSingleConfig)
/** The 4-core simulation SoC with the debug module and a JTAG DTM (GDB through OpenOCD). */
class UintrQuadSimDebugConfig extends Config(new WithUintrJtagDebug ++ new UintrQuadSimConfig)
