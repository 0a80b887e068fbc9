# AXU15EG PL pins every design uses (docs/board-axu15eg.md "PL pins"): the console UART and the
# LED, on a 3.3 V bank. Port names are those of the Vivado-generated block-design wrapper
# (axu15eg_wrapper). The Ethernet's pins are in eth_pins.xdc.

# RISC-V console (AXI UART16550).
set_property PACKAGE_PIN D10 [get_ports uart_tx]
set_property PACKAGE_PIN D11 [get_ports uart_rx]
set_property IOSTANDARD LVCMOS33 [get_ports uart_tx]
set_property IOSTANDARD LVCMOS33 [get_ports uart_rx]

# LED: on while the RISC-V cores are out of reset.
set_property PACKAGE_PIN AM13 [get_ports {led[0]}]
set_property IOSTANDARD LVCMOS33 [get_ports {led[0]}]
