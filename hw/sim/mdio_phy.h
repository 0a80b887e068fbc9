// The board's Ethernet PHY, a Micrel KSZ9031RNX at MDIO address 1, as seen through MDIO: the
// IEEE 802.3 clause-22 registers a driver reads to find the PHY and the link (identifier,
// basic status, autonegotiation, 1000BASE-T status) plus the KSZ9031's PHY control register
// (resolved speed and duplex). The link is up, autonegotiated to 1000 Mb/s full duplex, when a
// cable is attached (the harness's +nic); down otherwise.
#pragma once
#include <cstdint>

class Ksz9031 {
 public:
  static constexpr unsigned kAddress = 1;     // strap on the board (docs/board-axu15eg.md)
  static constexpr uint16_t kId1 = 0x0022, kId2 = 0x1622;  // Micrel OUI, KSZ9031 model, rev 2

  explicit Ksz9031(bool link) : link_(link) { reset(); }

  void reset() {
    bmcr_ = 0x1140;       // AN enable, full duplex, speed select 1000 (bits 6,13 = 10)
    anar_ = 0x01E1;       // 10/100 half/full, 802.3 selector
    gbcr_ = 0x0300;       // advertise 1000BASE-T full and half
    mmd_ctrl_ = mmd_data_ = 0;
    for (auto& r : other_) r = 0;
  }

  uint16_t read(unsigned reg) const {
    switch (reg) {
      case 0: return bmcr_;
      // 100BASE-T4 no, 100 FD/HD, 10 FD/HD, extended status, preamble suppression, AN ability,
      // extended capability; with the link: link status (bit 2) and AN complete (bit 5).
      case 1: return uint16_t(0x7949 | (link_ ? 0x0024 : 0));
      case 2: return kId1;
      case 3: return kId2;
      case 4: return anar_;
      case 5: return link_ ? 0xCDE1 : 0;             // partner: 10/100 FD/HD, pause, ack
      case 6: return link_ ? 0x000F : 0x0004;        // AN expansion: partner AN able, page rx
      case 9: return gbcr_;
      case 10: return link_ ? 0x3C00 : 0;            // partner 1000BASE-T FD/HD, local+remote OK
      case 13: return mmd_ctrl_;
      case 14: return mmd_data_;
      case 15: return 0x3000;                        // extended status: 1000BASE-T FD/HD
      case 0x1F: return link_ ? 0x0048 : 0;          // KSZ9031 PHY control: 1000 (bit 6), full duplex (bit 3)
      default: return reg < 32 ? other_[reg] : 0xFFFF;
    }
  }

  void write(unsigned reg, uint16_t v) {
    switch (reg) {
      case 0:
        if (v & 0x8000) { reset(); return; }          // soft reset, self-clearing
        bmcr_ = v & ~0x0200;                          // restart AN completes at once (bit self-clears)
        return;
      case 4: anar_ = v; return;
      case 9: gbcr_ = v; return;
      case 13: mmd_ctrl_ = v; return;                 // MMD access (RGMII pad skew): accepted, no effect
      case 14: mmd_data_ = v; return;
      case 1: case 2: case 3: case 5: case 6: case 10: case 15: case 0x1F: return;  // read-only
      default: if (reg < 32) other_[reg] = v; return;
    }
  }

  bool link() const { return link_; }

 private:
  bool link_;
  uint16_t bmcr_, anar_, gbcr_, mmd_ctrl_, mmd_data_;
  uint16_t other_[32];
};
