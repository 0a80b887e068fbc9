# What the Vivado stub knows about each IP the block design uses: pins (direction, "!" =
# must be connected), interfaces (mode, "!" = must be connected), master address spaces,
# the address segment behind each slave interface, and the CONFIG keys the flow may set.
# Written from the product guides (PG), not from any exported design; only the pins and keys
# this flow touches or must connect are listed, so a typo in bd/*.tcl is caught here.
# Pins that depend on configuration (SmartConnect ports, xlconcat inputs, clk_wiz options,
# DMA status/control streams) are added by stub_dynamic_pins in vivado_stub.tcl.

set ipcatalog(zynq_ultra_ps_e) {
    pins   {pl_clk0 O pl_resetn0 O maxihpm0_fpd_aclk I! saxihp0_fpd_aclk I! pl_ps_irq0 I}
    intfs  {M_AXI_HPM0_FPD master! S_AXI_HP0_FPD slave!}
    spaces {Data}
    segs   {}
    named_segs {SAXIGP2/HP0_DDR_LOW SAXIGP2/HP0_DDR_HIGH SAXIGP2/HP0_LPS_OCM SAXIGP2/HP0_QSPI}
    config {PSU__*}
}
set ipcatalog(clk_wiz) {
    pins   {locked O clk_out1 O}
    intfs  {}
    spaces {}
    segs   {}
    config {PRIM_SOURCE PRIM_IN_FREQ CLKOUT1_REQUESTED_OUT_FREQ CLKOUT2_USED
            CLKOUT2_REQUESTED_OUT_FREQ USE_LOCKED USE_RESET RESET_TYPE}
}
set ipcatalog(proc_sys_reset) {
    pins   {slowest_sync_clk I! ext_reset_in I! aux_reset_in I mb_debug_sys_rst I dcm_locked I
            mb_reset O bus_struct_reset O peripheral_reset O interconnect_aresetn O
            peripheral_aresetn O}
    intfs  {}
    spaces {}
    segs   {}
    config {C_AUX_RESET_HIGH C_EXT_RESET_HIGH C_NUM_PERP_ARESETN C_NUM_PERP_RST}
}
set ipcatalog(axi_gpio) {
    pins   {s_axi_aclk I! s_axi_aresetn I! gpio_io_o O gpio_io_i I gpio_io_t O ip2intc_irpt O}
    intfs  {S_AXI slave! GPIO master}
    spaces {}
    segs   {S_AXI Reg}
    config {C_GPIO_WIDTH C_ALL_OUTPUTS C_ALL_INPUTS C_DOUT_DEFAULT C_IS_DUAL C_INTERRUPT_PRESENT}
}
set ipcatalog(axi_uart16550) {
    pins   {s_axi_aclk I! s_axi_aresetn I! ip2intc_irpt O freeze I! rin I! dcdn I! dsrn I! ctsn I!
            sin I! sout O baudoutn O rtsn O dtrn O out1n O out2n O txrdyn O rxrdyn O ddis O}
    intfs  {S_AXI slave! UART master}
    spaces {}
    segs   {S_AXI Reg}
    config {C_S_AXI_ACLK_FREQ_HZ C_HAS_EXTERNAL_XIN C_EXTERNAL_XIN_CLK_HZ}
}
set ipcatalog(axi_uartlite) {
    pins   {s_axi_aclk I! s_axi_aresetn I! interrupt O rx I! tx O}
    intfs  {S_AXI slave! UART master}
    spaces {}
    segs   {S_AXI Reg}
    config {C_BAUDRATE C_DATA_BITS C_USE_PARITY C_ODD_PARITY C_S_AXI_ACLK_FREQ_HZ}
}
set ipcatalog(axi_dma) {
    pins   {s_axi_lite_aclk I! m_axi_sg_aclk I! m_axi_mm2s_aclk I! m_axi_s2mm_aclk I! axi_resetn I!
            mm2s_introut O s2mm_introut O mm2s_prmry_reset_out_n O s2mm_prmry_reset_out_n O
            axi_dma_tstvec O}
    intfs  {S_AXI_LITE slave! M_AXI_SG master! M_AXI_MM2S master! M_AXI_S2MM master!
            M_AXIS_MM2S master! S_AXIS_S2MM slave!}
    spaces {Data_SG Data_MM2S Data_S2MM}
    segs   {S_AXI_LITE Reg}
    config {c_include_sg c_sg_include_stscntrl_strm c_sg_use_stsapp_length c_sg_length_width
            c_addr_width c_include_mm2s_dre c_include_s2mm_dre c_include_mm2s c_include_s2mm
            c_m_axi_mm2s_data_width c_m_axis_mm2s_tdata_width c_micro_dma}
}
set ipcatalog(axi_ethernet) {
    pins   {s_axi_lite_clk I! s_axi_lite_resetn I! axis_clk I! axi_txd_arstn I! axi_txc_arstn I!
            axi_rxd_arstn I! axi_rxs_arstn I! gtx_clk I! ref_clk I! phy_rst_n O interrupt O
            mac_irq O gtx_clk_out O gtx_clk90_out O}
    intfs  {s_axi slave! s_axis_txd slave! s_axis_txc slave! m_axis_rxd master! m_axis_rxs master!
            rgmii master! mdio master!}
    spaces {}
    segs   {s_axi Reg0}
    config {PHY_TYPE SupportLevel Statistics_Counters Statistics_Width PHYADDR TXCSUM RXCSUM
            Frame_Filter TXMEM RXMEM}
}
set ipcatalog(smartconnect) {
    pins   {aclk I! aresetn I!}
    intfs  {}
    spaces {}
    segs   {}
    config {NUM_SI NUM_MI NUM_CLKS}
}
set ipcatalog(xlconcat) {
    pins   {dout O}
    intfs  {}
    spaces {}
    segs   {}
    config {NUM_PORTS IN*_WIDTH}
}
set ipcatalog(xlconstant) {
    pins   {dout O}
    intfs  {}
    spaces {}
    segs   {}
    config {CONST_WIDTH CONST_VAL}
}

# Board-level interface ports: the signals the Vivado-generated wrapper gives them, which the
# XDC must name.
set ipcatalog(intf:xilinx.com:interface:diff_clock_rtl:1.0) {clk_p clk_n}
set ipcatalog(intf:xilinx.com:interface:rgmii_rtl:1.0) {rd[0] rd[1] rd[2] rd[3] rx_ctl rxc td[0] td[1] td[2] td[3] tx_ctl txc}
set ipcatalog(intf:xilinx.com:interface:mdio_rtl:1.0) {mdc mdio_io}
