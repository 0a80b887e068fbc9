# The SoC's external interrupt lines in PLIC source order (platform.toml [irq]): line n-1 of
# rocket/interrupts is PLIC source n. Sources are looked up by name, so the order lives only in
# platform.toml. Unused lines (all but the UART's in a design without the Ethernet) are tied low.
fpga_ip_cell concat irq_concat [list NUM_PORTS [expr {$platform(irq.count)}]]
fpga_net irq_concat/dout rocket/interrupts

set fpga_irq_sources {
    uart    uart/ip2intc_irpt
}
if {[fpga_has_ethernet]} {
    lappend fpga_irq_sources \
        eth_mac eth/mac_irq \
        eth     eth/interrupt \
        dma_tx  dma/mm2s_introut \
        dma_rx  dma/s2mm_introut
}
set fpga_irq_used {}
foreach {name pin} $fpga_irq_sources {
    set line [expr {$platform(irq.$name) - 1}]
    fpga_net $pin irq_concat/In$line
    lappend fpga_irq_used $line
}
for {set line 0} {$line < $platform(irq.count)} {incr line} {
    if {$line ni $fpga_irq_used} {
        fpga_net const_0/dout irq_concat/In$line
    }
}
