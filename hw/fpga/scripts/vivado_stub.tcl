# Run the flow's Vivado Tcl under plain tclsh with stub Vivado commands that check every
# reference and record the design, so the flow can be checked where Vivado cannot be installed.
#
#   tclsh vivado_stub.tcl CATALOG MODULES LOG SCRIPT [ARGS...]
#
# CATALOG  ipcatalog.tcl: pins, interfaces, address spaces of each IP
# MODULES  Tcl setting stub_module(NAME) for module references (written by check_bd.py from the
#          generated rocket_soc.v)
# LOG      JSON lines: cells, ports, nets, interface nets, address assignments, XDC properties,
#          flow steps; check_bd.py compares it with platform.toml, board.toml and the wrapper
# SCRIPT   the script Vivado would run (build.tcl), with its -tclargs
# Environment: STUB_VIVADO_VERSION (default 2022.2) is what `version -short` answers;
# STUB_TIMING=fail makes the timing summary report a violation.
# Any inconsistency is a Tcl error: tclsh exits non-zero with the message and the call stack.

if {[llength $argv] < 4} {
    puts stderr "usage: tclsh vivado_stub.tcl CATALOG MODULES LOG SCRIPT \[ARGS...\]"
    exit 2
}
lassign $argv stub_catalog stub_modules stub_logfile stub_script
set stub_args [lrange $argv 4 end]
source $stub_catalog
source $stub_modules
set stub_log [open $stub_logfile w]

# ---- recording -----------------------------------------------------------------------------
proc json_str {s} { return "\"[string map {\\ \\\\ \" \\\" \n \\n \t \\t} $s]\"" }
proc record {kind args} {
    # args: key value pairs; the values of list-valued keys become JSON arrays
    set fields [list "\"kind\": [json_str $kind]"]
    foreach {k v} $args {
        if {$k in {members args targets config}} {
            set items {}
            foreach x $v { lappend items [json_str $x] }
            lappend fields "[json_str $k]: \[[join $items {, }]\]"
        } else {
            lappend fields "[json_str $k]: [json_str $v]"
        }
    }
    puts $::stub_log "{[join $fields {, }]}"
}
proc fail {msg} { error "vivado-stub: $msg" }

# ---- state ---------------------------------------------------------------------------------
# cells(name) = dict {kind ip|module, type, vlnv, config {}}
array set cells {}
array set ports {}        ;# name -> dict {dir, width}
array set intf_ports {}   ;# name -> dict {mode, vlnv}
array set net_of {}       ;# endpoint -> net id
array set net_members {}  ;# net id -> list of endpoints
array set intf_conn {}    ;# intf endpoint -> peer
set next_net 0
set bd_open 0
set project_open 0
array set xdc {}          ;# "port|prop" -> value

proc strip_version {vlnv} { return [lindex [split $vlnv :] 2] }
proc cell_info {cell} {
    if {![info exists ::cells($cell)]} { fail "no cell '$cell' in the block design" }
    return $::cells($cell)
}
proc cell_cfg {cell key {default {}}} {
    set c [dict get [cell_info $cell] config]
    if {[dict exists $c $key]} { return [dict get $c $key] }
    return $default
}
# Catalog entry of a cell: the IP catalog or the module reference description.
proc cell_catalog {cell} {
    set info [cell_info $cell]
    if {[dict get $info kind] eq "module"} { return $::stub_module([dict get $info type]) }
    return $::ipcatalog([dict get $info type])
}

