package uintr.uintc

import chisel3._
import chisel3.util._
import uintr.platform.Platform

/** Operation codes on the core port. They are the `uipi` funct7 values (docs/uintr-spec.md
  * section 2), so the `uipi` RoCC unit ([[UipiRoCC]]) forwards funct7 unchanged. */
object UintcOp {
  val width = 3
  val send       = Platform.uipi.SEND.U(width.W)        // pending |= 1 << data[5:0]
  val read       = Platform.uipi.READ.U(width.W)        // resp.data = pending; pending := 0
  val write      = Platform.uipi.WRITE.U(width.W)       // pending |= data
  val activate   = Platform.uipi.ACTIVATE.U(width.W)    // Active := 1
  val deactivate = Platform.uipi.DEACTIVATE.U(width.W)  // Active := 0
}

/** A request from a core (its tile's `uipi` RoCC unit, [[UipiRoCC]]) to the UINTC.
  * The issuer has already done every permission check of the spec (suist/suirs Enable, table
  * bounds, entry Valid); the UINTC itself only drops requests whose slot is not implemented. */
class UintcCoreReq extends Bundle {
  val op   = UInt(UintcOp.width.W)
  val slot = UInt(16.W)      // same width as suirs.index and the UIST entry's slot field
  val data = UInt(64.W)      // send: vector in [5:0]; write: OR mask; otherwise ignored
}

class UintcCoreResp extends Bundle {
  val data = UInt(64.W)      // read: the pending word that was cleared; every other op: 0
}

/** Client view of the direct core port: a request channel with back-pressure and a response
  * that arrives exactly one cycle after the request fired (every accepted request gets exactly
  * one response, so the issuer can simply wait for it to retire the instruction).
  * The UINTC holds one of these per hart, flipped. */
class UintcCoreIO extends Bundle {
  val req  = Decoupled(new UintcCoreReq)
  val resp = Flipped(Valid(new UintcCoreResp))
}

object UintcCoreIO {
  /** Drive an unused port from the client side: never requests. */
  def tieOff(port: UintcCoreIO): Unit = {
    port.req.valid := false.B
    port.req.bits := DontCare
  }
}
