# The block designs build.tcl can make (its optional third argument; the Makefile's DESIGN=):
# which block-design files (tcl/bd/) each sources, in order, and which constraint files
# (constraints/) it takes.
#  * net:     PS, SoC, DDR, console UART, AXI DMA and AXI 1G/2.5G Ethernet to the KSZ9031 (the
#             network system's board). The Ethernet Subsystem needs a paid Xilinx licence.
#  * minimal: PS, SoC, DDR and the console UART only: first light with no licensed IP. The
#             SoC's device tree still names the DMA and Ethernet; nothing answers at their
#             addresses, so software must not touch them (the memory test and the boot checks
#             do not).
set fpga_default_design net
array set fpga_designs {
    net {
        bd  {util ps clocks resets soc mmio eth_clocks ethernet ps_ctrl irq addr}
        xdc {pins.xdc eth_pins.xdc clocks.xdc rgmii.xdc}
    }
    minimal {
        bd  {util ps clocks resets soc mmio ps_ctrl irq addr}
        xdc {pins.xdc}
    }
}

# The design's entry (bd, xdc) by key; an unknown design name is an error naming the known ones.
proc fpga_design_part {design key} {
    global fpga_designs
    if {![info exists fpga_designs($design)]} {
        error "unknown design '$design'; known: [lsort [array names fpga_designs]]"
    }
    return [dict get $fpga_designs($design) $key]
}

# Whether the open design has the Ethernet and its DMA (mmio, irq and addr adapt to it).
proc fpga_has_ethernet {} {
    global fpga_design
    return [expr {"ethernet" in [fpga_design_part $fpga_design bd]}]
}
