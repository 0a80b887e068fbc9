package uintr.uintc

import freechips.rocketchip.config.Field
import freechips.rocketchip.diplomacy.AddressSet
import uintr.platform.Platform

/** Register layout of one UINTC slot (docs/uintr-spec.md section 4). All numbers come from
  * platform/platform.toml so that the kernel, the harness and the RTL cannot drift apart. */
object UINTCConsts {
  val slotBytes: Int   = Platform.uintc.SLOT_BYTES.toInt
  val regSend: Int     = Platform.uintc.REG_SEND.toInt
  val regLow: Int      = Platform.uintc.REG_LOW.toInt
  val regHigh: Int     = Platform.uintc.REG_HIGH.toInt
  val regAct: Int      = Platform.uintc.REG_ACT.toInt
  val activeBit: Int   = Platform.uintc.LOW_ACTIVE_BIT.toInt
  val modeBit: Int     = Platform.uintc.LOW_MODE_BIT.toInt
  val hartidShift: Int = Platform.uintc.LOW_HARTID_SHIFT.toInt
  val hartidBits: Int  = 16   // LOW[31:16]
  val pendingBits: Int = 64   // one pending word per slot; SEND sets bit data[5:0]
  val vectorBits: Int  = 6
  val maxSlots: Int    = Platform.uintc.MAX_SLOTS.toInt
  val regionSize: BigInt = Platform.memmap.UINTC_SIZE
  val compatible: String = Platform.uintc.COMPATIBLE

  def slotOffset(slot: Int): Int = slot * slotBytes
}

/** @param nSlots    implemented slots; the rest of the 0x4000-byte region reads 0, ignores writes
  * @param intStages extra register stages on each hart's wire (beyond the one the spec requires),
  *                  for timing closure like CLINTParams.intStages */
case class UINTCParams(
  baseAddress: BigInt = Platform.memmap.UINTC_BASE,
  nSlots: Int = Platform.uintc.DEFAULT_SLOTS.toInt,
  intStages: Int = 0)
{
  require(nSlots >= 1 && nSlots <= UINTCConsts.maxSlots,
    s"UINTC slot count $nSlots must be in 1..${UINTCConsts.maxSlots}")
  require(nSlots * UINTCConsts.slotBytes <= UINTCConsts.regionSize)
  def address = AddressSet(baseAddress, UINTCConsts.regionSize - 1)
  /** Cycles from the end of an operation that changed a slot (the uipi unit's response, the data
    * of a HIGH read leaving the device) until the hart's mip.USIP shows it, at most: the slot's
    * state register, the wire's register, `intStages`, and the tile's interrupt crossing register.
    * The core waits that long before uret (core patch 0005, `UintrSettleCycles`). */
  def settleCycles: Int = 3 + intStages
}

case object UINTCKey extends Field[Option[UINTCParams]](None)
