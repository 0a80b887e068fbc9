# Rocket's MMIO port (memmap.mmio_port) fans out to the PL peripherals: M00 the UART, and in a
# design with the Ethernet M01 its DMA and M02 the MAC (ethernet.tcl). Addresses: addr.tcl.
fpga_ip_cell smartconn mmio_ic [list NUM_SI 1 NUM_MI [expr {[fpga_has_ethernet] ? 3 : 1}]]
fpga_net clk_fabric/clk_out1 mmio_ic/aclk
fpga_net rst_fabric/interconnect_aresetn mmio_ic/aresetn
connect_bd_intf_net [get_bd_intf_pins rocket/M_AXI_MMIO] [get_bd_intf_pins mmio_ic/S00_AXI]

# Console UART (16550, registers at +0x1000 of its block, clocked by clk_fabric = clock.uart_hz).
fpga_ip_cell uart16550 uart
connect_bd_intf_net [get_bd_intf_pins mmio_ic/M00_AXI] [get_bd_intf_pins uart/S_AXI]
fpga_net clk_fabric/clk_out1 uart/s_axi_aclk
fpga_net rst_fabric/peripheral_aresetn uart/s_axi_aresetn

create_bd_port -dir O uart_tx
create_bd_port -dir I uart_rx
fpga_net uart/sout port:uart_tx
fpga_net port:uart_rx uart/sin

# No modem lines on the board. Tie them explicitly instead of leaving Vivado to tie everything
# to 0: CTS/DSR/DCD asserted (0, active low) so drivers see a connected line, RI inactive (1),
# freeze off.
fpga_ip_cell constant const_0 {CONST_WIDTH {1} CONST_VAL {0}}
fpga_ip_cell constant const_1 {CONST_WIDTH {1} CONST_VAL {1}}
fpga_net const_0/dout uart/ctsn uart/dsrn uart/dcdn uart/freeze
fpga_net const_1/dout uart/rin
