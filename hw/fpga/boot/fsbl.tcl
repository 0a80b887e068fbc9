# Build the FSBL and the PMU firmware for the exported hardware, with Xilinx's own templates.
#
#   xsct fsbl.tcl XSA OUT_DIR
#
# Writes OUT_DIR/fsbl/executable.elf (A53-0) and OUT_DIR/pmufw/executable.elf (PMU), each with
# its standalone BSP, generated from the .xsa (PS configuration: clocks, DDR, MIO) and compiled.
if {[llength $argv] != 2} {
    error "usage: xsct fsbl.tcl XSA OUT_DIR"
}
lassign $argv xsa out_dir
if {![file exists $xsa]} {
    error "no such .xsa: $xsa (run 'make bitstream' first)"
}
file mkdir $out_dir

set hw [hsi::open_hw_design $xsa]
# processor -> template; both are standalone applications in the Vitis installation.
foreach {app proc sw} {
    zynqmp_fsbl  psu_cortexa53_0 fsbl
    zynqmp_pmufw psu_pmu_0       pmufw
} {
    set dir [file join $out_dir $sw]
    file delete -force $dir
    hsi::generate_app -hw $hw -os standalone -proc $proc -app $app -compile -sw $sw -dir $dir
    if {![file exists [file join $dir executable.elf]]} {
        error "$app: no executable.elf in $dir (see the compiler output above)"
    }
    puts "fsbl.tcl: $app -> [file join $dir executable.elf]"
}
hsi::close_hw_design $hw
