# Program the AXU15EG over JTAG and start the RISC-V cores, without an SD card or PS Linux.
#
#   xsdb jtag.tcl GEN_DIR BITSTREAM PSU_INIT_TCL IMAGE
#
# GEN_DIR holds board.tcl (addresses from hw/fpga/board.toml); PSU_INIT_TCL is the psu_init.tcl
# inside the exported .xsa (PS clocks, DDR, PS-PL isolation). Order matters: configure the PL,
# initialise the PS (which also releases pl_resetn0), hold the cores, load DRAM, release.
if {[llength $argv] != 4} {
    error "usage: xsdb jtag.tcl GEN_DIR BITSTREAM PSU_INIT_TCL IMAGE"
}
lassign $argv gen_dir bitstream psu_init image
source [file join $gen_dir board.tcl]
set gpio $platform(ps.reset_gpio_base)
set gpio_data [expr {$gpio + $platform(ps.gpio_data)}]
set gpio_tri  [expr {$gpio + $platform(ps.gpio_tri)}]

connect
targets -set -nocase -filter {name =~ "*PSU*"}
rst -system
after 1000
fpga -file $bitstream

targets -set -nocase -filter {name =~ "*APU*"}
source $psu_init
psu_init
after 1000
psu_ps_pl_isolation_removal
after 1000
psu_ps_pl_reset_config
catch {psu_protection}

targets -set -nocase -filter {name =~ "*A53*#0"}
rst -processor
mwr $gpio_tri 0
mwr $gpio_data 0
dow -data $image $platform(ps.dram_window_base)
mwr $gpio_data [expr {1 << $platform(ps.run_bit)}]
puts "jtag: [file tail $image] loaded at PS [format 0x%08x $platform(ps.dram_window_base)]; RISC-V cores released"
disconnect
