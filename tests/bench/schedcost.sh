#!/usr/bin/env bash
# What the scheduler and lock events cost (issue 20): guest instructions per context switch
# -- a yield (the prev stays runnable: a short record, no stack) and a blocking rendez
# hand-over (a record with prev's stack, and the wake-up that ends the wait) -- with no
# session, a CPU-only session and a session with -e sched; and per uncontended qlock and
# spinlock acquire/release pair, in this kernel and in BEFORE (default 7458d39: main before
# the short switch record; this bench's workloads, kern/apps/lockcost.c, are built into it,
# the table rows it lacks added). Then gdb single-steps switch events of both kinds to say
# where a switch's instructions go.
#
# One core under -icount shift=1,sleep=off (guest time is 2 ns per instruction executed,
# idle gaps skipped): every run does fixed work (run -n), so its time is its instructions.
# Switches: `run yield` in the background for longer than the measured run, then `run
# yield -n N` in the foreground: each foreground step yields to the background thread and
# gets the core back, two switches (timer preemptions only replace some of them). Blocking
# switches: the same with `run pingpong`, whose two threads hand a turn over through one
# rendez: each step wakes the other and sleeps, so every switch is a rendez wait and comes
# with one wake-up. Sessions
# sample by timer at 100 Hz (depth 16) with a reader streaming to /dev/null, so the reader,
# the worker and the block traffic the events cause are part of their cost. ROUNDS
# interleaved rounds (conditions rotate); medians.
#
# env: ROUNDS (5), YIELDS, PAIRS, BEFORE ("" skips the before kernel), CONDS (the sessions of
# this kernel: "off plain sched sched0 schedq"; "plain sched" for a quick look), REPORT_ONLY=1 (the
# tables from the last log), STEPS_ONLY=1 (step the switch events again, keep the rest),
# BEFORE_ONLY=1 (measure the before kernel again, keep the rest), STEPS=0 (no stepping).
set -u
cd "$(dirname "$0")/../.."
top=$PWD
ROUNDS=${ROUNDS:-5}
YIELDS=${YIELDS:-20000}
PAIRS=${PAIRS:-200000}
BEFORE=${BEFORE-7458d39}
work=$top/build/bench/schedcost
log=$work/runs.log
mkdir -p "$work"

# a tree at BEFORE with lockcost.c and its table rows added (the yield step too)
before_tree() {
	local bt=$work/before
	[ -e "$bt/.git" ] || git worktree add --detach -f "$bt" "$BEFORE" >/dev/null 2>&1 || return 1
	git -C "$bt" checkout -q -f "$BEFORE" && git -C "$bt" clean -qfd kern || return 1
	grep -q lockcost.c "$bt/Makefile" ||
		sed -i 's#kern/apps/split.c kern/apps/app.c#kern/apps/split.c kern/apps/lockcost.c kern/apps/app.c#' \
			"$bt/Makefile"
	cp kern/apps/lockcost.c "$bt/kern/apps/" && cp kern/include/workloads.h "$bt/kern/include/" ||
		return 1
	local row
	for row in '{ "yield", "yields", NULL, yield_step },' \
		   '{ "pingpong", "hand-overs", NULL, pingpong_step },' \
		   '{ "qlockfree", "qlock pairs", qlockfree_setup, qlockfree_step },' \
		   '{ "spinfree", "spinlock pairs", spinfree_setup, spinfree_step },'; do
		grep -qF "${row%%,*}," "$bt/kern/apps/workloads.c" ||
			sed -i "/{ \"split\", \"rounds\", NULL, split_step },/a\\
	$row" "$bt/kern/apps/workloads.c"
	done
	# the rows above leave workloads.h's later fields (done) out: zero, as C makes them
	grep -q 'Wno-missing-field-initializers' "$bt/Makefile" ||
		sed -i '0,/-Wextra/s//-Wextra -Wno-missing-field-initializers/' "$bt/Makefile"
	make -s -C "$bt" build/kern.iso >&2
}

