# The Rocket SoC, added from RTL as a module reference to rocket_soc (gen_wrapper.py: Xilinx
# interface names around UintrSystem, DRAM window remap). Its memory port goes to the PS DDR
# through S_AXI_HP0_FPD (non-coherent: the PS must not cache the window while RISC-V runs).
create_bd_cell -type module -reference rocket_soc rocket

fpga_net clk_fabric/clk_out1 rocket/clock
fpga_net rst_rocket/peripheral_reset rocket/reset

# A SmartConnect between the two adapts the ID width (4 -> 6) and keeps the port protocol-clean
# if either side changes width.
fpga_ip_cell smartconn mem_ic {NUM_SI {1} NUM_MI {1}}
fpga_net clk_fabric/clk_out1 mem_ic/aclk
fpga_net rst_fabric/interconnect_aresetn mem_ic/aresetn
connect_bd_intf_net [get_bd_intf_pins rocket/M_AXI_MEM] [get_bd_intf_pins mem_ic/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins mem_ic/M00_AXI] [get_bd_intf_pins ps/S_AXI_HP0_FPD]
