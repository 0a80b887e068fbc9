# Resets, both synchronous to clk_fabric:
#  * rst_fabric: peripherals and interconnects; out of reset once the PS releases pl_resetn0 and
#    the fabric MMCM locks.
#  * rst_rocket: the RISC-V SoC; additionally held while bit ps.run_bit of the PS-controlled
#    AXI GPIO `reset_gpio` is 0 (its value after PL configuration), so the PS can fill DRAM
#    before any hart fetches. proc_sys_reset's aux reset input is active low here, so GPIO 1
#    means "run" and no glue logic is needed.
fpga_ip_cell sys_reset rst_fabric
fpga_ip_cell sys_reset rst_rocket {C_AUX_RESET_HIGH {0}}

fpga_net clk_fabric/clk_out1 rst_fabric/slowest_sync_clk rst_rocket/slowest_sync_clk
fpga_net ps/pl_resetn0 rst_fabric/ext_reset_in rst_rocket/ext_reset_in
fpga_net clk_fabric/locked rst_fabric/dcm_locked rst_rocket/dcm_locked

fpga_ip_cell gpio reset_gpio {
    C_GPIO_WIDTH    {1}
    C_ALL_OUTPUTS   {1}
    C_DOUT_DEFAULT  {0x00000000}
}
fpga_net clk_fabric/clk_out1 reset_gpio/s_axi_aclk
fpga_net rst_fabric/peripheral_aresetn reset_gpio/s_axi_aresetn
fpga_net reset_gpio/gpio_io_o rst_rocket/aux_reset_in

# The board LED shows that the cores run (the GPIO bit, not the reset output: visible even when
# the fabric clock is missing).
create_bd_port -dir O -from 0 -to 0 led
fpga_net reset_gpio/gpio_io_o port:led
