# Small helpers shared by the block-design files.

# Frequency in MHz as the Xilinx wizards want it (e.g. 333.333), from a value in Hz.
proc fpga_mhz {hz} {
    return [format %.3f [expr {$hz / 1.0e6}]]
}

# Hex with 0x and 8 or more digits, the form assign_bd_address prints back.
proc fpga_hex {value} {
    return [format 0x%08X $value]
}

# Create an IP cell by its key in fpga_ip (version.tcl) and apply CONFIG.* properties.
proc fpga_ip_cell {key name {config {}}} {
    global fpga_ip
    set cell [create_bd_cell -type ip -vlnv $fpga_ip($key) $name]
    if {[llength $config]} {
        set props {}
        foreach {k v} $config { lappend props CONFIG.$k $v }
        set_property -dict $props $cell
    }
    return $cell
}

# Connect one net: a list of pins "cell/pin", or "port:NAME" for a top-level port.
proc fpga_net {args} {
    set objs {}
    foreach a $args {
        if {[string match port:* $a]} {
            lappend objs [get_bd_ports [string range $a 5 end]]
        } else {
            lappend objs [get_bd_pins $a]
        }
    }
    connect_bd_net {*}$objs
}

# Map the slave interface cell/intf into a master's address space at [offset, offset+range).
# Segments are found through the interface, not by name, because IP versions rename them.
proc fpga_map {space intf offset range} {
    set segs [get_bd_addr_segs -of_objects [get_bd_intf_pins $intf]]
    if {[llength $segs] != 1} {
        error "fpga_map: $intf has [llength $segs] address segments, expected 1"
    }
    assign_bd_address -offset [fpga_hex $offset] -range [fpga_hex $range] \
        -target_address_space [get_bd_addr_spaces $space] $segs -force
}
