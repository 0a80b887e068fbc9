# Procedures build.tcl runs; kept apart so each step reads as one line there.

# Files of a file list: one path per line, blank lines and # comments ignored.
proc fpga_read_filelist {path} {
    set fh [open $path r]
    set files {}
    foreach line [split [read $fh] \n] {
        set line [string trim $line]
        if {$line eq "" || [string index $line 0] eq "#"} continue
        if {![file exists $line]} { error "file list $path names a missing file: $line" }
        lappend files $line
    }
    close $fh
    if {![llength $files]} { error "file list $path is empty" }
    return $files
}

# Launch a run (optionally up to a step), wait, and fail unless it completed.
proc fpga_run {run jobs {to_step {}}} {
    reset_run $run
    if {$to_step eq ""} {
        launch_runs $run -jobs $jobs
    } else {
        launch_runs $run -jobs $jobs -to_step $to_step
    }
    wait_on_run $run
    set progress [get_property PROGRESS [get_runs $run]]
    set status [get_property STATUS [get_runs $run]]
    if {$progress ne "100%" || [string match -nocase *error* $status]} {
        error "run $run failed: $status (see its log under [get_property DIRECTORY [get_runs $run]])"
    }
    puts "fpga: $run: $status"
}

# Reports kept with the bitstream (bitstreams/<config>/reports/).
proc fpga_write_reports {dir} {
    file mkdir $dir
    report_timing_summary -max_paths 20 -file [file join $dir timing_summary.rpt]
    report_utilization -hierarchical -hierarchical_depth 3 -file [file join $dir utilization.rpt]
    report_clock_utilization -file [file join $dir clock_utilization.rpt]
    report_drc -file [file join $dir drc.rpt]
    report_cdc -file [file join $dir cdc.rpt]
    report_power -file [file join $dir power.rpt]
}

# Fail on any setup, hold or pulse-width violation of the routed design: a bitstream that misses
# timing may work on one board at one temperature and not on the next. Vivado's own summary line
# is the verdict; the worst setup and hold paths only make the message useful.
proc fpga_check_timing {} {
    set summary [report_timing_summary -no_detailed_paths -return_string]
    if {[string match "*All user specified timing constraints are met.*" $summary]} {
        puts "fpga: timing met"
        return
    }
    set worst {}
    foreach {what kind} {setup max hold min} {
        set path [get_timing_paths -delay_type $kind -max_paths 1 -nworst 1]
        if {[llength $path]} {
            lappend worst "worst $what slack [get_property SLACK $path] ns at [get_property ENDPOINT_PIN $path]"
        }
    }
    error "timing not met ([join $worst {; }]); see reports/timing_summary.rpt"
}