# Pins and interfaces whose existence depends on CONFIG values.
proc stub_dynamic {cell what} {
    set info [cell_info $cell]
    set out {}
    switch [dict get $info type] {
        smartconnect {
            if {$what eq "intfs"} {
                for {set i 0} {$i < [cell_cfg $cell NUM_SI 1]} {incr i} { lappend out [format S%02d_AXI $i] slave! }
                for {set i 0} {$i < [cell_cfg $cell NUM_MI 1]} {incr i} { lappend out [format M%02d_AXI $i] master! }
            }
        }
        xlconcat {
            if {$what eq "pins"} {
                for {set i 0} {$i < [cell_cfg $cell NUM_PORTS 2]} {incr i} { lappend out In$i I! }
            }
        }
        clk_wiz {
            set diff [expr {[cell_cfg $cell PRIM_SOURCE Single_ended_clock_capable_pin] eq "Differential_clock_capable_pin"}]
            if {$what eq "pins"} {
                if {!$diff} { lappend out clk_in1 I! }
                if {[cell_cfg $cell USE_RESET true]} {
                    lappend out [expr {[cell_cfg $cell RESET_TYPE ACTIVE_HIGH] eq "ACTIVE_LOW" ? "resetn" : "reset"}] I!
                }
                if {[cell_cfg $cell CLKOUT2_USED false]} { lappend out clk_out2 O }
            } elseif {$diff} {
                lappend out CLK_IN1_D slave!
            }
        }
        axi_dma {
            if {$what eq "intfs" && [cell_cfg $cell c_sg_include_stscntrl_strm 1]} {
                lappend out M_AXIS_CNTRL master! S_AXIS_STS slave!
            }
            if {$what eq "pins" && [cell_cfg $cell c_sg_include_stscntrl_strm 1]} {
                lappend out mm2s_cntrl_reset_out_n O s2mm_sts_reset_out_n O
            }
        }
    }
    return $out
}
proc cell_list {cell what} {
    return [concat [dict get [cell_catalog $cell] $what] [stub_dynamic $cell $what]]
}
proc lookup {cell what name} {
    foreach {n d} [cell_list $cell $what] {
        if {$n eq $name} { return [string trimright $d !] }
    }
    set known {}
    foreach {n d} [cell_list $cell $what] { lappend known $n }
    fail "cell '$cell' ([dict get [cell_info $cell] type]) has no [string trimright $what s] '$name'; it has: [lsort $known]"
}
proc split_path {path} {
    set i [string first / $path]
    if {$i < 0} { fail "'$path' is not cell/name" }
    return [list [string range $path 0 [expr {$i - 1}]] [string range $path [expr {$i + 1}] end]]
}

