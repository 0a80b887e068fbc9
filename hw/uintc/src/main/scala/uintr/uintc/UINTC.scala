package uintr.uintc

import chisel3._
import chisel3.util._
import freechips.rocketchip.config.Parameters
import freechips.rocketchip.diplomacy._
import freechips.rocketchip.interrupts._
import freechips.rocketchip.regmapper._
import freechips.rocketchip.tilelink._

/** The user-interrupt controller (docs/uintr-spec.md section 4), a TileLink register router in the
  * style of rocket-chip's CLINT.
  *
  * Slot s occupies [base + 32*s, base + 32*s + 32):
  *   +0x00 SEND  write: pending |= 1 << data[5:0]                          read: 0
  *   +0x08 LOW   bit0 Active, bit1 Mode, bits31:16 hartid                  (read/write)
  *   +0x10 HIGH  read: pending, and clear it; write: pending |= data
  *   +0x18 ACT   bit0 Active                                               (read/write)
  *
  * Besides MMIO, each hart has a direct core port ([[UintcCoreIO]], io.core(h)) through which its
  * tile's `uipi` unit ([[UipiRoCC]]) performs send/read/write/(de)activate without a bus round
  * trip.
  * Every source may hit the same slot in the same cycle; the update rule
  *     pending' = (cleared ? 0 : pending) | (all bits set this cycle)
  * means a bit set in the cycle of a read-to-clear stays pending for the next read. Two
  * read-to-clears of one slot in one cycle would hand out the same bits twice, so a core read
  * waits while the MMIO port or a lower-numbered core port reads that slot.
  *
  * Output edge h of `intnode` is hart h's wire:
  *     usip[h] = RegNext(OR over s of (Active_s && pending_s != 0 && hartid_s == h))
  */
class UINTC(params: UINTCParams, beatBytes: Int)(implicit p: Parameters) extends LazyModule
{
  import UINTCConsts._
  require(beatBytes == 8, "UINTC registers are 64-bit; attach it to an 8-byte-wide bus")

  val device = new SimpleDevice("uintc", Seq(compatible)) {
    override val alwaysExtended = true   // one wire per hart: always interrupts-extended
    override def describe(resources: ResourceBindings): Description = {
      val Description(name, mapping) = super.describe(resources)
      Description(name, mapping ++ Map("riscv,uintc-slots" -> Seq(ResourceInt(params.nSlots))))
    }
  }

  val node: TLRegisterNode = TLRegisterNode(
    address   = Seq(params.address),
    device    = device,
    beatBytes = beatBytes)

  // One output edge per hart, in hart order, exactly like CLINT.intnode.
  val intnode: IntNexusNode = IntNexusNode(
    sourceFn = { _ => IntSourcePortParameters(Seq(IntSourceParameters(1, Seq(Resource(device, "int"))))) },
    sinkFn   = { _ => IntSinkPortParameters(Seq(IntSinkParameters())) },
    outputRequiresInput = false)

