# Run boot/fsbl.tcl under plain tclsh with stub hsi commands, as xsct would run it:
#   tclsh xsct_stub.tcl FSBL_TCL XSA OUT_DIR
# The stubs check each call's arguments against what Xilinx's templates accept (processor and
# template pairs, standalone OS) and write placeholder executable.elf files; afterwards the
# FSBL and PMU firmware must both exist. Any mismatch is a Tcl error (exit status 1).
lassign $argv script xsa out_dir
namespace eval hsi {
    variable open ""
    variable built {}
}
proc hsi::open_hw_design {path} {
    if {![file exists $path]} { error "xsct-stub: open_hw_design: no file $path" }
    set hsi::open $path
    return design_1
}
proc hsi::close_hw_design {hw} {
    if {$hsi::open eq ""} { error "xsct-stub: close_hw_design without an open design" }
    set hsi::open ""
}
proc hsi::generate_app {args} {
    set opts [dict create]
    for {set i 0} {$i < [llength $args]} {incr i} {
        set a [lindex $args $i]
        if {$a eq "-compile"} { dict set opts compile 1; continue }
        dict set opts $a [lindex $args [incr i]]
    }
    foreach key {-hw -os -proc -app -sw -dir} {
        if {![dict exists $opts $key]} { error "xsct-stub: generate_app without $key" }
    }
    set pairs {zynqmp_fsbl psu_cortexa53_0 zynqmp_pmufw psu_pmu_0}
    set app [dict get $opts -app]
    if {![dict exists $pairs $app] || [dict get $pairs $app] ne [dict get $opts -proc]} {
        error "xsct-stub: template $app does not run on [dict get $opts -proc]"
    }
    if {[dict get $opts -os] ne "standalone"} { error "xsct-stub: $app needs -os standalone" }
    if {![dict exists $opts compile]} { error "xsct-stub: $app generated but not compiled" }
    if {$hsi::open eq ""} { error "xsct-stub: generate_app before open_hw_design" }
    file mkdir [dict get $opts -dir]
    set fh [open [file join [dict get $opts -dir] executable.elf] w]
    puts $fh "xsct-stub placeholder for $app"
    close $fh
    lappend hsi::built $app
}

set argv [list $xsa $out_dir]
set argc 2
source $script
foreach {app sw} {zynqmp_fsbl fsbl zynqmp_pmufw pmufw} {
    if {$app ni $hsi::built} { error "xsct-stub: $app was never built" }
    if {![file exists [file join $out_dir $sw executable.elf]]} { error "xsct-stub: no $sw/executable.elf" }
}
if {$hsi::open ne ""} { error "xsct-stub: the hardware design was left open" }
puts "xsct-stub: $script built [join $hsi::built {, }] in $out_dir"