# ---- project-level commands ----------------------------------------------------------------
proc version {args} {
    if {$args ne "-short"} { fail "version $args: only -short is expected" }
    return [expr {[info exists ::env(STUB_VIVADO_VERSION)] ? $::env(STUB_VIVADO_VERSION) : "2022.2"}]
}
proc create_project {args} {
    set ::project_open 1
    set part [lindex $args [expr {[lsearch $args -part] + 1}]]
    if {![regexp {^xczu\w+-\w+-\d-\w$} $part]} { fail "create_project: '$part' is not a Zynq UltraScale+ part name" }
    record project name [lindex $args end-2] part $part
}
proc current_project {args} { return project }
proc current_fileset {args} { return sources_1 }
proc update_compile_order {args} {}
proc add_files {args} {
    if {!$::project_open} { fail "add_files before create_project" }
    set fileset sources_1
    if {[set i [lsearch $args -fileset]] >= 0} { set fileset [lindex $args [expr {$i + 1}]] }
    foreach f [lindex $args end] {
        if {[string match bd:* $f]} continue
        if {![file exists $f]} { fail "add_files: no such file '$f'" }
        record file fileset $fileset path $f
        if {$fileset eq "constrs_1"} { uplevel #0 [list source $f] }
    }
    if {$fileset eq "constrs_1"} { stub_check_xdc }
}
proc set_property {args} {
    if {[lindex $args 0] eq "-dict"} {
        set pairs [lindex $args 1]
        set objs [lindex $args 2]
    } else {
        set pairs [lrange $args 0 1]
        set objs [lindex $args 2]
    }
    if {[llength $pairs] % 2} { fail "set_property: odd key/value list" }
    foreach obj $objs {
        foreach {k v} $pairs { stub_set $obj $k $v }
    }
}
proc stub_set {obj key value} {
    lassign [split $obj :] kind name
    switch $kind {
        cell {
            if {![string match CONFIG.* $key]} { fail "cell property $key: only CONFIG.* is expected" }
            set k [string range $key 7 end]
            set ok 0
            foreach pattern [dict get [cell_catalog $name] config] {
                if {[string match $pattern $k]} { set ok 1 }
            }
            if {!$ok} { fail "cell '$name' ([dict get $::cells($name) type]): unknown CONFIG key '$k'" }
            # Integer IP parameters are given in decimal; only bit-pattern values may be hex
            # (the platform constants arrive as 0x... and must be converted with expr).
            if {[string match 0x* $value] && $k ni {C_DOUT_DEFAULT C_TRI_DEFAULT}} {
                fail "cell '$name': CONFIG.$k = $value must be decimal"
            }
            dict set ::cells($name) config $k $value
        }
        intfport {
            if {[string match 0x* $value]} { fail "interface port '$name': $key = $value must be decimal" }
            dict set ::intf_ports($name) props $key $value
            record intfport_prop name $name key $key value $value
        }
        xport {
            set ::xdc($name|$key) $value
            record xdc port $name key $key value $value
        }
        default {
            # project/run/fileset properties: target_language, top, ...
            record property object $obj key $key value $value
        }
    }
}
proc get_property {key obj} {
    switch -glob $key {
        PROGRESS  { return 100% }
        STATUS    { return "complete" }
        DIRECTORY { return /stub/run }
        SLACK     { return [expr {[info exists ::env(STUB_TIMING)] && $::env(STUB_TIMING) eq "fail" ? -0.123 : 0.456}] }
        ENDPOINT_PIN { return stub/endpoint }
        default   { fail "get_property $key: not stubbed" }
    }
}
proc get_files {args} { return bd:[lindex $args end] }
proc get_runs {name} { return run:$name }
proc reset_run {run} {}
proc launch_runs {args} { record flow step launch_runs args $args }
proc wait_on_run {run} {}
proc open_run {run} { record flow step open_run args $run }
proc generate_target {args} {
    if {!$::bd_open} { fail "generate_target before the block design exists" }
}
proc make_wrapper {args} { return bd:wrapper.v }
# Output files get a placeholder text, so the Makefile's publish step can be exercised; nobody
# can mistake them for Vivado output.
proc stub_output {args} {
    if {[set i [lsearch $args -file]] >= 0} {
        set path [lindex $args [expr {$i + 1}]]
    } else {
        set path [lindex $args end]
    }
    if {[file isdirectory [file dirname $path]]} {
        set fh [open $path w]
        puts $fh "vivado-stub placeholder, not Vivado output"
        close $fh
    }
}
foreach cmd {report_utilization report_clock_utilization report_drc report_cdc report_power} {
    proc $cmd {args} "record flow step $cmd args \$args; stub_output {*}\$args"
}
proc report_timing_summary {args} {
    if {"-return_string" in $args} {
        if {[info exists ::env(STUB_TIMING)] && $::env(STUB_TIMING) eq "fail"} { return "Timing constraints are not met." }
        return "All user specified timing constraints are met."
    }
    record flow step report_timing_summary args $args
    stub_output {*}$args
}
proc get_timing_paths {args} { return path }
proc write_bitstream {args} { record flow step write_bitstream args $args; stub_output {*}$args }
proc write_hw_platform {args} { record flow step write_hw_platform args $args; stub_output {*}$args }

# ---- block design --------------------------------------------------------------------------
proc create_bd_design {name} { set ::bd_open 1; record bd name $name }
proc current_bd_design {args} {}
proc validate_bd_design {args} { stub_validate }
proc save_bd_design {args} {}

proc create_bd_cell {args} {
    if {!$::bd_open} { fail "create_bd_cell before create_bd_design" }
    set name [lindex $args end]
    if {[info exists ::cells($name)]} { fail "cell '$name' created twice" }
    set type [lindex $args [expr {[lsearch $args -type] + 1}]]
    if {$type eq "ip"} {
        set vlnv [lindex $args [expr {[lsearch $args -vlnv] + 1}]]
        if {$vlnv ni [array get ::fpga_ip]} { fail "create_bd_cell: '$vlnv' is not pinned in version.tcl" }
        set base [strip_version $vlnv]
        if {![info exists ::ipcatalog($base)]} { fail "create_bd_cell: no catalog entry for '$base'" }
        set ::cells($name) [dict create kind ip type $base vlnv $vlnv config {}]
    } elseif {$type eq "module"} {
        set ref [lindex $args [expr {[lsearch $args -reference] + 1}]]
        if {![info exists ::stub_module($ref)]} { fail "create_bd_cell: module '$ref' is not among the RTL sources" }
        set ::cells($name) [dict create kind module type $ref vlnv module:$ref config {}]
    } else {
        fail "create_bd_cell -type $type: not expected"
    }
    return cell:$name
}
proc get_bd_cells {name} { cell_info $name; return cell:$name }
proc get_bd_pins {path} {
    lassign [split_path $path] cell pin
    lookup $cell pins $pin
    return pin:$path
}
proc get_bd_intf_pins {path} {
    lassign [split_path $path] cell intf
    lookup $cell intfs $intf
    return intf:$path
}
proc create_bd_port {args} {
    set name [lindex $args end]
    set dir [lindex $args [expr {[lsearch $args -dir] + 1}]]
    set width 1
    set vector [expr {[lsearch $args -from] >= 0}]
    if {$vector} {
        set width [expr {[lindex $args [expr {[lsearch $args -from] + 1}]] - [lindex $args [expr {[lsearch $args -to] + 1}]] + 1}]
    }
    set ::ports($name) [dict create dir $dir width $width vector $vector]
    record port name $name dir $dir width $width vector $vector
    return port:$name
}
proc create_bd_intf_port {args} {
    set name [lindex $args end]
    set mode [string tolower [lindex $args [expr {[lsearch $args -mode] + 1}]]]
    set vlnv [lindex $args [expr {[lsearch $args -vlnv] + 1}]]
    if {![info exists ::ipcatalog(intf:$vlnv)]} { fail "create_bd_intf_port: unknown interface type '$vlnv'" }
    set ::intf_ports($name) [dict create mode $mode vlnv $vlnv props {}]
    record intfport name $name mode $mode vlnv $vlnv
    return intfport:$name
}
proc get_bd_ports {name} {
    if {![info exists ::ports($name)]} { fail "no block-design port '$name'" }
    return port:$name
}
proc get_bd_intf_ports {name} {
    if {![info exists ::intf_ports($name)]} { fail "no block-design interface port '$name'" }
    return intfport:$name
}

# Nets: union of endpoints; a net may have one driver only.
proc is_driver {ep} {
    lassign [split $ep :] kind path
    if {$kind eq "port"} { return [expr {[dict get $::ports($path) dir] eq "I"}] }
    lassign [split_path $path] cell pin
    return [expr {[lookup $cell pins $pin] eq "O"}]
}
proc connect_bd_net {args} {
    if {[lindex $args 0] eq "-net"} { set args [lrange $args 2 end] }
    if {[llength $args] < 2} { fail "connect_bd_net needs two or more objects" }
    set ids {}
    foreach ep $args {
        if {![string match pin:* $ep] && ![string match port:* $ep]} { fail "connect_bd_net: '$ep' is not a pin or port" }
        if {[info exists ::net_of($ep)]} { lappend ids $::net_of($ep) }
    }
    set id [expr {[llength $ids] ? [lindex $ids 0] : [incr ::next_net]}]
    if {![info exists ::net_members($id)]} { set ::net_members($id) {} }
    foreach other [lsort -unique [lrange $ids 1 end]] {
        if {$other == $id} continue
        foreach ep $::net_members($other) { set ::net_of($ep) $id; lappend ::net_members($id) $ep }
        unset ::net_members($other)
    }
    foreach ep $args {
        if {![info exists ::net_of($ep)]} { set ::net_of($ep) $id; lappend ::net_members($id) $ep }
    }
    set drivers {}
    foreach ep $::net_members($id) { if {[is_driver $ep]} { lappend drivers $ep } }
    if {[llength $drivers] > 1} { fail "net with several drivers: $drivers" }
}
proc intf_mode {ep} {
    lassign [split $ep :] kind path
    if {$kind eq "intfport"} { return [dict get $::intf_ports($path) mode] }
    lassign [split_path $path] cell intf
    return [lookup $cell intfs $intf]
}
proc connect_bd_intf_net {args} {
    if {[lindex $args 0] eq "-intf_net"} { set args [lrange $args 2 end] }
    if {[llength $args] != 2} { fail "connect_bd_intf_net needs exactly two interfaces" }
    lassign $args a b
    foreach ep $args {
        if {![string match intf:* $ep] && ![string match intfport:* $ep]} { fail "connect_bd_intf_net: '$ep' is not an interface" }
        if {[info exists ::intf_conn($ep)]} { fail "interface $ep is connected twice" }
    }
    set ma [intf_mode $a]; set mb [intf_mode $b]
    # Cell to cell: master to slave. Cell to board port: the port takes the cell's mode.
    set to_port [expr {[string match intfport:* $a] || [string match intfport:* $b]}]
    if {(!$to_port && $ma eq $mb) || ($to_port && $ma ne $mb)} {
        fail "connect_bd_intf_net: $a ($ma) and $b ($mb) do not fit"
    }
    set ::intf_conn($a) $b
    set ::intf_conn($b) $a
    record intfnet a $a b $b
}

# Address spaces and segments.
proc get_bd_addr_spaces {path} {
    lassign [split_path $path] cell space
    if {$space ni [dict get [cell_catalog $cell] spaces]} {
        fail "cell '$cell' has no address space '$space' (has: [dict get [cell_catalog $cell] spaces])"
    }
    return space:$path
}
proc get_bd_addr_segs {args} {
    if {[lindex $args 0] eq "-of_objects"} {
        set ep [lindex $args 1]
        if {![string match intf:* $ep]} { fail "get_bd_addr_segs -of_objects: '$ep' is not an interface pin" }
        lassign [split_path [string range $ep 5 end]] cell intf
        set segs [dict get [cell_catalog $cell] segs]
        if {![dict exists $segs $intf]} { fail "interface $cell/$intf has no address segment" }
        return seg:$cell/$intf/[dict get $segs $intf]
    }
    lassign [split_path [lindex $args 0]] cell seg
    set cat [cell_catalog $cell]
    if {![dict exists $cat named_segs] || $seg ni [dict get $cat named_segs]} { fail "cell '$cell' has no segment '$seg'" }
    return seg:[lindex $args 0]
}
proc is_pow2 {x} { return [expr {$x > 0 && ($x & ($x - 1)) == 0}] }
set assigned {}
proc assign_bd_address {args} {
    set offset [lindex $args [expr {[lsearch $args -offset] + 1}]]
    set range  [lindex $args [expr {[lsearch $args -range] + 1}]]
    set space  [lindex $args [expr {[lsearch $args -target_address_space] + 1}]]
    set seg [lindex [lsearch -inline -all -glob $args seg:*] 0]
    if {![string match space:* $space]} { fail "assign_bd_address: -target_address_space is not an address space" }
    if {$seg eq ""} { fail "assign_bd_address: no segment" }
    if {![is_pow2 $range]} { fail "assign_bd_address $seg: range $range is not a power of two" }
    if {$offset % $range} { fail "assign_bd_address $seg: offset $offset is not aligned to range $range" }
    foreach {s o r} $::assigned {
        if {$s eq $space && $offset < $o + $r && $o < $offset + $range} {
            fail "assign_bd_address $seg at $offset+$range overlaps another segment of $space"
        }
    }
    lappend ::assigned $space $offset $range
    record addr space [string range $space 6 end] seg [string range $seg 4 end] offset [expr {$offset}] range [expr {$range}]
}

# Validation as Vivado's validate_bd_design would complain: required pins and interfaces of
# every cell connected, every output port driven.
proc stub_validate {} {
    foreach cell [lsort [array names ::cells]] {
        foreach {n d} [cell_list $cell pins] {
            if {[string match *! $d] && ![info exists ::net_of(pin:$cell/$n)]} { fail "validate: $cell/$n is not connected" }
        }
        foreach {n d} [cell_list $cell intfs] {
            if {[string match *! $d] && ![info exists ::intf_conn(intf:$cell/$n)]} { fail "validate: interface $cell/$n is not connected" }
        }
        record cell name $cell type [dict get $::cells($cell) type] vlnv [dict get $::cells($cell) vlnv] config [dict get $::cells($cell) config]
    }
    foreach p [array names ::ports] {
        if {![info exists ::net_of(port:$p)]} { fail "validate: port $p is not connected" }
    }
    foreach p [array names ::intf_ports] {
        if {![info exists ::intf_conn(intfport:$p)]} { fail "validate: interface port $p is not connected" }
    }
    foreach id [lsort -integer [array names ::net_members]] {
        set drivers 0
        foreach ep $::net_members($id) { incr drivers [is_driver $ep] }
        if {$drivers != 1} { fail "validate: net {$::net_members($id)} has no driver" }
        record net members $::net_members($id)
    }
    record validated ok 1
}

# ---- XDC -----------------------------------------------------------------------------------
# Top-level port names of the generated wrapper, from the block-design ports.
proc wrapper_ports {} {
    set out {}
    foreach p [array names ::ports] {
        set w [dict get $::ports($p) width]
        if {[dict get $::ports($p) vector]} {
            for {set i 0} {$i < $w} {incr i} { lappend out "$p\[$i\]" }
        } else {
            lappend out $p
        }
    }
    foreach p [array names ::intf_ports] {
        foreach s $::ipcatalog(intf:[dict get $::intf_ports($p) vlnv]) { lappend out ${p}_$s }
    }
    return $out
}
proc get_ports {patterns} {
    set all [wrapper_ports]
    set found {}
    foreach pat $patterns {
        # XDC patterns: * is a wildcard, brackets are bus indices (literal).
        set glob [string map {\[ \\\[ \] \\\]} $pat]
        set hits [lsearch -all -inline -glob $all $glob]
        if {![llength $hits]} { fail "XDC: get_ports '$pat' matches no port of the block-design wrapper" }
        foreach h $hits { lappend found xport:$h }
    }
    return $found
}
proc get_clocks {args} {
    if {[lindex $args 0] in {-of_objects -include_generated_clocks}} { return clock:derived }
    foreach c $args { if {$c ni $::xdc_clocks} { fail "XDC: clock '$c' is not defined before use" } }
    return clock:[join $args]
}
proc get_pins {args} { return pin:xdc }
proc create_clock {args} {
    set name [lindex $args [expr {[lsearch $args -name] + 1}]]
    set period [lindex $args [expr {[lsearch $args -period] + 1}]]
    lappend ::xdc_clocks $name
    record xdc_clock name $name period $period targets [lindex $args end]
}
proc set_input_delay {args} { record xdc_delay args $args }
proc set_output_delay {args} { record xdc_delay args $args }
set xdc_clocks {}
# After the constraint files: every wrapper port has a pin and an I/O standard, and no package
# pin is used twice.
proc stub_check_xdc {} {
    set used {}
    foreach p [lsort [wrapper_ports]] {
        foreach prop {PACKAGE_PIN IOSTANDARD} {
            if {![info exists ::xdc($p|$prop)]} { fail "XDC: port $p has no $prop" }
        }
        set pin $::xdc($p|PACKAGE_PIN)
        if {[dict exists $used $pin]} { fail "XDC: pin $pin used by [dict get $used $pin] and $p" }
        dict set used $pin $p
    }
}

# ---- run the flow --------------------------------------------------------------------------
set argv $stub_args
set argc [llength $argv]
set argv0 $stub_script
if {[catch {uplevel #0 [list source $stub_script]} msg opts]} {
    close $stub_log
    puts stderr "vivado-stub: $stub_script failed: $msg"
    puts stderr [dict get $opts -errorinfo]
    exit 1
}
record done ok 1
close $stub_log
puts "vivado-stub: $stub_script ran to completion against the stubs"
