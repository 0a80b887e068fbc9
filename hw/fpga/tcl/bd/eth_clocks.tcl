# clk_eth: the board's 200 MHz oscillator (independent of the PS) to the IDELAYCTRL reference
# and the RGMII GTX clock, which need tighter jitter than the PS PLL output gives. Only the
# Ethernet uses them.

create_bd_intf_port -mode Slave -vlnv xilinx.com:interface:diff_clock_rtl:1.0 sys_clk_200
set_property CONFIG.FREQ_HZ [expr {$platform(pl.osc_hz)}] [get_bd_intf_ports sys_clk_200]

fpga_ip_cell clk_wiz clk_eth [list \
    PRIM_SOURCE                {Differential_clock_capable_pin} \
    PRIM_IN_FREQ               [fpga_mhz $platform(pl.osc_hz)] \
    CLKOUT1_REQUESTED_OUT_FREQ [fpga_mhz $platform(pl.idelay_ref_hz)] \
    CLKOUT2_USED               {true} \
    CLKOUT2_REQUESTED_OUT_FREQ [fpga_mhz $platform(pl.gtx_hz)] \
    USE_LOCKED                 {true} \
    USE_RESET                  {true} \
    RESET_TYPE                 {ACTIVE_LOW} \
]
connect_bd_intf_net [get_bd_intf_ports sys_clk_200] [get_bd_intf_pins clk_eth/CLK_IN1_D]
fpga_net ps/pl_resetn0 clk_eth/resetn
