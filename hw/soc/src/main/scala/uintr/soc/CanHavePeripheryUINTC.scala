package uintr.soc

import chisel3._
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.subsystem.{BaseSubsystem, HasTiles}
import freechips.rocketchip.tile.SinksExternalInterrupts
import freechips.rocketchip.tilelink.TLFragmenter
import uintr.platform.Platform
import uintr.uintc._

/** Attaches the UINTC to the periphery bus (like CanHavePeripheryCLINT does for the CLINT).
  *
  * Interrupt wires: the UINTC's intnode has one edge per hart. Until the core patch adds USIP
  * as a tile interrupt input, the edges end in sinks here and the device tree binding to each
  * hart's interrupt controller (cause 0 = user software interrupt) is made by hand. When the
  * core patch lands, it connects `uintc.intnode` to the tiles instead and drops this binding.
  *
  * Core ports: `uintc.module.io.core(h)` is hart h's direct port for `uipi`; until the tiles
  * have a `uipi` unit, [[CanHavePeripheryUINTCModuleImp]] ties the ports off. */
trait CanHavePeripheryUINTC { this: BaseSubsystem with HasTiles =>
  val uintcOpt: Option[UINTC] = p(UINTCKey).map { params =>
    val uintc = LazyModule(new UINTC(params, pbus.beatBytes))
    pbus.coupleTo("uintc") { uintc.node := TLFragmenter(pbus) := _ }
    uintc
  }

  /** Hart h's wire, in hart order; see the note above. */
  val uintcSinks: Seq[IntSinkNode] = uintcOpt.toSeq.flatMap { uintc =>
    tiles.map { _ =>
      val sink = IntSinkNode(IntSinkPortSimple())
      sink := uintc.intnode
      sink
    }
  }

  uintcOpt.foreach { uintc =>
    ResourceBinding {
      tiles.collect { case t: SinksExternalInterrupts =>
        Resource(uintc.device, "int").bind(t.intcDevice, ResourceInt(Platform.csr.USIP_BIT))
      }
    }
  }
}

trait CanHavePeripheryUINTCModuleImp extends LazyModuleImp {
  val outer: CanHavePeripheryUINTC

  /** The per-hart UINTC wires, kept so they survive to the Verilog for the harness to probe. */
  val uintcUsip: Seq[Bool] = outer.uintcSinks.zipWithIndex.map { case (s, h) =>
    val w = WireInit(s.in.head._1(0)).suggestName(s"uintc_usip_$h")
    dontTouch(w)
    w
  }

  outer.uintcOpt.foreach { uintc => uintc.module.io.core.foreach(UintcCoreIO.tieOff) }
}
