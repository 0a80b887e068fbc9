# Syntax check of Tcl and XDC files without running them:  tclsh tcl_syntax.tcl FILE...
# Splits each file into commands with `info complete` (as the Tcl parser does), reports a
# command left open at the end of the file with its first line, and a command that starts with
# a stray close brace or bracket (an unbalanced `}` the parser would otherwise accept).
set failed 0
foreach path $argv {
    set fh [open $path r]
    set lines [split [read $fh] \n]
    close $fh
    set cmd ""
    set start 0
    set n 0
    foreach line $lines {
        incr n
        if {$cmd eq ""} { set start $n }
        append cmd $line \n
        if {![info complete $cmd]} continue
        set trimmed [string trimleft $cmd]
        if {[string index $trimmed 0] in {\} \]}} {
            puts stderr "$path:$start: unbalanced '[string index $trimmed 0]'"
            set failed 1
        }
        set cmd ""
    }
    if {[string trim $cmd] ne ""} {
        puts stderr "$path:$start: command not closed at end of file (missing brace, bracket or quote)"
        set failed 1
    }
}
if {$failed} { exit 1 }
puts "tcl-syntax: [llength $argv] file(s) ok"
