package uintr.soc

import chisel3._
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.subsystem.{BaseSubsystem, NExtTopInterrupts}
import uintr.platform.Platform

/** The board's external interrupt lines (PLIC sources 1..N), like rocket-chip's
  * HasAsyncExtInterrupts, but the line of the console UART carries the UART's device-tree
  * resource, so the PLIC binds `interrupts = <uart source>` into the UART node. The other lines
  * stay on the generic `external-interrupts` node. Also describes the UART itself and /chosen,
  * and likewise the AXI DMA and Ethernet behind the MMIO port (their lines bound to their
  * nodes), so the boot ROM's device tree describes every PL device on the board and in the
  * simulation. */
trait HasBoardExtInterrupts { this: BaseSubsystem =>
  val uartDevice = new BoardUartDevice
  val chosenDevice = new ChosenDevice(uartDevice)
  val dmaDevice = new BoardDmaDevice
  val ethernetDevice = new BoardEthernetDevice(dmaDevice)

  private val otherExtDevice = new Device with DeviceInterrupts {
    def describe(resources: ResourceBindings): Description =
      Description("soc/external-interrupts", describeInterrupts(resources))
  }

  ResourceBinding {
    Resource(uartDevice, "reg").bind(ResourceAddress(
      Seq(AddressSet(Platform.memmap.UART_BASE, Platform.memmap.UART_SIZE - 1)),
      ResourcePermissions(r = true, w = true, x = false, c = false, a = false)))
    Resource(ResourceAnchors.aliases, "uart").bind(ResourceAlias(uartDevice.label))
    val rw = ResourcePermissions(r = true, w = true, x = false, c = false, a = false)
    Resource(dmaDevice, "reg").bind(ResourceAddress(
      Seq(AddressSet(Platform.memmap.DMA_BASE, Platform.memmap.DMA_SIZE - 1)), rw))
    Resource(ethernetDevice, "reg").bind(ResourceAddress(
      Seq(AddressSet(Platform.memmap.ETHERNET_BASE, Platform.memmap.ETHERNET_SIZE - 1)), rw))
  }

  val nExtInterrupts: Int = p(NExtTopInterrupts)
  // PLIC source n is external line n-1; a device with two lines lists them in source order.
  private val lineOwner: Map[Int, Device] = Map(
    Platform.irq.UART    -> uartDevice,
    Platform.irq.ETH_MAC -> ethernetDevice,
    Platform.irq.ETH     -> ethernetDevice,
    Platform.irq.DMA_TX  -> dmaDevice,
    Platform.irq.DMA_RX  -> dmaDevice).map { case (src, d) => (src.toInt - 1, d) }
  require(lineOwner.keys.forall(_ < nExtInterrupts), "every board device needs its external interrupt line")

  val extInterrupts = IntSourceNode(Seq(IntSourcePortParameters(Seq.tabulate(nExtInterrupts) { i =>
    IntSourceParameters(IntRange(i, i + 1),
      lineOwner.get(i).map(d => Seq(Resource(d, "int"))).getOrElse(otherExtDevice.int))
  })))

  // Lines from the PL are not assumed to be synchronous to the PLIC clock.
  ibus.fromAsync := extInterrupts
}

trait HasBoardExtInterruptsModuleImp extends freechips.rocketchip.diplomacy.LazyModuleImp {
  val outer: HasBoardExtInterrupts
  val interrupts = IO(Input(UInt(outer.nExtInterrupts.W)))
  outer.extInterrupts.out.map(_._1).flatten.zipWithIndex.foreach { case (o, i) => o := interrupts(i) }
}
