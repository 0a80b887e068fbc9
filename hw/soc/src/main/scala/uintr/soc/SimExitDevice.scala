package uintr.soc

import freechips.rocketchip.config.{Config, Field}
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.subsystem.BaseSubsystem
import uintr.platform.Platform

/** Whether the device tree describes the Verilator harness's exit device. */
case object SimExitDeviceKey extends Field[Boolean](false)

class WithSimExitDevice extends Config((site, here, up) => {
  case SimExitDeviceKey => true
})

/** Simulation only: the harness (hw/sim) answers `sifive,test0` writes on the MMIO port at
  * memmap.sim_exit, so the same firmware and kernel that end a QEMU run end a simulation run.
  * The hardware is unchanged; only the device tree in the boot ROM gains the node, which is
  * why the board configs must not carry it. */
trait HasSimExitDevice { this: BaseSubsystem =>
  if (p(SimExitDeviceKey)) {
    val simExitDevice = new SimpleDevice("test", Seq("sifive,test0"))
    ResourceBinding {
      Resource(simExitDevice, "reg").bind(ResourceAddress(
        Seq(AddressSet(Platform.memmap.SIM_EXIT_BASE, Platform.memmap.SIM_EXIT_SIZE - 1)),
        ResourcePermissions(r = true, w = true, x = false, c = false, a = false)))
    }
  }
}
