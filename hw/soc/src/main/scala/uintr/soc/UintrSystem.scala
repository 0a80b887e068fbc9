package uintr.soc

import freechips.rocketchip.config.Parameters
import freechips.rocketchip.devices.tilelink._
import freechips.rocketchip.subsystem._
import freechips.rocketchip.interrupts.IntOutwardNode
import freechips.rocketchip.tile.BaseTile
import freechips.rocketchip.util.DontTouch

/** The generated top: rocket-chip's ExampleRocketSystem with our boot ROM, the board's external
  * interrupts and console description, and the UINTC. Its ports are the AXI4 memory port, the
  * AXI4 MMIO port, the AXI4 DMA slave port, the external interrupt lines, clock and reset. */
class UintrSystem(implicit p: Parameters) extends RocketSubsystem
    with HasHierarchicalBusTopology
    with HasBoardExtInterrupts
    with CanHaveMasterAXI4MemPort
    with CanHaveMasterAXI4MMIOPort
    with CanHaveSlaveAXI4Port
    with HasPeripheryBootROM
    with CanHavePeripheryUINTC
    with HasSimExitDevice {
  // core patch 0002: each tile's mip.USIP comes from the UINTC (see CanHavePeripheryUINTC)
  override protected def userSoftwareInterruptSource(tile: BaseTile): IntOutwardNode =
    uintcUserSoftwareInterrupt(tile)
  override lazy val module = new UintrSystemModuleImp(this)
}

class UintrSystemModuleImp[+L <: UintrSystem](_outer: L) extends RocketSubsystemModuleImp(_outer)
    with HasRTCModuleImp
    with HasBoardExtInterruptsModuleImp
    with HasPeripheryBootROMModuleImp
    with CanHavePeripheryUINTCModuleImp
    with DontTouch
