package uintr.soc

import chisel3._
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.subsystem.{BaseSubsystem, HasTiles}
import freechips.rocketchip.tile.BaseTile
import freechips.rocketchip.tilelink.TLFragmenter
import uintr.uintc._

/** Attaches the UINTC to the periphery bus (like CanHavePeripheryCLINT does for the CLINT).
  *
  * Interrupt wires: the UINTC's intnode has one edge per hart. Each edge ends in the tile's
  * interrupt crossbar as mip.USIP (core patch 0002: HasTiles asks
  * `userSoftwareInterruptSource(tile)` while it builds the tiles, which [[UintrSystem]] answers
  * with [[uintcUserSoftwareInterrupt]]). The tile binds the device-tree entry itself
  * (`interrupts-extended = <&cpuN_intc 0>`), exactly as for the CLINT.
  *
  * `uintcOpt` is lazy because the tiles (built in RocketSubsystem's constructor, before this
  * trait's body runs) already need it.
  *
  * Core ports: `uintc.module.io.core(h)` is hart h's direct port for `uipi`; the tile's
  * [[UipiRoCC]] reaches it through a BundleBridge (see [[CanHavePeripheryUINTCModuleImp]]). */
trait CanHavePeripheryUINTC { this: BaseSubsystem with HasTiles =>
  lazy val uintcOpt: Option[UINTC] = p(UINTCKey).map { params =>
    val uintc = LazyModule(new UINTC(params, pbus.beatBytes))
    pbus.coupleTo("uintc") { uintc.node := TLFragmenter(pbus) := _ }
    uintc
  }

  /** Hart `tile`'s USIP source: a new edge of the UINTC's intnode (edges are made in hart
    * order because the tiles are built in hart order), or a constant 0 without a UINTC. */
  def uintcUserSoftwareInterrupt(tile: BaseTile): IntOutwardNode =
    uintcOpt.map(u => u.intnode: IntOutwardNode).getOrElse(NullIntSource())

  /** The `uipi` units of the tiles, in hart order, each with a sink for its UINTC port. */
  lazy val uipiSinks: Seq[(Int, BundleBridgeSink[UintcCoreIO])] = uintcOpt.toSeq.flatMap { _ =>
    tiles.flatMap { t =>
      UipiRoCC.find(t).map { u =>
        val sink = BundleBridgeSink[UintcCoreIO]()
        sink := u.uintcNode
        (t.hartId, sink)
      }
    }
  }
  uipiSinks   // force: the bridges must exist before the module is elaborated
}

trait CanHavePeripheryUINTCModuleImp extends LazyModuleImp {
  val outer: CanHavePeripheryUINTC

  outer.uintcOpt.foreach { uintc =>
    val connected = outer.uipiSinks.map { case (hart, sink) =>
      uintc.module.io.core(hart) <> sink.bundle
      hart
    }.toSet
    uintc.module.io.core.zipWithIndex.foreach { case (port, h) =>
      if (!connected(h)) UintcCoreIO.tieOff(port)
    }
  }
}
