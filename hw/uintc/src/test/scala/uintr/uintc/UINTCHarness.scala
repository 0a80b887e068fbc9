package uintr.uintc

import chisel3._
import chisel3.util._
import freechips.rocketchip.config.Parameters
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.tilelink._

/** Puts a real TileLink client (with rocket-chip's protocol monitor on the edge) in front of the
  * UINTC, so the tests exercise the actual regmap decode, and exposes a flat MMIO interface,
  * each hart's wire and each hart's core port. */
class UINTCHarness(val nSlots: Int, val nHarts: Int)(implicit p: Parameters) extends LazyModule {
  val uintc  = LazyModule(new UINTC(UINTCParams(nSlots = nSlots), beatBytes = 8))
  val client = TLClientNode(Seq(TLClientPortParameters(Seq(TLClientParameters(
    name = "uintc-tester", sourceId = IdRange(0, 1))))))
  uintc.node := client
  val sinks = Seq.fill(nHarts)(IntSinkNode(IntSinkPortSimple()))
  sinks.foreach(_ := uintc.intnode)

  lazy val module = new UINTCHarnessImp(this)
}

class MMIOReq extends Bundle {
  val write   = Bool()
  val narrow  = Bool()        // a 4-byte access instead of the architectural 8 bytes
  val address = UInt(32.W)
  val data    = UInt(64.W)
}

class MMIOResp extends Bundle {
  val data   = UInt(64.W)
  val isData = Bool()         // AccessAckData (reads) vs AccessAck (writes)
  val denied = Bool()
}

class UINTCHarnessImp(outer: UINTCHarness) extends LazyModuleImp(outer) {
  val io = IO(new Bundle {
    val a    = Flipped(Decoupled(new MMIOReq))
    val d    = Decoupled(new MMIOResp)
    val usip = Output(Vec(outer.nHarts, Bool()))
    val core = Vec(outer.nHarts, Flipped(new UintcCoreIO))   // the tester plays the cores
  })

  val (out, edge) = outer.client.out.head
  val lgSize = Mux(io.a.bits.narrow, 2.U, 3.U)
  val (_, put) = edge.Put(0.U, io.a.bits.address, lgSize, io.a.bits.data)
  val (_, get) = edge.Get(0.U, io.a.bits.address, lgSize)
  out.a.valid := io.a.valid
  out.a.bits  := Mux(io.a.bits.write, put, get)
  io.a.ready  := out.a.ready

  io.d.valid       := out.d.valid
  io.d.bits.data   := out.d.bits.data
  io.d.bits.isData := edge.hasData(out.d.bits)
  io.d.bits.denied := out.d.bits.denied
  out.d.ready      := io.d.ready

  outer.sinks.zipWithIndex.foreach { case (s, h) => io.usip(h) := s.in.head._1(0) }
  outer.uintc.module.io.core <> io.core
}
