# Address map, all from platform.toml (RISC-V side) and board.toml (PS side).

# RISC-V MMIO port -> PL peripherals.
fpga_map rocket/M_AXI_MMIO uart/S_AXI     $platform(memmap.axi_uart_base) $platform(memmap.axi_uart_size)
if {[fpga_has_ethernet]} {
    fpga_map rocket/M_AXI_MMIO dma/S_AXI_LITE $platform(memmap.dma_base)      $platform(memmap.dma_size)
    fpga_map rocket/M_AXI_MMIO eth/s_axi      $platform(memmap.ethernet_base) $platform(memmap.ethernet_size)
}

# RISC-V memory port -> PS DDR. The whole low DDR segment is mapped (the usual form for PS DDR);
# rocket_soc.v only ever emits addresses inside ps.dram_window, which lies within it.
assign_bd_address -offset [fpga_hex $platform(ps.ddr_low_base)] \
    -range [fpga_hex $platform(ps.ddr_low_size)] \
    -target_address_space [get_bd_addr_spaces rocket/M_AXI_MEM] \
    [get_bd_addr_segs ps/SAXIGP2/HP0_DDR_LOW] -force

# DMA -> SoC front bus: only the DRAM window, in RISC-V physical addresses.
if {[fpga_has_ethernet]} {
    foreach space {dma/Data_SG dma/Data_MM2S dma/Data_S2MM} {
        fpga_map $space rocket/S_AXI_DMA $platform(memmap.dma_port_base) $platform(memmap.dma_port_size)
    }
}

# PS -> reset GPIO and console tap.
fpga_map ps/Data reset_gpio/S_AXI  $platform(ps.reset_gpio_base)  $platform(ps.reset_gpio_size)
fpga_map ps/Data console_tap/S_AXI $platform(ps.console_tap_base) $platform(ps.console_tap_size)