# measure LABEL ISO CONDS
measure() {
	ISO=$2 NCPU=1 MEM=512M ACCEL=tcg LABEL=$1 CONDS="$3" ROUNDS=$ROUNDS YIELDS=$YIELDS \
	CONSOLE=$work/console-$1.log \
	PAIRS=$PAIRS expect -c '
		source tests/lib/kern.tcl
		log_user 0
		log_file -a -noappend $env(CONSOLE)	;# the guest console, for a run that fails
		set timeout 600
		boot -smp 1 -icount shift=1,align=off,sleep=off
		set conds $env(CONDS)
		cmd "oprofile cap 67108864"	;# schedq: every event of a run fits, undrained
		proc us_of {out} { regexp {\(\d+ in (\d+) us\)} $out -> us; return $us }
		for {set r 1} {$r <= $env(ROUNDS)} {incr r} {
			set k [expr {($r - 1) % [llength $conds]}]
			foreach c [concat [lrange $conds $k end] [lrange $conds 0 [expr {$k - 1}]]] {
				if {$c ne "off" && $c ne "schedq"} { cmd "cat /dev/oprofile > /dev/null &" }
				if {$c ne "off"} {
					set ev [expr {[string match sched* $c] ? "-e sched" : ""}]
					set d [expr {$c eq "sched0" ? 0 : 16}]
					cmd "oprofile start -m timer -f 100 -d $d $ev"
				}
				cmd "run yield -c 0 -t 0.5 &"
				set sw [us_of [cmd "run yield -c 0 -n $env(YIELDS)" 600]]
				while {[regexp { yield\M} [cmd "ps"]]} { cmd "sleep 0.1" }
				cmd "run pingpong -c 0 -t 0.5 &"
				set pp [us_of [cmd "run pingpong -c 0 -n $env(YIELDS)" 600]]
				while {[regexp { pingpong\M} [cmd "ps"]]} { cmd "sleep 0.1" }
				set q [us_of [cmd "run qlockfree -c 0 -n $env(PAIRS)" 600]]
				set s [us_of [cmd "run spinfree -c 0 -n $env(PAIRS)" 600]]
				if {$c ne "off"} {
					cmd "oprofile stop" 120
					if {$c eq "schedq"} { cmd "cat /dev/oprofile > /dev/null &" }
					for {set i 0} {[regexp { cat\M} [cmd "ps"]]} {incr i} { cmd "sleep 0.2" }
				}
				puts "RES $env(LABEL) $c $r $sw $q $s $pp"
			}
		}
		poweroff
	' >> "$log" 2>&1 ||
		{ echo "schedcost: the $1 boot failed; see $log and $work/console-$1.log" >&2; return 1; }
}

# steps APP TAG [FN]: one core, -icount shift=0, two APP threads (yield or pingpong) with -e
# sched (depth 16, reader to /dev/null); gdb single-steps six whole calls of FN (switch_event:
# a switch event, with the wake-up it writes; thread_wake: a wake-up, the waker's part and
# the rest of thread_wake; tests/bench/swstep.py), each a TAG line in the
# log: instructions, then per function; and an LTAG line: the same by source line.
steps() {
	local port=$((20000 + RANDOM % 20000)) out lines
	out=$(mktemp) lines=$(mktemp)
	ISTEP_FN=${3:-switch_event} ISTEP_LINES=$lines \
	NCPU=1 MEM=512M ACCEL=tcg PORT=$port ELF=$top/build/kernel.elf OUT=$out APP=$1 \
	PY=$top/tests/bench/swstep.py expect -c '
		source tests/lib/kern.tcl
		log_user 0
		set timeout 300
		spawn -noecho scripts/qemu -icount shift=0,align=off,sleep=off -gdb tcp::$env(PORT)
		expect -ex $prompt
		cmd "cat /dev/oprofile > /dev/null &"
		cmd "oprofile start -m timer -f 100 -d 16 -e sched"
		cmd "run $env(APP) -c 0 -t 3 &"
		send "run $env(APP) -c 0 -t 2\r"
		after 1000
		set env(ISTEP_PORT) $env(PORT); set env(ISTEP_ELF) $env(ELF); set env(ISTEP_OUT) $env(OUT)
		exec gdb -batch -nx -x $env(PY) 2>@1
		expect -timeout 120 -ex $prompt
		poweroff
	' >> "$log" 2>&1 || { rm -f "$out" "$lines"; return 1; }
	sed "s/^/$2 /" "$out" >> "$log"
	sed "s/^/L$2 /" "$lines" >> "$log"
	rm -f "$out" "$lines"
}

