# RGMII receive timing at 1 Gb/s (125 MHz DDR) for the KSZ9031 with its pad-skew registers at
# their reset values (no delay in the PHY: RGMII 1.3 "edge aligned", data within +-0.5 ns of
# each RXC edge at the FPGA pins, traces length-matched on the board). The Ethernet core delays
# the data with its own IDELAYs (reference clock: clk_eth 333.333 MHz) and its core XDC holds
# the capture-side and transmit-side constraints (forwarded TXC); this file only describes what
# arrives at the pins. If software programs PHY skews (MMD 2, registers 4..8), change the
# delays here to match.
create_clock -period 8.000 -name rgmii_rxc [get_ports rgmii_rxc]

set_input_delay -clock [get_clocks rgmii_rxc] -max  0.500 [get_ports {rgmii_rd[*] rgmii_rx_ctl}]
set_input_delay -clock [get_clocks rgmii_rxc] -min -0.500 [get_ports {rgmii_rd[*] rgmii_rx_ctl}]
set_input_delay -clock [get_clocks rgmii_rxc] -clock_fall -max  0.500 -add_delay [get_ports {rgmii_rd[*] rgmii_rx_ctl}]
set_input_delay -clock [get_clocks rgmii_rxc] -clock_fall -min -0.500 -add_delay [get_ports {rgmii_rd[*] rgmii_rx_ctl}]

# RXC crosses into the core's clocks through the core's own FIFOs, constrained by its XDC (no
# clock groups here for the same reason as in clocks.xdc).
