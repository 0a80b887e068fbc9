package uintr.uintc

import chisel3.iotesters
import freechips.rocketchip.config.Parameters
import freechips.rocketchip.diplomacy.{LazyModule, ValName}
import org.scalatest.{FlatSpec, Matchers}

import UINTCConsts._

/** Every register after reset, and the read/write semantics of LOW, ACT, SEND and HIGH. */
class RegisterTest(c: UINTCHarnessImp, nSlots: Int) extends UINTCTester(c) {
  for (s <- 0 until nSlots; r <- Seq(regSend, regLow, regHigh, regAct)) expectReg(s, r, 0, "reset")

  // LOW: Active, Mode and hartid are stored; every other bit reads 0.
  wr(1, regLow, all64)
  expectReg(1, regLow, low(0xffff, mode = true, active = true), "LOW keeps only its fields")
  expectReg(1, regAct, 1, "ACT mirrors LOW.Active")
  wr(1, regLow, low(5, mode = true, active = false))
  expectReg(1, regLow, low(5, mode = true, active = false), "LOW write")
  expectReg(0, regLow, 0, "neighbour slot untouched")
  expectReg(2, regLow, 0, "neighbour slot untouched")

  // ACT: bit 0 only, leaves Mode and hartid alone.
  wr(1, regAct, 1)
  expectReg(1, regAct, 1, "ACT set")
  expectReg(1, regLow, low(5, mode = true, active = true), "ACT write sets LOW.Active only")
  wr(1, regAct, 2)
  expectReg(1, regAct, 0, "ACT uses data[0] only")
  expectReg(1, regLow, low(5, mode = true, active = false), "ACT clear")

  // SEND sets bit data[5:0] (higher data bits ignored) and reads as 0.
  wr(2, regSend, 5)
  wr(2, regSend, 0x40 | 63)
  wr(2, regSend, 0)
  expectReg(2, regSend, 0, "SEND reads 0")
  expectReg(2, regHigh, (BigInt(1) << 63) | (BigInt(1) << 5) | 1, "SEND bits accumulate")
  expectReg(2, regHigh, 0, "HIGH read cleared pending")

  // HIGH write ORs into pending.
  wr(3, regHigh, 0x3)
  wr(3, regHigh, 0x300)
  wr(3, regSend, 1)
  expectReg(3, regHigh, 0x303, "HIGH write ORs")
  expectReg(3, regHigh, 0, "HIGH read clears")
  wr(3, regHigh, all64)
  expectReg(3, regHigh, all64, "all 64 pending bits")
  expectReg(3, regHigh, 0, "all 64 cleared")

  // Accesses narrower than 8 bytes: writes are ignored (the spec demands 8-byte accesses).
  mmio(write = true, addr(1, regLow), low(9, mode = false, active = true), narrow = true)
  expectReg(1, regLow, low(5, mode = true, active = false), "4-byte write ignored")
}

/** Slots beyond the implemented count read 0, ignore writes, and do not alias real slots. */
class UnimplementedSlotTest(c: UINTCHarnessImp, nSlots: Int) extends UINTCTester(c) {
  val maxSlot = (regionSize / slotBytes).toInt - 1
  for (s <- Seq(nSlots, nSlots + 1, maxSlot); r <- Seq(regSend, regLow, regHigh, regAct)) {
    wr(s, r, all64)
    expectReg(s, r, 0, "unimplemented slot")
  }
  for (s <- 0 until nSlots; r <- Seq(regLow, regHigh, regAct)) expectReg(s, r, 0, "no aliasing")
  expectWires(Nil, "no wire")
}

/** usip[h] = OR over slots of (Active && pending != 0 && hartid == h), registered once. */
class WireTest(c: UINTCHarnessImp) extends UINTCTester(c) {
  expectWires(Nil, "reset")

  wr(0, regLow, low(1, mode = true, active = true))    // slot 0 -> hart 1, active
  step(2); expectWires(Nil, "active but nothing pending")
  wr(0, regSend, 7)                                    // state updates at the end of this cycle
  expectWires(Nil, "one cycle after SEND: state updated, wire register not yet")
  step(1)
  expectWires(Seq(1), "two cycles after SEND")

  wr(0, regAct, 0); step(1); expectWires(Nil, "inactive slot raises nothing")
  wr(0, regAct, 1); step(1); expectWires(Seq(1), "re-activated, still pending")

  wr(1, regLow, low(0, mode = true, active = true))    // slot 1 -> hart 0
  wr(1, regHigh, 0x10); step(1)
  expectWires(Seq(0, 1), "two slots, two harts")