  lazy val module = new LazyModuleImp(this) {
    require(intnode.edges.in.isEmpty, "UINTC only produces interrupts; it does not accept them")
    val nSlots = params.nSlots
    val nHarts = intnode.out.size

    val io = IO(new Bundle {
      val core = Vec(nHarts, Flipped(new UintcCoreIO))
    })

    // ---- architectural state (reset: Active=0, Mode=0, hartid=0, pending=0) ----
    val active  = RegInit(VecInit(Seq.fill(nSlots)(false.B)))
    val mode    = RegInit(VecInit(Seq.fill(nSlots)(false.B)))
    val hartid  = RegInit(VecInit(Seq.fill(nSlots)(0.U(hartidBits.W))))
    val pending = RegInit(VecInit(Seq.fill(nSlots)(0.U(pendingBits.W))))

    // ---- MMIO events of this cycle, per slot (driven from the regmap below) ----
    val mmioSet   = Wire(Vec(nSlots, UInt(pendingBits.W)))   // SEND and HIGH-write bits
    val mmioClear = Wire(Vec(nSlots, Bool()))                // HIGH read fired
    val mmioLow   = Wire(Vec(nSlots, Valid(UInt(64.W))))     // LOW written
    val mmioAct   = Wire(Vec(nSlots, Valid(Bool())))         // ACT written
    mmioSet.foreach(_ := 0.U)
    mmioClear.foreach(_ := false.B)
    mmioLow.foreach { w => w.valid := false.B; w.bits := DontCare }
    mmioAct.foreach { w => w.valid := false.B; w.bits := DontCare }

    def lowValue(s: Int): UInt =
      (hartid(s).pad(64) << hartidShift) | (mode(s).asUInt << modeBit) | (active(s).asUInt << activeBit)

    val slotFields = (0 until nSlots).flatMap { s =>
      val base = slotOffset(s)
      Seq(
        (base + regSend) -> Seq(RegField.w(64,
          RegWriteFn((valid: Bool, data: UInt) => {
            when (valid) { mmioSet(s) := UIntToOH(data(vectorBits - 1, 0), pendingBits) }
            true.B
          }),
          RegFieldDesc(s"send_$s", s"Slot $s SEND: set pending bit data[5:0]", volatile = true))),
        (base + regLow) -> Seq(RegField(64,
          RegReadFn(lowValue(s)),
          RegWriteFn((valid: Bool, data: UInt) => {
            mmioLow(s).valid := valid
            mmioLow(s).bits := data
            true.B
          }),
          RegFieldDesc(s"low_$s", s"Slot $s LOW: Active, Mode, hartid", reset = Some(0)))),
        (base + regHigh) -> Seq(RegField(64,
          // The read fires only when the D channel accepts the data, so no bits are lost
          // to back-pressure; the clear takes effect on the next cycle.
          RegReadFn((ready: Bool) => {
            mmioClear(s) := ready
            (true.B, pending(s))
          }),
          RegWriteFn((valid: Bool, data: UInt) => {
            when (valid) { mmioSet(s) := data }
            true.B
          }),
          RegFieldDesc(s"high_$s", s"Slot $s HIGH: read returns and clears pending, write ORs",
            reset = Some(0), volatile = true,
            wrType = Some(RegFieldWrType.MODIFY), rdAction = Some(RegFieldRdAction.CLEAR)))),
        (base + regAct) -> Seq(RegField(64,
          RegReadFn(Cat(0.U(63.W), active(s))),
          RegWriteFn((valid: Bool, data: UInt) => {
            mmioAct(s).valid := valid
            mmioAct(s).bits := data(0)
            true.B
          }),
          RegFieldDesc(s"act_$s", s"Slot $s ACT: Active bit", reset = Some(0)))))
    }
    node.regmap(slotFields: _*)

    // ---- core ports ----
    val slotIndexBits = log2Ceil(nSlots) max 1
    val reqs    = io.core.map(_.req)
    val inRange = reqs.map(_.bits.slot < nSlots.U)
    val isRead  = reqs.map(r => r.valid && r.bits.op === UintcOp.read)
    def slotIndex(r: DecoupledIO[UintcCoreReq]): UInt = r.bits.slot(slotIndexBits - 1, 0)

    reqs.zipWithIndex.foreach { case (r, i) =>
      val mmioReadsSame = inRange(i) && mmioClear.asUInt.pad(1 << slotIndexBits)(slotIndex(r))
      val lowerReadsSame = (0 until i).map(j => isRead(j) && reqs(j).bits.slot === r.bits.slot)
      r.ready := !(isRead(i) && (mmioReadsSame || lowerReadsSame.foldLeft(false.B)(_ || _)))
    }
    val accepted = reqs.zip(inRange).map { case (r, ok) => r.fire() && ok }

    // Responses: one cycle after the request fired; reads return the pre-clear pending word.
    io.core.zip(reqs).zipWithIndex.foreach { case ((port, r), i) =>
      val readNow = Mux(accepted(i) && r.bits.op === UintcOp.read, pending(slotIndex(r)), 0.U)
      port.resp.valid := RegNext(r.fire(), false.B)
      port.resp.bits.data := RegEnable(readNow, r.fire())
    }

    // Bits each core request sets, computed once per port rather than once per slot.
    val coreSetBits = reqs.map { r =>
      Mux(r.bits.op === UintcOp.send, UIntToOH(r.bits.data(vectorBits - 1, 0), pendingBits),
        Mux(r.bits.op === UintcOp.write, r.bits.data, 0.U(pendingBits.W)))
    }

    // ---- next state, per slot ----
    for (s <- 0 until nSlots) {
      val hits = reqs.indices.map(i => accepted(i) && reqs(i).bits.slot === s.U)
      def coreOp(op: UInt) = hits.zip(reqs).map { case (h, r) => h && r.bits.op === op }
      val coreSet = hits.zip(coreSetBits).map { case (h, bits) => Mux(h, bits, 0.U) }
        .foldLeft(0.U(pendingBits.W))(_ | _)
      val clear = mmioClear(s) || coreOp(UintcOp.read).foldLeft(false.B)(_ || _)
      pending(s) := Mux(clear, 0.U, pending(s)) | mmioSet(s) | coreSet

      // Active: core activates, then core deactivates (a deactivate wins), then MMIO LOW, then
      // ACT; the last writer of the cycle wins.
      coreOp(UintcOp.activate).foreach   { h => when (h) { active(s) := true.B } }
      coreOp(UintcOp.deactivate).foreach { h => when (h) { active(s) := false.B } }
      when (mmioLow(s).valid) {
        active(s) := mmioLow(s).bits(activeBit)
        mode(s)   := mmioLow(s).bits(modeBit)
        hartid(s) := mmioLow(s).bits(hartidShift + hartidBits - 1, hartidShift)
      }
      when (mmioAct(s).valid) { active(s) := mmioAct(s).bits }
    }

    // ---- one level-sensitive wire per hart, registered once ----
    val (intOut, _) = intnode.out.unzip
    intOut.zipWithIndex.foreach { case (int, h) =>
      val raise = (0 until nSlots).map(s => active(s) && pending(s).orR && hartid(s) === h.U)
      int(0) := ShiftRegister(RegNext(raise.reduce(_ || _), false.B), params.intStages)
    }
  }
}
