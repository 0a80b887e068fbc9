# Board clocks, net design only (the oscillator feeds only the Ethernet clocks). PS pl_clk0 and
# the MMCM outputs are constrained by the PS and Clocking Wizard IP themselves; only clocks
# entering on pins are declared here.
create_clock -period 5.000 -name sys_clk_200 [get_ports sys_clk_200_clk_p]

# No set_clock_groups between the fabric (PS-derived) and Ethernet (oscillator-derived) clocks:
# the only crossings are inside the Ethernet subsystem, whose core XDC constrains its
# synchronisers with set_max_delay -datapath_only, and clock groups would override those.
# reports/cdc.rpt shows every crossing after implementation.
