# PS control of the PL over M_AXI_HPM0_FPD: the RISC-V reset GPIO (resets.tcl) and a
# receive-only AXI UARTLite on the RISC-V console TX line, so PS Linux (or XSDB) can watch the
# RISC-V console without a second cable. Its TX is left unconnected on purpose: two drivers on
# the console RX line would need a multiplexer and a policy.
fpga_ip_cell smartconn ps_ic {NUM_SI {1} NUM_MI {2}}
fpga_net clk_fabric/clk_out1 ps_ic/aclk
fpga_net rst_fabric/interconnect_aresetn ps_ic/aresetn
connect_bd_intf_net [get_bd_intf_pins ps/M_AXI_HPM0_FPD] [get_bd_intf_pins ps_ic/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins ps_ic/M00_AXI] [get_bd_intf_pins reset_gpio/S_AXI]

fpga_ip_cell uartlite console_tap [list C_BAUDRATE [expr {$platform(clock.uart_baud)}]]
connect_bd_intf_net [get_bd_intf_pins ps_ic/M01_AXI] [get_bd_intf_pins console_tap/S_AXI]
fpga_net clk_fabric/clk_out1 console_tap/s_axi_aclk
fpga_net rst_fabric/peripheral_aresetn console_tap/s_axi_aresetn
# Same net as uart/sout -> uart_tx (mmio.tcl): connect_bd_net adds the pin to the existing net.
fpga_net uart/sout console_tap/rx
fpga_net console_tap/interrupt ps/pl_ps_irq0
