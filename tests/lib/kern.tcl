# Expect helpers for tests that drive the kernel's serial console.
#
#   source [file dirname [info script]]/../lib/kern.tcl
#   boot -smp 4                 ;# boots build/kern.iso, waits for the first prompt
#   set out [cmd "echo hi"]     ;# sends a line, returns what it printed before the prompt
#   expect_in $out "hi"         ;# fails the test unless out contains the string
#   poweroff                    ;# expects QEMU to exit with status 0
#
# Every wait has a deadline (expect's timeout); the test runner adds a host deadline on the
# whole test. A failure prints "FAIL: why" and exits 1; anything the kernel printed is in
# the test's log (log_user 1).

set top [file normalize [file dirname [info script]]/../..]
set timeout 30
log_user 1
set prompt "kern> "
# cmd returns all that a command printed, however long: expect's buffer (2000 bytes unless
# told) keeps only the end of a longer output (/dev/oprofilestat on 8 cores is some 7 KB)
match_max -d 1048576

# The test's temporary host directory ("" for none): made by temp_share (or boot -tmpshare),
# removed by pass and by fail, whichever way the test ends; KEEP=1 keeps it when the test
# fails, to read what the guest wrote.
set share ""

# temp_share NAME: make a fresh /tmp/NAME.XXXXXX, the test's $share, and return its path.
# Call it before boot when the directory must hold files at boot.
proc temp_share {name} {
	global share
	set share [exec mktemp -d /tmp/$name.XXXXXX]
	return $share
}

# drop_share FAILED: remove $share (read-only parts too), unless FAILED and KEEP=1.
proc drop_share {failed} {
	global share env
	if {$share eq ""} { return }
	if {$failed && [info exists env(KEEP)] && $env(KEEP) eq "1"} {
		puts "KEEP=1: the host share is kept in $share"
		return
	}
	catch {exec chmod -R u+w $share}
	catch {file delete -force $share}
	set share ""
}

proc fail {why} {
	puts "\nFAIL: $why"
	catch {close}
	catch {wait}
	drop_share 1
	exit 1
}

# check COND WHY: fails with WHY unless the expression COND (in the caller's scope) holds
proc check {cond why} { if {![uplevel 1 [list expr $cond]]} { fail $why } }

# boot ?-smp N? ?-mem M? ?-share DIR | -tmpshare NAME? ?-launcher CMD? ?-plaintcg?
#      ?extra qemu args...?
# -tmpshare NAME shares $share, made by temp_share NAME unless the test made it already.
# -launcher CMD (a list) runs QEMU instead of scripts/qemu: another copy, or under a wrapper.
# The clock is scripts/qemu's default, guest time = instructions (-icount), whatever the
# caller's environment says, unless the extra args hold an -icount of the test's own, or
# -plaintcg asks for plain TCG (ICOUNT=0: a test that does says why in its header).
proc boot {args} {
	global top env spawn_id prompt timeout share
	set ncpu 4
	set mem 512M
	set dir ""
	set launcher [list $top/scripts/qemu]
	set extra {}
	catch {unset env(ICOUNT)}
	while {[llength $args]} {
		set a [lindex $args 0]
		set args [lrange $args 1 end]
		switch -- $a {
			-smp { set ncpu [lindex $args 0]; set args [lrange $args 1 end] }
			-mem { set mem [lindex $args 0]; set args [lrange $args 1 end] }
			-share { set dir [lindex $args 0]; set args [lrange $args 1 end] }
			-launcher { set launcher [lindex $args 0]; set args [lrange $args 1 end] }
			-plaintcg { set env(ICOUNT) 0 }
			-tmpshare {
				if {$share eq ""} { temp_share [lindex $args 0] }
				set dir $share
				set args [lrange $args 1 end]
			}
			default { lappend extra $a }
		}
	}
	set env(NCPU) $ncpu
	set env(MEM) $mem
	# tests run under TCG; benchmarks may pass TEST_ACCEL=kvm
	set env(ACCEL) [expr {[info exists env(TEST_ACCEL)] ? $env(TEST_ACCEL) : "tcg"}]
	if {$dir ne ""} { set env(SHARE) $dir } else { catch {unset env(SHARE)} }
	spawn -noecho {*}$launcher {*}$extra
	wait_boot
}

