package uintr.soc

import chisel3._
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.subsystem.{BaseSubsystem, NExtTopInterrupts}
import uintr.platform.Platform

/** The board's external interrupt lines (PLIC sources 1..N), like rocket-chip's
  * HasAsyncExtInterrupts, but the line of the console UART carries the UART's device-tree
  * resource, so the PLIC binds `interrupts = <uart source>` into the UART node. The other lines
  * stay on the generic `external-interrupts` node. Also describes the UART itself and /chosen. */
trait HasBoardExtInterrupts { this: BaseSubsystem =>
  val uartDevice = new BoardUartDevice
  val chosenDevice = new ChosenDevice(uartDevice)

  private val otherExtDevice = new Device with DeviceInterrupts {
    def describe(resources: ResourceBindings): Description =
      Description("soc/external-interrupts", describeInterrupts(resources))
  }

  ResourceBinding {
    Resource(uartDevice, "reg").bind(ResourceAddress(
      Seq(AddressSet(Platform.memmap.UART_BASE, Platform.memmap.UART_SIZE - 1)),
      ResourcePermissions(r = true, w = true, x = false, c = false, a = false)))
    Resource(ResourceAnchors.aliases, "uart").bind(ResourceAlias(uartDevice.label))
  }

  val nExtInterrupts: Int = p(NExtTopInterrupts)
  private val uartLine = Platform.irq.UART.toInt - 1   // PLIC source n is external line n-1
  require(nExtInterrupts > uartLine, "the console UART needs its external interrupt line")

  val extInterrupts = IntSourceNode(Seq(IntSourcePortParameters(Seq.tabulate(nExtInterrupts) { i =>
    IntSourceParameters(IntRange(i, i + 1),
      if (i == uartLine) Seq(Resource(uartDevice, "int")) else otherExtDevice.int)
  })))

  // Lines from the PL are not assumed to be synchronous to the PLIC clock.
  ibus.fromAsync := extInterrupts
}

trait HasBoardExtInterruptsModuleImp extends freechips.rocketchip.diplomacy.LazyModuleImp {
  val outer: HasBoardExtInterrupts
  val interrupts = IO(Input(UInt(outer.nExtInterrupts.W)))
  outer.extInterrupts.out.map(_._1).flatten.zipWithIndex.foreach { case (o, i) => o := interrupts(i) }
}
