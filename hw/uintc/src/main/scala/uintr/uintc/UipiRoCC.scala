package uintr.uintc

import chisel3._
import chisel3.util._
import freechips.rocketchip.config.{Config, Parameters}
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.rocket.{M_XRD, UserIntr}
import freechips.rocketchip.tile._
import uintr.platform.Platform

/** The `uipi` instruction family (docs/uintr-spec.md section 2) as a RoCC unit, one per tile.
  *
  *   .insn r OPCODE, FUNCT3, op, rd, rs1, x0     op = funct7: 0 send, 1 read, 2 write,
  *                                                3 activate, 4 deactivate
  *
  * The core (patch 0003) decodes funct7 > 4 as illegal, so this unit only sees ops 0..4, and it
  * hands the unit `suist`/`suirs` with each command. Every check of the spec is made here; a
  * failed check has no effect and never traps; when the instruction writes rd (xd, which
  * funct3 = 6 always sets) the unit always answers, with 0 unless a read succeeded, so rd's
  * scoreboard bit is always cleared.
  *
  *   send: suist.Enable, rs1 < suist.Size * 512, the table entry's address fits the physical
  *         address space, the load of the entry at (suist.PPN << 12) + rs1*8 does not fault
  *         (physical access with S-mode PMP permissions: the D$ TLB treats `phys` requests
  *         like the PTW's), entry.Valid, entry.slot < implemented slots
  *   read/write/activate/deactivate: suirs.Enable, suirs.index < implemented slots
  *
  * The entry load goes through the tile's D$ arbiter directly (`rawDCachePort`), so a nack is
  * replayed here and a fault (s2_xcpt) simply fails the send. The UINTC is reached through its
  * direct core port ([[UintcCoreIO]]) over a BundleBridge the subsystem connects.
  * `busy` is high from command to response, so a `fence` after `uipi.*` waits for it. */
class UipiRoCC(opcodes: OpcodeSet)(implicit p: Parameters) extends LazyRoCC(opcodes) {
  override def rawDCachePort: Boolean = true
  val uintcNode = BundleBridgeSource(() => new UintcCoreIO)
  override lazy val module = new UipiRoCCModuleImp(this)
}

object UipiRoCC {
  /** The tile's uipi unit, if it has one. */
  def find(tile: BaseTile): Option[UipiRoCC] = tile match {
    case r: HasLazyRoCC => r.roccs.collectFirst { case u: UipiRoCC => u }
    case _ => None
  }
  val opcode: Int = Platform.uipi.OPCODE.toInt
  val maxFunct7: Int = Platform.uipi.DEACTIVATE.toInt
}

