# The fabric clock, clk_fabric: PS pl_clk0 (IOPLL-derived, not exactly 100 MHz on every PS
# setting) cleaned up by an MMCM to clock.core_hz. Rocket, its AXI ports, the peripherals and
# the PS AXI ports run on it, so no AXI path crosses clocks. The Ethernet's own clocks are in
# eth_clocks.tcl (only the net design has them).

fpga_ip_cell clk_wiz clk_fabric [list \
    PRIM_SOURCE                {No_buffer} \
    PRIM_IN_FREQ               [fpga_mhz $platform(clock.core_hz)] \
    CLKOUT1_REQUESTED_OUT_FREQ [fpga_mhz $platform(clock.core_hz)] \
    USE_LOCKED                 {true} \
    USE_RESET                  {true} \
    RESET_TYPE                 {ACTIVE_LOW} \
]
# pl_clk0 already sits on a BUFG_PS: No_buffer keeps the wizard from adding an input buffer.
fpga_net ps/pl_clk0 clk_fabric/clk_in1
fpga_net ps/pl_resetn0 clk_fabric/resetn

# The PS AXI ports are clocked from the fabric clock (see above).
fpga_net clk_fabric/clk_out1 ps/maxihpm0_fpd_aclk ps/saxihp0_fpd_aclk
