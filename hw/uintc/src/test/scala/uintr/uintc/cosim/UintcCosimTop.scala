package uintr.uintc.cosim

import java.io.File

import chisel3._
import freechips.rocketchip.config.{Config, Parameters}
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.subsystem.{RocketTilesKey, WithNBigCores}
import freechips.rocketchip.system.BaseConfig
import freechips.rocketchip.tile._
import freechips.rocketchip.tilelink._
import uintr.uintc._

/** The UINTC and one real `uipi` unit per hart, alone, for the random co-simulation against the
  * reference model (hw/uintc/cosim/). Every port is the real one:
  *   mmio          a TileLink client port straight onto the UINTC's register node (Get/PutFull)
  *   rocc_h        hart h's uipi unit's RoCC port: commands (with suist/suirs), responses, busy,
  *                 and its D$ port (the testbench answers the sender-table loads)
  *   usip_h        hart h's interrupt wire
  *   port_h_*      a copy of hart h's unit-to-UINTC request (valid, fire = accepted, bits)
  * The uipi units get the tile parameters of a 1-core rocket-chip config (RV64, 32-bit physical
  * addresses, like the SoC's tiles); the UINTC has few slots so that random ops collide often. */
class UintcCosimTop(nHarts: Int)(implicit p: Parameters) extends LazyModule {
  val uintc = LazyModule(new UINTC(p(UINTCKey).get, beatBytes = 8))

  val mmio = TLClientNode(Seq(TLClientPortParameters(Seq(TLClientParameters("cosim-mmio", IdRange(0, 1))))))
  uintc.node := mmio

  val usip = Seq.fill(nHarts)(IntSinkNode(IntSinkPortSimple()))
  usip.foreach(_ := uintc.intnode)

  // The uipi unit sizes its addresses from the tile's view of memory (paddrBits): give it one
  // with a 32-bit DRAM window like the SoC's, reached by nobody.
  val memView = TLEphemeralNode()(ValName("tile_master"))
  val memClient = TLClientNode(Seq(TLClientPortParameters(Seq(TLClientParameters("cosim-view", IdRange(0, 1))))))
  val memManager = TLManagerNode(Seq(TLManagerPortParameters(Seq(TLManagerParameters(
    address = Seq(AddressSet(0x80000000L, 0x0fffffffL)), supportsGet = TransferSizes(1, 8))), beatBytes = 8)))
  memManager := memView := memClient

  val units = Seq.tabulate(nHarts) { h =>
    val q = p.alterPartial {
      case TileKey => p(RocketTilesKey).head.copy(hartId = h)
      case TileVisibilityNodeKey => memView
    }
    LazyModule(new UipiRoCC(new OpcodeSet(Seq(UipiRoCC.opcode.U(7.W))))(q))
  }
  val sinks = units.map { u =>
    val s = BundleBridgeSink[UintcCoreIO]()
    s := u.uintcNode
    s
  }

  lazy val module = new LazyModuleImp(this) {
    val (tl, _) = mmio.out.head
    val mmioIO = IO(Flipped(tl.cloneType)).suggestName("mmio")
    tl <> mmioIO

    memClient.out.head._1.a.valid := false.B
    memClient.out.head._1.a.bits := DontCare
    memClient.out.head._1.d.ready := true.B
    memManager.in.head._1.d.valid := false.B
    memManager.in.head._1.d.bits := DontCare
    memManager.in.head._1.a.ready := false.B

    val usipIO = IO(Output(Vec(nHarts, Bool()))).suggestName("usip")
    usipIO := VecInit(usip.map(_.in.head._1(0)))

    units.zipWithIndex.foreach { case (u, h) =>
      val io = IO(chiselTypeOf(u.module.io)).suggestName(s"rocc_$h")
      io <> u.module.io
      val port = uintc.module.io.core(h)
      port <> sinks(h).bundle
      val req = IO(Output(new UintcCoreReq)).suggestName(s"port_${h}_req")
      val valid = IO(Output(Bool())).suggestName(s"port_${h}_valid")
      val fire = IO(Output(Bool())).suggestName(s"port_${h}_fire")
      req := port.req.bits
      valid := port.req.valid
      fire := port.req.fire()
    }
  }
}

/** Writes UintcCosimTop.v (and the black boxes it needs) into TARGET_DIR.
  *   Generator TARGET_DIR HARTS SLOTS */
object Generator extends App {
  require(args.length == 3, "usage: Generator TARGET_DIR HARTS SLOTS")
  val Array(dir, harts, slots) = args
  implicit val p: Parameters = (new Config(new WithNBigCores(1) ++ new BaseConfig)).alterPartial {
    case UINTCKey => Some(UINTCParams(nSlots = slots.toInt))
  }
  new File(dir).mkdirs()
  chisel3.Driver.execute(Array("--target-dir", dir, "--top-name", "UintcCosimTop"),
    () => LazyModule(new UintcCosimTop(harts.toInt)).module)
}