  wr(2, regLow, low(1, mode = false, active = true))   // a second slot for hart 1
  wr(2, regSend, 1)
  expect(rd(0, regHigh) == (BigInt(1) << 7), "slot 0 pending")
  step(1); expectWires(Seq(0, 1), "hart 1 still held by slot 2")
  expect(rd(2, regHigh) == 0x2, "slot 2 pending")
  expectWires(Seq(0, 1), "wire drops one cycle after the clearing read is visible")
  step(1); expectWires(Seq(0), "hart 1 released after both reads")

  wr(1, regLow, low(nHarts + 3, mode = true, active = true))  // hartid of no hart
  step(1); expectWires(Nil, "hartid without a hart raises nothing")
  wr(1, regLow, low(0, mode = true, active = true))
  step(1); expectWires(Seq(0), "hartid back")
  expect(rd(1, regHigh) == 0x10, "slot 1 pending")
  step(1); expectWires(Nil, "all read")
}

/** The direct core port: every operation, its response timing, and the slot bounds check. */
class CorePortTest(c: UINTCHarnessImp, nSlots: Int) extends UINTCTester(c) {
  expect(core(0, opSend, 4, 12) == 0, "send responds 0")
  expect(core(1, opSend, 4, 0xc0 | 13) == 0, "send from another hart")
  expect(core(1, opWrite, 4, 0x5) == 0, "write responds 0")
  expectReg(4, regHigh, (BigInt(1) << 13) | (BigInt(1) << 12) | 0x5, "core send/write land in pending")

  core(0, opWrite, 4, 0xabc)
  expect(core(0, opRead, 4) == 0xabc, "core read returns pending")
  expect(core(0, opRead, 4) == 0, "core read cleared pending")

  expect(core(1, opActivate, 4) == 0, "activate")
  expectReg(4, regAct, 1, "activate sets Active")
  wr(4, regLow, low(1, mode = true, active = true))
  core(0, opDeactivate, 4)
  expectReg(4, regLow, low(1, mode = true, active = false), "deactivate clears Active only")

  // Activation through the core port drives the wire like MMIO does.
  core(1, opSend, 4, 2)
  step(2); expectWires(Nil, "inactive")
  core(1, opActivate, 4)
  expectWires(Seq(1), "active via core port")
  core(1, opRead, 4)
  step(1); expectWires(Nil, "cleared via core port")

  // Out-of-range slots are ignored; reads of them return 0 and touch nothing.
  core(0, opWrite, nSlots, 0xff)
  core(0, opActivate, nSlots)
  expect(core(0, opRead, nSlots) == 0, "read of an unimplemented slot")
  core(0, opWrite, nSlots + 4, 0xff)
  for (s <- 0 until nSlots) expectReg(s, regHigh, 0, "out-of-range core ops do not alias")
  expectReg(0, regAct, 0, "out-of-range activate does not alias")
}

/** Everything hitting one slot in one cycle: no bit may be lost or delivered twice. */
class RaceTest(c: UINTCHarnessImp) extends UINTCTester(c) {
  // MMIO read-to-clear + core send in the same cycle: the read returns the old word, the new bit
  // stays pending.
  wr(0, regHigh, 0x1)
  driveMMIO(write = false, addr(0, regHigh))
  driveCore(0, opSend, 0, 9)
  expect(c.io.core(0).req.ready, 1, "send never waits")
  expect(mmioResponse(write = false) == 0x1, "read sees the word before this cycle's send")
  step(1); idle(); step(1)
  expectReg(0, regHigh, BigInt(1) << 9, "bit sent during the read stays pending")

  // Core read-to-clear + MMIO SEND and HIGH write from two sources in the same cycle.
  wr(1, regHigh, 0x100)
  driveMMIO(write = true, addr(1, regSend), 3)
  driveCore(0, opRead, 1)
  driveCore(1, opWrite, 1, 0x30000)
  expect(c.io.core(0).req.ready, 1)
  mmioResponse(write = true)
  step(1); idle()
  expect(peek(c.io.core(0).resp.bits.data) == 0x100, "core read sees the old word")
  step(1)
  expectReg(1, regHigh, 0x30008, "MMIO SEND and core write during a core read both survive")

