# The one place that says which Vivado this flow is written for, and the IP versions that ship
# with it. To move to another release: change fpga_vivado_version, run the flow, fix the IP
# versions it reports as unknown (Vivado lists them in the IP catalog), and re-check the PS
# configuration (zynq_ultra_ps_e property names change rarely, but they do change).

set fpga_vivado_version 2022.2
set fpga_version_file [file normalize [info script]]

# IP cores used by the block design (VLNV), pinned so that a newer Vivado cannot silently
# substitute a core with other defaults. bd/*.tcl refer to them by key.
array set fpga_ip {
    zynq_ps     xilinx.com:ip:zynq_ultra_ps_e:3.4
    clk_wiz     xilinx.com:ip:clk_wiz:6.0
    sys_reset   xilinx.com:ip:proc_sys_reset:5.0
    gpio        xilinx.com:ip:axi_gpio:2.0
    uart16550   xilinx.com:ip:axi_uart16550:2.0
    uartlite    xilinx.com:ip:axi_uartlite:2.0
    dma         xilinx.com:ip:axi_dma:7.1
    ethernet    xilinx.com:ip:axi_ethernet:7.2
    smartconn   xilinx.com:ip:smartconnect:1.0
    concat      xilinx.com:ip:xlconcat:2.1
    constant    xilinx.com:ip:xlconstant:1.1
}

# Stop before doing anything when the running Vivado is not the one above. Called once, by
# build.tcl, before any other Vivado command.
proc fpga_check_vivado_version {} {
    global fpga_vivado_version fpga_version_file
    set running [version -short]
    if {$running ne $fpga_vivado_version} {
        error "this flow is written for Vivado $fpga_vivado_version but Vivado $running is running;\
               change fpga_vivado_version in $fpga_version_file (and the IP versions beside it) to move"
    }
    puts "fpga: Vivado $running (as required by version.tcl)"
}