class UipiRoCCModuleImp(outer: UipiRoCC)(implicit p: Parameters) extends LazyRoCCModuleImp(outer)
    with HasCoreParameters {
  val uintc = outer.uintcNode.bundle
  val nSlots = p(UINTCKey).map(_.nSlots).getOrElse(0)

  val sIdle :: sMemReq :: sMemS1 :: sMemS2 :: sMemWait :: sUintc :: sUintcWait :: sResp :: Nil = Enum(8)
  val state = RegInit(sIdle)

  val op     = Reg(UInt(UintcOp.width.W))
  val rd     = Reg(UInt(5.W))
  val xd     = Reg(Bool())
  val rs1    = Reg(UInt(xLen.W))
  val slot   = Reg(UInt(16.W))
  val data   = Reg(UInt(64.W))      // UINTC request data, then the rd value
  val result = Reg(UInt(xLen.W))

  // ---- command: decode and the checks that need no memory ----
  val cmd = io.cmd.bits
  val suist = cmd.uintr.suist
  val suirs = cmd.uintr.suirs
  val suistEnable = suist(UserIntr.enableBit)
  val suistSize = suist(UserIntr.suistSizeLo + UserIntr.suistSizeBits - 1, UserIntr.suistSizeLo)
  val suistPpn = suist(UserIntr.suistPpnBits - 1, 0)
  val suirsEnable = suirs(UserIntr.enableBit)
  val suirsIndex = suirs(UserIntr.suirsIndexBits - 1, 0)
  val entryBytesLog2 = log2Ceil(Platform.uist.ENTRY_BYTES.toInt)
  val entriesLog2 = log2Ceil(Platform.uist.ENTRIES_PER_PAGE.toInt)
  // rs1 < Size*512, computed without overflow: Size*512 has at most 12+9 bits
  val indexOk = (cmd.rs1 >> (UserIntr.suistSizeBits + entriesLog2)) === 0.U &&
                cmd.rs1(UserIntr.suistSizeBits + entriesLog2 - 1, 0) < (suistSize << entriesLog2)
  val entryAddr = (suistPpn << pgIdxBits) + (cmd.rs1(UserIntr.suistSizeBits + entriesLog2 - 1, 0) << entryBytesLog2)
  val addrOk = (entryAddr >> paddrBits) === 0.U
  val funct = cmd.inst.funct(UintcOp.width - 1, 0)
  val isSend = funct === UintcOp.send
  val sendOk = suistEnable && indexOk && addrOk
  val slotOpOk = suirsEnable && suirsIndex < nSlots.U

  io.cmd.ready := state === sIdle
  when (io.cmd.fire()) {
    op := funct
    rd := cmd.inst.rd
    xd := cmd.inst.xd
    rs1 := entryAddr
    slot := suirsIndex
    data := cmd.rs1
    result := 0.U
    state := Mux(isSend, Mux(sendOk, sMemReq, Mux(cmd.inst.xd, sResp, sIdle)),
                 Mux(slotOpOk, sUintc, Mux(cmd.inst.xd, sResp, sIdle)))
  }

  // ---- send: load the sender-table entry (physical, S-mode PMP) ----
  io.mem.req.valid := state === sMemReq
  io.mem.req.bits := DontCare
  io.mem.req.bits.addr := rs1
  io.mem.req.bits.tag := 0.U
  io.mem.req.bits.cmd := M_XRD
  io.mem.req.bits.size := log2Ceil(8).U
  io.mem.req.bits.signed := false.B
  io.mem.req.bits.phys := true.B
  io.mem.req.bits.no_alloc := false.B
  io.mem.req.bits.no_xcpt := false.B
  io.mem.s1_kill := false.B
  io.mem.s1_data := DontCare
  io.mem.s2_kill := false.B
  io.mem.keep_clock_enabled := state =/= sIdle

  val entry = io.mem.resp.bits.data
  val entryValid = entry(Platform.uist.VALID_BIT.toInt)
  val entrySlot = entry(Platform.uist.SLOT_SHIFT.toInt + 15, Platform.uist.SLOT_SHIFT.toInt)
  val entryVector = entry(Platform.uist.VECTOR_SHIFT.toInt + 15, Platform.uist.VECTOR_SHIFT.toInt)
  def gotEntry(): Unit = {
    slot := entrySlot
    data := entryVector
    state := Mux(entryValid && entrySlot < nSlots.U, sUintc, Mux(xd, sResp, sIdle))
  }
  def failed(): Unit = { state := Mux(xd, sResp, sIdle) }

  when (state === sMemReq && io.mem.req.fire()) { state := sMemS1 }
  when (state === sMemS1) { state := sMemS2 }
  when (state === sMemS2) {
    when (io.mem.s2_nack) { state := sMemReq }                 // replay (e.g. a miss being refilled)
      .elsewhen (io.mem.s2_xcpt.asUInt.orR) { failed() }       // PMP/PMA fault: no effect, no trap
      .elsewhen (io.mem.resp.valid) { gotEntry() }
      .otherwise { state := sMemWait }
  }
  when (state === sMemWait && io.mem.resp.valid) { gotEntry() }

  // ---- the UINTC's direct port: one request, its response exactly one cycle later ----
  uintc.req.valid := state === sUintc
  uintc.req.bits.op := op
  uintc.req.bits.slot := slot
  uintc.req.bits.data := data
  when (uintc.req.fire()) { state := sUintcWait }
  when (state === sUintcWait && uintc.resp.valid) {
    result := uintc.resp.bits.data      // the cleared pending word for read, else 0
    state := Mux(xd, sResp, sIdle)
  }

  // ---- response to the core (always when xd: rd never stays pending) ----
  io.resp.valid := state === sResp
  io.resp.bits.rd := rd
  io.resp.bits.data := result
  when (io.resp.fire()) { state := sIdle }

  io.busy := state =/= sIdle
  io.interrupt := false.B
  io.fpu_req.valid := false.B
  io.fpu_req.bits := DontCare
  io.fpu_resp.ready := true.B
}

/** Adds the uipi unit to every tile, makes the core trap on funct7 > 4 on its opcode, and makes
  * uret wait for the UINTC's line to settle. */
class WithUipiRoCC extends Config((site, here, up) => {
  case BuildRoCC => up(BuildRoCC, site) :+ ((q: Parameters) => {
    val uipi = LazyModule(new UipiRoCC(new OpcodeSet(Seq(UipiRoCC.opcode.U(7.W))))(q))
    uipi
  })
  case RoCCIllegalFunct7 => up(RoCCIllegalFunct7, site) :+ (UipiRoCC.opcode -> UipiRoCC.maxFunct7)
  // uret waits until a handler's clearing read has reached this hart's USIP line (patch 0005)
  case UintrSettleCycles => site(UINTCKey).map(_.settleCycles).getOrElse(0)
})