# wait_boot: wait (60 s at most) for the first prompt of the QEMU just spawned
proc wait_boot {} {
	global spawn_id prompt timeout
	set old $timeout
	set timeout 60
	expect {
		-ex $prompt {}
		"FATAL" { fail "kernel fault during boot" }
		"panic" { fail "kernel panic during boot" }
		timeout { fail "no prompt within 60 s of boot" }
		eof { fail "QEMU exited during boot" }
	}
	set timeout $old
}

# cmd LINE ?TIMEOUT?: send LINE, wait for the next prompt, return the output in between
# (the echoed command line removed, CRs stripped).
#
# The prompt need not be the last thing received: a background job (`run ... &`) may print
# whole lines right after it, in the same read (the shell waits for input there, so what
# follows the prompt is never the command's). Those lines, and whatever the flush before
# sending finds, are kept in cmd_async for wait_output. A prompt followed by the echo of
# LINE itself is a late one from before LINE, not LINE's: it is not taken.
set cmd_async ""
proc cmd {line {tmo 30}} {
	global prompt spawn_id cmd_async
	# output nobody waited for: an earlier prompt must not end this command
	expect -timeout 0 -re {.+} { append cmd_async $expect_out(buffer) }
	send -- "$line\r"
	set timeout $tmo
	regsub -all {[][{}()*+?.\\^$|]} $line {\\&} echo
	expect {
		-re "(.*?)\r?\n?kern> ((?:(?!$echo\r)\[^\r\n\]*\r*\n)*)$" {}
		"FATAL" { expect -timeout 5 eof; fail "kernel fault after: $line" }
		"panic:" { expect -timeout 5 eof; fail "kernel panic after: $line" }
		timeout { fail "no prompt within $tmo s after: $line" }
		eof { fail "QEMU exited after: $line" }
	}
	append cmd_async $expect_out(2,string)
	set cmd_async [string range $cmd_async end-65535 end]
	set out [string map {"\r" ""} $expect_out(1,string)]
	# drop the echoed command line
	set nl [string first "\n" $out]
	if {$nl >= 0} { set out [string range $out [expr {$nl + 1}] end] } else { set out "" }
	return $out
}

# wait_output RE TIMEOUT WHY: wait for asynchronous output (a background job's) matching
# the regexp RE, whether cmd already took it in (cmd_async) or it is still to come. The
# text up to the match is consumed either way. Returns the match.
proc wait_output {re tmo why} {
	global spawn_id cmd_async
	if {[regexp -indices -- $re $cmd_async m]} {
		set got [string range $cmd_async [lindex $m 0] [lindex $m 1]]
		set cmd_async [string range $cmd_async [expr {[lindex $m 1] + 1}] end]
		return $got
	}
	set cmd_async ""
	set timeout $tmo
	expect {
		-re $re {}
		timeout { fail $why }
		eof { fail "QEMU exited: $why" }
	}
	return $expect_out(0,string)
}

# After output nobody waited for in step (a background job's, prompts that came late):
# every byte up to a fresh marker's own output line and the prompt after it is consumed,
# so the next cmd sees only its own output. (The echoed command line holds the marker
# after "echo ", so only the output line matches.)
proc resync {{tmo 30}} {
	global resync_n spawn_id
	if {![info exists resync_n]} { set resync_n 0 }
	set mark "resync-[incr resync_n]"
	send -- "echo $mark\r"
	set timeout $tmo
	expect {
		-re "\[\r\n\]$mark\[\r\n\]+(.*?)kern> $" {}
		timeout { fail "no marker $mark within $tmo s" }
		eof { fail "QEMU exited before marker $mark" }
	}
}

proc expect_in {out want {what ""}} {
	if {[string first $want $out] < 0} {
		fail "expected '$want' in output of $what:\n$out"
	}
}

proc expect_not_in {out bad {what ""}} {
	if {[string first $bad $out] >= 0} {
		fail "did not expect '$bad' in output of $what:\n$out"
	}
}

# Wait for QEMU to exit; return its exit status.
proc qemu_status {{tmo 30}} {
	global spawn_id
	set timeout $tmo
	expect {
		eof {}
		timeout { fail "QEMU did not exit within $tmo s" }
	}
	set st [wait]
	return [lindex $st 3]
}

proc poweroff {} {
	global spawn_id
	send -- "poweroff\r"
	set st [qemu_status]
	if {$st != 0} { fail "poweroff: QEMU exit status $st, expected 0" }
}

