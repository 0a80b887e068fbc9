# Build the block design `axu15eg` in the open project, one concern per file (order matters:
# later files connect to cells earlier ones created).
# Expects: platform() (platform.toml + board.toml constants), fpga_ip() (version.tcl),
# fpga_design and its file list (designs.tcl).
set fpga_bd_dir [file dirname [file normalize [info script]]]
set fpga_bd_name axu15eg

create_bd_design $fpga_bd_name
current_bd_design $fpga_bd_name

foreach fpga_bd_part [fpga_design_part $fpga_design bd] {
    source [file join $fpga_bd_dir $fpga_bd_part.tcl]
}

validate_bd_design
save_bd_design
