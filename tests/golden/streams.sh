# Streams behind the golden files (sourced by tests/t/opreport-golden). Every count below is
# exact; tests/golden/README.md derives the expected reports from them.
make_streams() {
	local dir=$1 gen="user/build/opgen -e user/build/fakekern" v full

	# Format 2 (golden.opf, events.opf), and the same in format 1 (*-v1.opf) but for the
	# output-full loss, which format 2 tells only through dropped blocks.
	for v in "" -v1; do
	full=0; [ -z "$v" ] || full=1	# the reason of core 1's 3 lost samples
	# 1500 samples on 2 cores at 1000 Hz; 5 lost on core 1 (no empty block).
	$gen ${v:+--v1} -c 2 -r 1000 -o "$dir/golden$v.opf" \
		-t 11:0:spinner -t 12:1:matrix -t 13:0:fibber \
		-S '600@0:11=main;kthread_entry;worker;spin@14' \
		-S '150@0:11=main;kthread_entry;worker;spin@15' \
		-S '300@1:12=main;kthread_entry;worker;matrix_mul;matrix_inner@22' \
		-S '100@1:12=main;kthread_entry;worker;matrix_mul@30' \
		-S '200@0:13=main;kthread_entry;worker;fib;fib;fib@36' \
		-S '100@1:13=main;kthread_entry;worker;fib;fib@37' \
		-S '50@1:0=idle_loop@42' \
		-l 1:0:5

	# Events: a throttle of core 1, core 0 throttled and raised back, 2 snapshots (flight
	# recorder), a 0.5 s pause, 3 unknown records, 20 overwritten and lost samples of several
	# reasons (core 1: 3 no empty block in format 2, 3 output full in format 1); 4 truncated
	# samples; 12 + 3 timer ticks missed.
	$gen ${v:+--v1} -c 2 -r 1000 -o "$dir/events$v.opf" --snapshots 2 --pause --unknown 3 \
		--throttle 1:1000:500 --throttle 0:1000:500 --throttle 0:500:1000 \
		--overwritten 0:20 -l 0:2:7 -l "1:$full:3" -l 1:3:1 \
		--missed 0:12 --missed 1:3 \
		-S '96@0:5=main;kthread_entry;worker;spin@14' \
		-S '4/t@1:5=spin@15' \
		-S '100@1:0=idle_loop@42'
	done

	# Weights: core 0's 100 samples on time, core 1's 100 each 3 periods after the one
	# before (2 ticks missed each time).
	$gen -c 2 -r 1000 -o "$dir/weighted.opf" -t 11:0:spinner -t 12:1:matrix \
		-S '100@0:11=main;kthread_entry;worker;spin@14' \
		-S '100~3@1:12=main;kthread_entry;worker;matrix_mul;matrix_inner@22'
}
