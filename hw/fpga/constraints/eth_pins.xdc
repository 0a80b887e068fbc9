# AXU15EG PL pins of the Ethernet (docs/board-axu15eg.md "PL pins"), for the net design only.
# Port names are those of the Vivado-generated block-design wrapper (axu15eg_wrapper):
# interface ports expand to <port>_<signal>. The Ethernet PHY bank is 1.8 V, the oscillator is
# on a 1.2 V HP bank.

# 200 MHz differential oscillator (the IBUFDS is inside clk_eth).
set_property PACKAGE_PIN AL8 [get_ports sys_clk_200_clk_p]
set_property PACKAGE_PIN AL7 [get_ports sys_clk_200_clk_n]
set_property IOSTANDARD DIFF_SSTL12 [get_ports sys_clk_200_clk_p]
set_property IOSTANDARD DIFF_SSTL12 [get_ports sys_clk_200_clk_n]

# KSZ9031RNX PHY: RGMII, MDIO, reset.
set_property PACKAGE_PIN AA7 [get_ports rgmii_rxc]
set_property PACKAGE_PIN AA6 [get_ports rgmii_rx_ctl]
set_property PACKAGE_PIN U4  [get_ports {rgmii_rd[0]}]
set_property PACKAGE_PIN U5  [get_ports {rgmii_rd[1]}]
set_property PACKAGE_PIN Y9  [get_ports {rgmii_rd[2]}]
set_property PACKAGE_PIN Y10 [get_ports {rgmii_rd[3]}]
set_property PACKAGE_PIN V3  [get_ports rgmii_txc]
set_property PACKAGE_PIN V4  [get_ports rgmii_tx_ctl]
set_property PACKAGE_PIN AC9 [get_ports {rgmii_td[0]}]
set_property PACKAGE_PIN AB9 [get_ports {rgmii_td[1]}]
set_property PACKAGE_PIN AB5 [get_ports {rgmii_td[2]}]
set_property PACKAGE_PIN AB6 [get_ports {rgmii_td[3]}]
set_property PACKAGE_PIN M10 [get_ports mdio_mdc]
set_property PACKAGE_PIN L10 [get_ports mdio_mdio_io]
set_property PACKAGE_PIN R9  [get_ports phy_rst_n]
set_property IOSTANDARD LVCMOS18 [get_ports {rgmii_rxc rgmii_rx_ctl rgmii_rd[*] rgmii_txc rgmii_tx_ctl rgmii_td[*]}]
set_property IOSTANDARD LVCMOS18 [get_ports {mdio_mdc mdio_mdio_io phy_rst_n}]
# Fast edges for the 125 MHz DDR outputs; MDC/MDIO and reset are slow and keep the default.
set_property SLEW FAST [get_ports {rgmii_txc rgmii_tx_ctl rgmii_td[*]}]
