# AXI 1G/2.5G Ethernet Subsystem (RGMII to the KSZ9031) with a scatter-gather AXI DMA.
# Register ports hang off the MMIO interconnect (M01 DMA, M02 Ethernet; mmio.tcl made M00 the
# UART). The DMA masters into Rocket's front bus (S_AXI_DMA), so descriptors and buffers are
# RISC-V physical addresses and coherent with the L1 caches.

fpga_ip_cell dma dma {
    c_include_sg               {1}
    c_sg_include_stscntrl_strm {1}
    c_sg_use_stsapp_length     {1}
    c_sg_length_width          {16}
    c_addr_width               {64}
    c_include_mm2s_dre         {1}
    c_include_s2mm_dre         {1}
}
connect_bd_intf_net [get_bd_intf_pins mmio_ic/M01_AXI] [get_bd_intf_pins dma/S_AXI_LITE]
fpga_net clk_fabric/clk_out1 dma/s_axi_lite_aclk dma/m_axi_sg_aclk dma/m_axi_mm2s_aclk dma/m_axi_s2mm_aclk
fpga_net rst_fabric/peripheral_aresetn dma/axi_resetn

# SupportLevel 1: the core includes the shared IDELAYCTRL and GTX clocking (one Ethernet port).
fpga_ip_cell ethernet eth [list \
    PHY_TYPE            {RGMII} \
    SupportLevel        {1} \
    Statistics_Counters {true} \
    PHYADDR             [expr {$platform(pl.eth_phy_addr)}] \
]
connect_bd_intf_net [get_bd_intf_pins mmio_ic/M02_AXI] [get_bd_intf_pins eth/s_axi]
fpga_net clk_fabric/clk_out1 eth/s_axi_lite_clk eth/axis_clk
fpga_net rst_fabric/peripheral_aresetn eth/s_axi_lite_resetn
fpga_net clk_eth/clk_out1 eth/ref_clk
fpga_net clk_eth/clk_out2 eth/gtx_clk

# Streams (PG138 "AXI4-Stream interfaces"): data and control out, data and status in. Each
# stream's reset comes from the DMA channel that owns it, so a DMA soft reset resets both ends.
connect_bd_intf_net [get_bd_intf_pins dma/M_AXIS_MM2S]  [get_bd_intf_pins eth/s_axis_txd]
connect_bd_intf_net [get_bd_intf_pins dma/M_AXIS_CNTRL] [get_bd_intf_pins eth/s_axis_txc]
connect_bd_intf_net [get_bd_intf_pins eth/m_axis_rxd]   [get_bd_intf_pins dma/S_AXIS_S2MM]
connect_bd_intf_net [get_bd_intf_pins eth/m_axis_rxs]   [get_bd_intf_pins dma/S_AXIS_STS]
fpga_net dma/mm2s_prmry_reset_out_n eth/axi_txd_arstn
fpga_net dma/mm2s_cntrl_reset_out_n eth/axi_txc_arstn
fpga_net dma/s2mm_prmry_reset_out_n eth/axi_rxd_arstn
fpga_net dma/s2mm_sts_reset_out_n   eth/axi_rxs_arstn

# Board side: RGMII, MDIO and the PHY reset (pins in constraints/pins.xdc).
create_bd_intf_port -mode Master -vlnv xilinx.com:interface:rgmii_rtl:1.0 rgmii
create_bd_intf_port -mode Master -vlnv xilinx.com:interface:mdio_rtl:1.0 mdio
create_bd_port -dir O -type rst phy_rst_n
connect_bd_intf_net [get_bd_intf_pins eth/rgmii] [get_bd_intf_ports rgmii]
connect_bd_intf_net [get_bd_intf_pins eth/mdio] [get_bd_intf_ports mdio]
fpga_net eth/phy_rst_n port:phy_rst_n

# DMA masters (descriptors, TX reads, RX writes) into the SoC front bus.
fpga_ip_cell smartconn dma_ic {NUM_SI {3} NUM_MI {1}}
fpga_net clk_fabric/clk_out1 dma_ic/aclk
fpga_net rst_fabric/interconnect_aresetn dma_ic/aresetn
connect_bd_intf_net [get_bd_intf_pins dma/M_AXI_SG]   [get_bd_intf_pins dma_ic/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins dma/M_AXI_MM2S] [get_bd_intf_pins dma_ic/S01_AXI]
connect_bd_intf_net [get_bd_intf_pins dma/M_AXI_S2MM] [get_bd_intf_pins dma_ic/S02_AXI]
connect_bd_intf_net [get_bd_intf_pins dma_ic/M00_AXI] [get_bd_intf_pins rocket/S_AXI_DMA]
