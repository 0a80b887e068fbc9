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

/** The AXI DMA (PG021, scatter-gather, 64-bit addresses) behind the MMIO port, described with
  * the Xilinx binding's compatible string so that the same device tree serves the board and
  * the simulation (whose harness models the DMA at the same address and PLIC sources). Its two
  * interrupts (MM2S = transmit, S2MM = receive) come from the external lines it is attached to
  * in [[HasBoardExtInterrupts]]. */
class BoardDmaDevice extends SimpleDevice("dma", Seq("xlnx,axi-dma-1.00.a")) {
  override def describe(resources: ResourceBindings): Description = {
    val Description(name, mapping) = super.describe(resources)
    Description(name, mapping ++ Map(
      "interrupt-names"    -> Seq(ResourceString("mm2s_introut"), ResourceString("s2mm_introut")),
      "#dma-cells"         -> Seq(ResourceInt(1)),
      "xlnx,addrwidth"     -> Seq(ResourceInt(64)),
      "xlnx,sg-length-width" -> Seq(ResourceInt(16)),   // c_sg_length_width in hw/fpga/tcl/bd/ethernet.tcl
      "xlnx,include-sg"    -> Nil))
  }
}

/** The AXI 1G/2.5G Ethernet subsystem (PG138, RGMII to the board's KSZ9031), its streams
  * connected to the DMA above; interrupts mac_irq and interrupt. The PHY is found on MDIO by
  * the driver (the board has it at address 1, hw/fpga/board.toml). */
class BoardEthernetDevice(dma: Device) extends SimpleDevice("ethernet", Seq("xlnx,axi-ethernet-1.00.a")) {
  override def describe(resources: ResourceBindings): Description = {
    val Description(name, mapping) = super.describe(resources)
    Description(name, mapping ++ Map(
      "interrupt-names"      -> Seq(ResourceString("mac_irq"), ResourceString("interrupt")),
      "axistream-connected"  -> Seq(ResourceReference(dma.label)),
      "phy-mode"             -> Seq(ResourceString("rgmii")),
      "xlnx,phy-type"        -> Seq(ResourceInt(3)),
      "xlnx,txcsum"          -> Seq(ResourceInt(0)),
      "xlnx,rxcsum"          -> Seq(ResourceInt(0))))
  }
}
