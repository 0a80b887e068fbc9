package uintr.uintc

import chisel3.iotesters.PeekPokeTester
import uintr.platform.Platform

/** Helpers shared by the UINTC tests: one MMIO access or one core-port operation at a time,
  * with the timing the device promises (MMIO answered in the cycle it is accepted, core-port
  * responses exactly one cycle after the request). */
class UINTCTester(c: UINTCHarnessImp) extends PeekPokeTester(c) {
  import UINTCConsts._

  val base: BigInt = Platform.memmap.UINTC_BASE
  val nHarts: Int = c.io.usip.length
  def addr(slot: Int, reg: Int): BigInt = base + slot * slotBytes + reg
  def low(hart: Int, mode: Boolean, active: Boolean): BigInt =
    (BigInt(hart) << hartidShift) | (if (mode) BigInt(1) << modeBit else 0) | (if (active) BigInt(1) << activeBit else 0)
  val all64: BigInt = (BigInt(1) << 64) - 1

  def idle(): Unit = {
    poke(c.io.a.valid, 0)
    poke(c.io.d.ready, 1)
    c.io.core.foreach { p => poke(p.req.valid, 0) }
  }

  /** Drive an MMIO request for the current cycle only (no step). */
  def driveMMIO(write: Boolean, address: BigInt, data: BigInt = 0, narrow: Boolean = false): Unit = {
    poke(c.io.a.valid, 1)
    poke(c.io.a.bits.write, if (write) 1 else 0)
    poke(c.io.a.bits.narrow, if (narrow) 1 else 0)
    poke(c.io.a.bits.address, address)
    poke(c.io.a.bits.data, data)
    poke(c.io.d.ready, 1)
  }

  /** Check the response of the MMIO request driven this cycle and return its data (no step). */
  def mmioResponse(write: Boolean): BigInt = {
    expect(c.io.a.ready, 1, "register router accepts at once")
    expect(c.io.d.valid, 1, "register router answers in the same cycle")
    expect(c.io.d.bits.isData, if (write) 0 else 1)
    expect(c.io.d.bits.denied, 0)
    peek(c.io.d.bits.data)
  }

  def mmio(write: Boolean, address: BigInt, data: BigInt = 0, narrow: Boolean = false): BigInt = {
    driveMMIO(write, address, data, narrow)
    val r = mmioResponse(write)
    step(1)
    poke(c.io.a.valid, 0)
    r
  }
  def rd(slot: Int, reg: Int): BigInt = mmio(write = false, addr(slot, reg))
  def wr(slot: Int, reg: Int, data: BigInt): Unit = mmio(write = true, addr(slot, reg), data)
  def expectReg(slot: Int, reg: Int, value: BigInt, msg: String): Unit = {
    val got = rd(slot, reg)
    expect(got == value, f"$msg: slot $slot reg 0x$reg%x read 0x$got%x, expected 0x$value%x")
  }

  /** Drive a core-port request for the current cycle only (no step). */
  def driveCore(h: Int, op: BigInt, slot: Int, data: BigInt = 0): Unit = {
    poke(c.io.core(h).req.valid, 1)
    poke(c.io.core(h).req.bits.op, op)
    poke(c.io.core(h).req.bits.slot, slot)
    poke(c.io.core(h).req.bits.data, data)
  }

  /** One core-port operation; returns the response data (which arrives one cycle later). */
  def core(h: Int, op: BigInt, slot: Int, data: BigInt = 0): BigInt = {
    driveCore(h, op, slot, data)
    expect(c.io.core(h).req.ready, 1, s"core port $h accepts")
    step(1)
    poke(c.io.core(h).req.valid, 0)
    expect(c.io.core(h).resp.valid, 1, s"core port $h responds one cycle after the request")
    val r = peek(c.io.core(h).resp.bits.data)
    step(1)
    expect(c.io.core(h).resp.valid, 0, s"core port $h responds exactly once")
    r
  }

  def expectWires(expected: Seq[Int], msg: String): Unit =
    (0 until nHarts).foreach { h =>
      expect(c.io.usip(h), if (expected.contains(h)) 1 else 0, s"$msg: usip[$h]")
    }

  val opSend: BigInt       = Platform.uipi.SEND
  val opRead: BigInt       = Platform.uipi.READ
  val opWrite: BigInt      = Platform.uipi.WRITE
  val opActivate: BigInt   = Platform.uipi.ACTIVATE
  val opDeactivate: BigInt = Platform.uipi.DEACTIVATE

  idle()
}
