// U/S user-interrupt CSRs: reset values, write masks, the uie/uip views, mideleg bits 0/4/8.
#include "test.h"
const char* test_name = "csr_reset";

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  // reset values: all 0 (docs/uintr-spec.md section 1)
  CHECK_EQ(CSR_READ(CSR_USTATUS), 0, 1);
  CHECK_EQ(CSR_READ(CSR_UIE), 0, 2);
  CHECK_EQ(CSR_READ(CSR_UTVEC), 0, 3);
  CHECK_EQ(CSR_READ(CSR_USCRATCH), 0, 4);
  CHECK_EQ(CSR_READ(CSR_UEPC), 0, 5);
  CHECK_EQ(CSR_READ(CSR_UCAUSE), 0, 6);
  CHECK_EQ(CSR_READ(CSR_UTVAL), 0, 7);
  CHECK_EQ(CSR_READ(CSR_UIP), 0, 8);
  CHECK_EQ(CSR_READ(CSR_SIDELEG), 0, 9);
  CHECK_EQ(CSR_READ(CSR_SUIST), 0, 10);
  CHECK_EQ(CSR_READ(CSR_SUIRS), 0, 11);

  // write masks
  CSR_WRITE(CSR_USTATUS, ~0ull);
  CHECK_EQ(CSR_READ(CSR_USTATUS), 0x11, 12);
  CSR_WRITE(CSR_USTATUS, 0);
  CSR_WRITE(CSR_SIDELEG, ~0ull);
  CHECK_EQ(CSR_READ(CSR_SIDELEG), USIP | UTIP | UEIP, 13);
  CSR_WRITE(CSR_SUIST, ~0ull);
  CHECK_EQ(CSR_READ(CSR_SUIST), (1ull << 63) | ((1ull << 56) - 1), 14);
  CSR_WRITE(CSR_SUIRS, ~0ull);
  CHECK_EQ(CSR_READ(CSR_SUIRS), (1ull << 63) | 0xffff, 15);
  CSR_WRITE(CSR_USCRATCH, 0x123456789abcdef0ull);
  CHECK_EQ(CSR_READ(CSR_USCRATCH), 0x123456789abcdef0ull, 16);
  CSR_WRITE(CSR_UEPC, 0x80001235);
  CHECK_EQ(CSR_READ(CSR_UEPC), 0x80001234, 17);
  CSR_WRITE(CSR_UCAUSE, ~0ull);
  CHECK_EQ(CSR_READ(CSR_UCAUSE), (1ull << 63) | 31, 18);
  CSR_WRITE(CSR_UTVEC, 0x80002100);
  CHECK_EQ(CSR_READ(CSR_UTVEC), 0x80002100, 19);
  CSR_WRITE(CSR_UTVEC, 0x80002101);            // vectored
  CHECK_EQ(CSR_READ(CSR_UTVEC), 0x80002101, 20);
  // WARL fields, formed exactly like stvec/sepc (docs/uintr-spec.md section 1): MODE >= 2 is not
  // kept (bit 1 reads 0, so 2 reads as direct and 3 as vectored), a vectored base is
  // 256-byte aligned, uepc bit 0 reads 0 (IALIGN 16)
  static const uint64_t tvecs[] = {0x80002102, 0x80002103, 0x800021c3, 0x80002141, 0x800021fe, 0x80002100};
  static const uint64_t tvec_read[] = {0x80002100, 0x80002101, 0x80002101, 0x80002101, 0x800021fc, 0x80002100};
  for (int i = 0; i < 6; i++) {
    CSR_WRITE(CSR_UTVEC, tvecs[i]);
    CSR_WRITE(CSR_STVEC, tvecs[i]);
    CHECK_EQ(CSR_READ(CSR_UTVEC), tvec_read[i], 40 + i);
    CHECK_EQ(CSR_READ(CSR_UTVEC), CSR_READ(CSR_STVEC), 50 + i);
  }
  static const uint64_t epcs[] = {0x80001235, 0x80001237, 0x80001236, 0xffffffffffffffffull};
  for (int i = 0; i < 4; i++) {
    CSR_WRITE(CSR_UEPC, epcs[i]);
    CSR_WRITE(CSR_SEPC, epcs[i]);
    CHECK_EQ(CSR_READ(CSR_UEPC) & 1, 0, 60 + i);
    CHECK_EQ(CSR_READ(CSR_UEPC), CSR_READ(CSR_SEPC), 64 + i);
  }
  CSR_WRITE(CSR_UTVEC, 0x80002101);
  CSR_WRITE(CSR_UTVAL, 0x1234);
  CHECK_EQ(CSR_READ(CSR_UTVAL), 0x1234, 21);

  // mideleg takes bits 0, 4, 8 (firmware probe: write/read back)
  CSR_WRITE(CSR_MIDELEG, USIP | UTIP | UEIP);
  CHECK_EQ(CSR_READ(CSR_MIDELEG) & (USIP | UTIP | UEIP), USIP | UTIP | UEIP, 22);

  // uie / uip are views of mie / mip masked by sideleg
  CSR_WRITE(CSR_SIDELEG, 0);
  CSR_WRITE(CSR_MIE, 0);
  CSR_WRITE(CSR_UIE, ~0ull);
  CHECK_EQ(CSR_READ(CSR_UIE), 0, 23);
  CHECK_EQ(CSR_READ(CSR_MIE), 0, 24);
  CSR_WRITE(CSR_SIDELEG, USIP | UEIP);
  CSR_WRITE(CSR_UIE, ~0ull);
  CHECK_EQ(CSR_READ(CSR_UIE), USIP | UEIP, 25);
  CHECK_EQ(CSR_READ(CSR_MIE), USIP | UEIP, 26);
  CSR_WRITE(CSR_MIE, UTIP | USIP);
  CHECK_EQ(CSR_READ(CSR_UIE), USIP, 27);
  CSR_WRITE(CSR_MIE, 0);
  // uip: software may write USIP only (and only when delegated)
  CSR_WRITE(CSR_UIP, ~0ull);
  CHECK_EQ(CSR_READ(CSR_UIP), USIP, 28);
  CHECK_EQ(CSR_READ(CSR_MIP) & (USIP | UTIP | UEIP), USIP, 29);
  CSR_WRITE(CSR_UIP, 0);
  CHECK_EQ(CSR_READ(CSR_MIP) & USIP, 0, 30);
  CSR_WRITE(CSR_SIDELEG, UEIP);
  CSR_WRITE(CSR_UIP, USIP);                    // USIP not delegated: ignored
  CHECK_EQ(CSR_READ(CSR_MIP) & USIP, 0, 31);
  // M-mode writes the software bits through mip; uip shows the delegated ones
  CSR_WRITE(CSR_MIP, UEIP | USIP);
  CHECK_EQ(CSR_READ(CSR_MIP) & (USIP | UEIP), USIP | UEIP, 32);
  CHECK_EQ(CSR_READ(CSR_UIP), UEIP, 33);
  CSR_WRITE(CSR_MIP, 0);
  CHECK_EQ(CSR_READ(CSR_MIP) & (USIP | UTIP | UEIP), 0, 34);
  // S-mode view: sip/sie carry the user bits delegated by mideleg
  CSR_WRITE(CSR_SIP, USIP);
  CHECK_EQ(CSR_READ(CSR_MIP) & USIP, USIP, 35);
  CSR_WRITE(CSR_SIP, 0);
  CHECK_EQ(CSR_READ(CSR_MIP) & USIP, 0, 36);
  return 0;
}
