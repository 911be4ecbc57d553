/*
 * main.c: the profiler's host tests (tests/host/oprof/): the table of subtests, in the order
 * they run, and the worker thread that lives for the whole program.
 * Run by tests/t/host-oprofile (build/host/oprof{,-tsan,-asan}); -q runs a shorter stress.
 */
#include "oprof_host.h"

static pthread_t worker;

/* Last: the worker ends, the profiler is torn down, and no block is left. */
static void teardown(void)
{
	__atomic_store_n(&worker_exit, 1, __ATOMIC_RELAXED);
	pthread_join(worker, NULL);
	oprof_fini();
	CHECKF(block_count() == base_blocks, "blocks live at exit");
}

static const struct harness_test tests[] = {
	{ "backtrace: walker stays in bounds (corrupt chains, cycles, misaligned, fuzz)",
	  test_backtrace },
	{ "ctl: bad options, start twice, settings while running, pause/resume, busy open",
	  test_ctl },
	{ "stream: reader before start gets header, threads, samples, closing records, EOF",
	  test_stream_eof },
	{ "pause: no samples while paused, each counted lost PAUSED; resume continues",
	  test_pause },
	{ "snapshot: dumps hold the newest window per core, overwritten counted, repeatable",
	  test_snapshot },
	{ "throttle: a core over its budget halves its rate and doubles it back when calm, "
	  "told in the stream and stat", test_throttle },
	{ "flush and staleness push partial blocks while running", test_flush_stale },
	{ "nmi: samples of NMIs inside the hot path are recorded after it, all counted",
	  test_nmi },
	{ "silent drop: a block freed uncounted shows as a gap in its core's sequence",
	  test_silent_drop },
	{ "resume: a reader closed mid-block leaves the rest to the next, whole", test_resume },
	{ "late worker: the cores start with blocks for their rate, not the floor",
	  test_late_worker },
	{ "discard: a reader mid-stream gets a closing record and EOF, not the next session",
	  test_discard_reader },
	{ "flight recorder: the first snapshot of a second session dumps its windows",
	  test_flight_twice },
	{ "markers: 500 pause/resume cycles stay under the output cap", test_marks_cap },
	{ "cap: lowered to fit free memory; a session that cannot fit is refused",
	  test_cap_memory },
	{ "stress lossy: every sample conserved and in order", test_stress_lossy },
	{ "stress fast: every sample conserved and in order", test_stress_fast },
	{ "start/stop cycles leave block_count and allocations unchanged", test_cycles },
	{ "teardown", teardown },
};

int main(int argc, char **argv)
{
	base_blocks = block_count();
	oprof_init(&hooks);
	base_allocs = shim_live_allocs();
	pthread_create(&worker, NULL, worker_main, NULL);
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 120, NULL }, argc, argv);
}
