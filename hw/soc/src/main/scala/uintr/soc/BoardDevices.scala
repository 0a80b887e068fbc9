package uintr.soc

import freechips.rocketchip.diplomacy._
import uintr.platform.Platform

/** Device-tree description of the AXI UART16550 that sits behind the MMIO AXI4 port.
  * rocket-chip cannot see devices beyond its ports, so we describe the console ourselves; its
  * interrupt binding comes from the external-interrupt source it is attached to (see
  * [[HasBoardExtInterrupts]]), which the PLIC turns into `interrupts = <source>`. */
class BoardUartDevice extends SimpleDevice("serial", Seq("ns16550a")) {
  override def describe(resources: ResourceBindings): Description = {
    val Description(name, mapping) = super.describe(resources)
    val regShift = Platform.clock.UART_REG_SHIFT
    Description(name, mapping ++ Map(
      "reg-shift"       -> Seq(ResourceInt(regShift)),
      "reg-io-width"    -> Seq(ResourceInt(BigInt(1) << regShift.toInt)),
      "clock-frequency" -> Seq(ResourceInt(Platform.clock.UART_HZ)),
      "current-speed"   -> Seq(ResourceInt(Platform.clock.UART_BAUD))))
  }
}

/** /chosen with stdout-path pointing at the console, so firmware and kernel find it. */
class ChosenDevice(stdout: Device) extends DeviceSnippet {
  def describe(): Description =
    Description("chosen", Map("stdout-path" -> Seq(ResourceAlias(stdout.label))))
}
