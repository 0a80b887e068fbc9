# Batch build of the AXU15EG bitstream. Run by hw/fpga/Makefile (target `bitstream`) as
#
#   vivado -mode batch -nojournal -log OUT/vivado.log -source hw/fpga/tcl/build.tcl -tclargs GEN_DIR OUT_DIR [DESIGN]
#
# DESIGN is one of designs.tcl (default net: with the Ethernet; minimal: PS, SoC, DDR, UART).
# GEN_DIR holds what `make` generated without Vivado: platform.tcl and board.tcl (constants),
# sources.f (RTL file list: the SoC Verilog and rocket_soc.v). OUT_DIR receives the project,
# the bitstream, the .xsa and the reports. Any failed step stops the script with an error, and
# Vivado's exit status is then non-zero.
if {[llength $argv] ni {2 3}} {
    error "usage: vivado -mode batch -source build.tcl -tclargs GEN_DIR OUT_DIR \[DESIGN\]"
}
lassign $argv fpga_gen_dir fpga_out_dir fpga_design
set fpga_tcl_dir [file dirname [file normalize [info script]]]
set fpga_dir [file dirname $fpga_tcl_dir]

source [file join $fpga_tcl_dir designs.tcl]
if {$fpga_design eq ""} { set fpga_design $fpga_default_design }
# Fails on an unknown name before Vivado does any work.
fpga_design_part $fpga_design bd
puts "fpga: design $fpga_design"

source [file join $fpga_tcl_dir version.tcl]
fpga_check_vivado_version

source [file join $fpga_gen_dir platform.tcl]
source [file join $fpga_gen_dir board.tcl]
source [file join $fpga_tcl_dir steps.tcl]

file mkdir $fpga_out_dir
set fpga_jobs [expr {[info exists ::env(FPGA_JOBS)] ? $::env(FPGA_JOBS) : 4}]

# ---- project and sources --------------------------------------------------------------------
create_project -force axu15eg [file join $fpga_out_dir project] -part $platform(pl.part)
set_property target_language Verilog [current_project]
add_files -norecurse [fpga_read_filelist [file join $fpga_gen_dir sources.f]]
update_compile_order -fileset sources_1

source [file join $fpga_tcl_dir bd design.tcl]
set fpga_bd_file [get_files $fpga_bd_name.bd]
generate_target all $fpga_bd_file
add_files -norecurse [make_wrapper -files $fpga_bd_file -top]
set_property top ${fpga_bd_name}_wrapper [current_fileset]
update_compile_order -fileset sources_1

set fpga_xdc_files {}
foreach fpga_xdc [fpga_design_part $fpga_design xdc] {
    lappend fpga_xdc_files [file join $fpga_dir constraints $fpga_xdc]
}
add_files -fileset constrs_1 -norecurse $fpga_xdc_files

# ---- synthesis, implementation, timing, bitstream -------------------------------------------
fpga_run synth_1 $fpga_jobs
fpga_run impl_1 $fpga_jobs route_design
open_run impl_1
fpga_write_reports [file join $fpga_out_dir reports]
fpga_check_timing
write_bitstream -force [file join $fpga_out_dir axu15eg.bit]
write_hw_platform -fixed -include_bit -force [file join $fpga_out_dir axu15eg.xsa]

# The manifest step (Makefile) records which Vivado built this.
set fpga_fh [open [file join $fpga_out_dir vivado-version.txt] w]
puts $fpga_fh [version -short]
close $fpga_fh
puts "fpga: done: [file join $fpga_out_dir axu15eg.bit]"