  // MMIO read + core read of the same slot: the core waits, so the bits go out exactly once.
  wr(2, regHigh, 0x77)
  driveMMIO(write = false, addr(2, regHigh))
  driveCore(0, opRead, 2)
  expect(c.io.core(0).req.ready, 0, "core read of a slot the bus reads this cycle waits")
  expect(mmioResponse(write = false) == 0x77, "bus read wins")
  step(1); poke(c.io.a.valid, 0)
  expect(c.io.core(0).resp.valid, 0, "no response for a request that was not accepted")
  expect(c.io.core(0).req.ready, 1, "core read proceeds next cycle")
  step(1); poke(c.io.core(0).req.valid, 0)
  expect(c.io.core(0).resp.valid, 1)
  expect(peek(c.io.core(0).resp.bits.data) == 0, "core read after the bus read gets nothing twice")
  step(1)

  // Two cores read one slot in one cycle: hart 1 waits for hart 0.
  wr(3, regHigh, 0x5)
  driveCore(0, opRead, 3)
  driveCore(1, opRead, 3)
  expect(c.io.core(0).req.ready, 1)
  expect(c.io.core(1).req.ready, 0, "second reader of the same slot waits")
  step(1); poke(c.io.core(0).req.valid, 0)
  expect(c.io.core(0).resp.bits.data, 0x5, "hart 0 read")
  expect(c.io.core(1).resp.valid, 0)
  driveMMIO(write = true, addr(3, regSend), 2)        // lands while hart 1's read fires
  expect(c.io.core(1).req.ready, 1)
  mmioResponse(write = true)
  step(1); idle()
  expect(c.io.core(1).resp.valid, 1)
  expect(peek(c.io.core(1).resp.bits.data) == 0, "hart 1 reads after hart 0 cleared")
  step(1)
  expectReg(3, regHigh, 0x4, "SEND during hart 1's read survives")

  // Two cores reading different slots in one cycle both proceed.
  wr(4, regHigh, 0x1); wr(5, regHigh, 0x2)
  driveCore(0, opRead, 4); driveCore(1, opRead, 5)
  expect(c.io.core(0).req.ready, 1); expect(c.io.core(1).req.ready, 1)
  step(1); idle()
  expect(c.io.core(0).resp.bits.data, 0x1, "hart 0 reads slot 4")
  expect(c.io.core(1).resp.bits.data, 0x2, "hart 1 reads slot 5")

  // MMIO LOW write and core deactivate in one cycle: the bus write wins (documented order).
  driveMMIO(write = true, addr(6, regLow), low(1, mode = true, active = true))
  driveCore(0, opDeactivate, 6)
  mmioResponse(write = true)
  step(1); idle(); step(1)
  expectReg(6, regAct, 1, "MMIO write is applied after the core port's")
}

/** The largest configuration: all 512 slots exist, the last one works. */
class MaxSlotsTest(c: UINTCHarnessImp, nSlots: Int) extends UINTCTester(c) {
  val last = nSlots - 1
  wr(last, regLow, low(0, mode = true, active = true))
  wr(last, regSend, 33)
  step(1)
  expectWires(Seq(0), "last slot raises hart 0")
  expectReg(last, regHigh, BigInt(1) << 33, "last slot pending")
  expectReg(last - 1, regHigh, 0, "its neighbour is untouched")
  expect(core(0, opRead, last) == 0, "core port reaches the last slot")
}

class UINTCSpec extends FlatSpec with Matchers {
  private implicit val valName: ValName = ValName("harness")
  private def run(name: String, nSlots: Int, nHarts: Int)(t: UINTCHarnessImp => UINTCTester): Boolean =
    iotesters.Driver.execute(
      Array("--backend-name", "treadle", "--target-dir", s"test_run_dir/$name", "--top-name", name),
      () => LazyModule(new UINTCHarness(nSlots, nHarts)(Parameters.empty)).module)(t)

  "The UINTC" should "implement every register of every slot" in {
    run("registers", nSlots = 8, nHarts = 2)(c => new RegisterTest(c, 8)) should be (true)
  }
  it should "read 0 and ignore writes in unimplemented slots" in {
    run("unimplemented", nSlots = 5, nHarts = 2)(c => new UnimplementedSlotTest(c, 5)) should be (true)
  }
  it should "drive one registered level wire per hart" in {
    run("wire", nSlots = 4, nHarts = 3)(c => new WireTest(c)) should be (true)
  }
  it should "serve the direct core ports" in {
    run("coreport", nSlots = 6, nHarts = 2)(c => new CorePortTest(c, 6)) should be (true)
  }
  it should "lose no bit when sources race on one slot" in {
    run("races", nSlots = 8, nHarts = 2)(c => new RaceTest(c)) should be (true)
  }
  it should "support the maximum of 512 slots" in {
    run("maxslots", nSlots = maxSlots, nHarts = 1)(c => new MaxSlotsTest(c, maxSlots)) should be (true)
  }
}