proc pass {} {
	drop_share 0
	puts "\nOK"
	exit 0
}

# host_audit FILE: the stream FILE (on the host) judged by opreport --stats, independently of
# the kernel's counters: fails unless it exits 0 with "Conservation: ok"; returns a dict core
# -> {in-file taken delivered no-block out-full paused other} from its per-core table (in-file
# counted in the stream itself, the rest from each core's closing record).
proc host_audit {file} {
	global top
	if {[catch {exec $top/user/opreport --stats $file} out]} { fail "opreport --stats $file:\n$out" }
	expect_in $out "Conservation: ok" "opreport --stats $file"
	set cores [dict create]
	set re {(?n)^ +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)}
	foreach {- k infile taken deliv nob outf paused other} [regexp -all -inline $re $out] {
		if {![dict exists $cores $k]} {
			dict set cores $k [list $infile $taken $deliv $nob $outf $paused $other]
		}
	}
	return $cores
}

# host_matches_kernel FILE STAT NCPU: FILE's audit agrees with /dev/oprofilestat's STAT on
# every core: the samples in the stream are the kernel's delivered count, and each core's
# closing record says the kernel's taken and lost counts.
proc host_matches_kernel {file stat ncpu} {
	set cores [host_audit $file]
	for {set c 0} {$c < $ncpu} {incr c} {
		if {![dict exists $cores $c]} { fail "opreport --stats $file has no row for core $c" }
		lassign [dict get $cores $c] infile taken deliv nob outf paused other
		set want {}
		foreach n {taken delivered lost_noblock lost_outfull lost_paused lost_other} {
			if {![regexp "(?n)^cpu$c.$n (\[0-9\]+)$" $stat -> v]} { fail "no cpu$c.$n in:\n$stat" }
			lappend want $v
		}
		if {[list $taken $infile $nob $outf $paused $other] ne $want} {
			fail "core $c: the stream holds $infile samples and says taken $taken, lost\
			      $nob/$outf/$paused/$other (no-block/out-full/paused/other); the kernel\
			      says [lrange $want 0 1] and [lrange $want 2 end]"
		}
	}
	return $cores
}

# stat_value STAT NAME: the number on NAME's line of /dev/oprofilestat's text STAT
proc stat_value {stat name} {
	if {![regexp "(?n)^$name (\[0-9\]+)$" $stat -> v]} { fail "no $name in /dev/oprofilestat:\n$stat" }
	return $v
}

# check_conservation STAT NCPU ?EXTRA?: on every core of /dev/oprofilestat's text STAT,
# taken == delivered + the four lost counts (+ the counters named in EXTRA, e.g. overwritten)
proc check_conservation {stat ncpu {extra {}}} {
	set what "delivered + lost[join [lmap e $extra {string cat " + " $e}] {}]"
	for {set c 0} {$c < $ncpu} {incr c} {
		set taken [stat_value $stat cpu$c.taken]
		set sum [stat_value $stat cpu$c.delivered]
		foreach r [concat {lost_noblock lost_outfull lost_paused lost_other} $extra] {
			incr sum [stat_value $stat cpu$c.$r]
		}
		if {$taken != $sum} { fail "cpu$c: taken $taken != $what $sum\n$stat" }
	}
}

# wait_ps RE SECS WHY ?TMO?: poll ps (each with a deadline of TMO s) once a second until
# its output no longer matches the regular expression RE; fails with WHY after SECS polls
proc wait_ps {re secs why {tmo 30}} {
	for {set i 0} {[regexp $re [cmd "ps" $tmo]]} {incr i} {
		if {$i == $secs} { fail $why }
		cmd "sleep 1"
	}
}

# host_crc PATH: "SIZE 0xCRC32" of the host file PATH (the format of the guest's dd)
proc host_crc {path} {
	return [exec python3 -c {import sys, zlib; d = open(sys.argv[1], "rb").read(); print("%d 0x%08x" % (len(d), zlib.crc32(d)))} $path]
}

# probe_share: fails unless a file the guest writes to /host reads back (no share, no pass)
proc probe_share {} {
	cmd "echo probe-ok > /host/probe"
	if {[string first "probe-ok" [cmd "cat /host/probe"]] < 0} { fail "the host share does not work" }
}