all_steps() {
	# the commit the stepped kernel was built from, for the lines the breakdown cites
	sed -i '/^SRC /d' "$log"
	echo "SRC $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- kern ||
		echo " with uncommitted changes")" >> "$log"
	steps yield STEP && steps pingpong STEPB && steps pingpong STEPW thread_wake ||
		echo "schedcost: stepping the switch events failed; no breakdown" >&2
}

hung=
if [ "${STEPS_ONLY:-0}" = 1 ]; then	# the breakdown again, the measured rows kept
	sed -i '/^L\?STEP[BW]\? /d' "$log"
	all_steps
elif [ "${BEFORE_ONLY:-0}" = 1 ]; then
	sed -i '/^RES before /d' "$log"
	before_tree && measure before "$work/before/build/kern.iso" "off plain sched" ||
		echo "schedcost: no before rows" >&2
elif [ "${REPORT_ONLY:-0}" != 1 ]; then
	: > "$log"
	make -s -j2 build/kern.iso >&2 || exit 1
	measure now build/kern.iso "${CONDS:-off plain sched sched0 schedq}" || hung="$hung now"
	[ "${STEPS:-1}" = 0 ] || all_steps
	if [ -n "$BEFORE" ]; then
		if before_tree; then
			measure before "$work/before/build/kern.iso" "off plain sched" || hung="$hung before"
		else
			echo "schedcost: cannot build $BEFORE with the workloads; no before rows" >&2
		fi
	fi
fi

median() { sort -g | awk '{v[NR] = $1} END {if (!NR) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# insns LABEL COND FIELD DIV: median instructions per unit (2 ns each, times in us)
insns() {
	awk -v l=$1 -v c=$2 -v f=$3 -v d=$4 '$1 == "RES" && $2 == l && $3 == c {
		printf "%.1f\n", $f * 1000 / 2 / d}' "$log" | median
}
# gain LABEL COND FIELD DIV: median over rounds of (COND - plain) per unit, paired by round
gain() {
	awk -v l=$1 -v c=$2 -v f=$3 -v d=$4 '$1 == "RES" && $2 == l && $3 == "plain" {p[$4] = $f}
		$1 == "RES" && $2 == l && $3 == c {x[$4] = $f}
		END {for (r in x) if (r in p) printf "%.1f\n", (x[r] - p[r]) * 1000 / 2 / d}' "$log" | median
}
sw=$((2 * YIELDS))
echo "## Scheduler and lock events: cost of a switch and of an uncontended lock (one core, -icount shift=1)"
echo
echo "Guest instructions per context switch and per uncontended acquire/release pair ($PAIRS"
echo "pairs); medians of $ROUNDS interleaved rounds. A yield switch: \`run yield\` against a second"
echo "yielding thread ($sw switches a run; prev stays runnable, so -e sched writes the 40-byte"
echo "OPF_SWITCH_SHORT without a stack). A blocking switch: \`run pingpong\`, two threads handing"
echo "a turn over through a rendez ($sw switches a run; each is a rendez wait -- an OPF_SWITCH"
echo "with prev's stack, or, when the thread waits where its last one in the block did, the"
echo "40-byte OPF_SWITCH_SAME -- and comes with the OPF_WAKEUP of the thread that ends it, whose"
echo "cost is counted in). Sessions: timer at 100 Hz, depth 16, reader to /dev/null."
echo "\"before\" is ${BEFORE:-(not measured)}$([ "$BEFORE" = 7458d39 ] && echo " (every switch an 80-byte OPF_SWITCH with prev's stack)") with the same"
echo "workloads built in; sched0 is -e sched at depth 0 (no stack in any record); schedq is -e"
echo "sched with no reader until the runs are over (the output cap, 64 MiB here for every"
echo "session, holds all of a run's events): the switch's own path and the worker, without the"
echo "reader's copying and the switches its wake-ups add on the one core."
for l in $hung; do
	echo
	echo "Note: a $l boot stopped answering (no prompt within 30 s; its console is in"
	echo "build/bench/schedcost/console-$l.log): its rows are medians of the rounds it finished."
done
echo
echo "| kernel | session | per yield switch | per blocking switch | per qlock pair | per spinlock pair |"
echo "|---|---|---:|---:|---:|---:|"
for l in before now; do
	for c in off plain sched sched0 schedq; do
		v=$(insns $l $c 5 $sw)
		[ "$v" = - ] && continue
		echo "| $l | $c | $v | $(insns $l $c 8 $sw) | $(insns $l $c 6 $PAIRS) | $(insns $l $c 7 $PAIRS) |"
	done
done
echo
echo "| gain of -e sched over the same session without it | yield switch | blocking switch | qlock pair | spinlock pair | target |"
echo "|---|---:|---:|---:|---:|---|"
echo "| now, depth 16 | $(gain now sched 5 $sw) | $(gain now sched 8 $sw) | $(gain now sched 6 $PAIRS) | $(gain now sched 7 $PAIRS) | switch <= 150, locks 0 |"
echo "| now, depth 0 (no stack in any record) | $(gain now sched0 5 $sw) | $(gain now sched0 8 $sw) | $(gain now sched0 6 $PAIRS) | $(gain now sched0 7 $PAIRS) | |"
echo "| now, depth 16, read after the run (schedq) | $(gain now schedq 5 $sw) | $(gain now schedq 8 $sw) | $(gain now schedq 6 $PAIRS) | $(gain now schedq 7 $PAIRS) | |"
[ "$(gain before sched 5 $sw)" != - ] &&
	echo "| before, depth 16 | $(gain before sched 5 $sw) | $(gain before sched 8 $sw) | $(gain before sched 6 $PAIRS) | $(gain before sched 7 $PAIRS) | |"

# an event stepped: the fewest instructions of the six of a kind with NEED among its
# functions and none of SKIP (the common case: no block change), with its functions, most first
stepline() {
	awk -v t=$1 -v need="$2" -v skip="$3" '$1 == t && (need == "" || index($0, need)) &&
		(skip == "" || !index($0, skip)) && (!n || $2 < n) {
		n = $2; line = $0} END {print line}' "$log"
}
# the tree the stepped lines are of (all_steps noted it)
src=$(awk '$1 == "SRC" {$1 = ""; s = substr($0, 2)} END {print s}' "$log")
for kind in "STEP:yield switch event:switch_event:" \
	    "STEPB:blocking switch event of a hand-over -- the wake-up of the thread it resumes and the switch, its wait the same as before (OPF_WAKEUP + OPF_SWITCH_SAME):ev_block_woke:ev_block_full" \
	    "STEPB:blocking switch event with a walk (OPF_SWITCH):ev_block_full:" \
	    "STEPW:wake-up, the waker's side (thread_wake whole, wake_note inlined):thread_wake:"; do
	IFS=: read -r tag what need skip <<<"$kind"
	step=$(stepline "$tag" "$need" "$skip")
	[ -n "$step" ] || continue
	echo
	echo "One $what, instruction by instruction (gdb single-step, -e sched at depth 16;"
	echo "tests/bench/swstep.py): $(echo "$step" | awk '{print $2}') instructions, by function"
	echo "(inlined code counted in its caller):"
	echo "$step" | awk '{s = ""; for (i = 3; i <= NF; i++) s = s (i > 3 ? ", " : "") $i
		gsub(/:/, " ", s); printf "`%s`.\n", s}'
	# the same event by source line (the innermost inlined one), when stepped with lines
	lines=$(awk -v t="L$tag" -v n="$(echo "$step" | awk '{print $2}')" \
		'$1 == t && $2 == n {print; exit}' "$log")
	[ -n "$lines" ] || continue
	echo "By source line (lines of $src):"
	echo "$lines" | awk '{s = ""; for (i = 3; i <= NF; i++) {
		k = split($i, f, ":"); s = s (i > 3 ? ", " : "") f[1] ":" f[2] " " f[3]}
		printf "`%s`.\n", s}'
done
