/*
 * flight.c: host tests of the flight recorder (start -s): windows, snapshots, dumps.
 * Run by main.c's table.
 */
#include "oprof_host.h"

/*
 * Flight recorder. Phase 1: every core ticks SN1 times and waits (no tick: the snapshot
 * hands the windows over itself, after quiescing); the dump must hold exactly each core's
 * newest samples, SN1 included, contiguous, and everything before them counts overwritten.
 * Phase 2: the cores tick on while the main thread takes snapshots (the cores hand over at
 * their next tick), pauses and resumes; stop dumps the last windows. Every dump is
 * contiguous per core, whatever is between dumps is overwritten or lost (paused), and
 * nothing reaches the stream outside dumps.
 */
#define SN1	5000
#define SNAP_CORES	3
static int snap_go;

static void body_snapshot(int core)
{
	uintptr_t st[STACK_WORDS];
	uint64_t seq = 1;

	for (; seq <= SN1; seq++)
		tick(core, seq, st);
	core_barrier(core, SNAP_CORES + 1);	/* main takes snapshot 1 */
	core_barrier(core, SNAP_CORES + 1);
	while (!__atomic_load_n(&snap_go, __ATOMIC_ACQUIRE)) {
		tick(core, seq++, st);
		if (seq % 64 == 0)
			sleep_us(20);
	}
}

/* Phase 1: nothing streamed before the first snapshot, which dumps each core's newest. */
static void snapshot_first(int nc)
{
	uint64_t hdr_bytes, dumped = 0, ow = 0;

	hdr_bytes = stat_value("stream_bytes");
	core_barrier(-1, nc + 1);
	sleep_us(20000);	/* a few worker passes: they must not drain a window */
	CHECKF(stat_value("stream_bytes") == hdr_bytes, "the flight recorder wrote %lu bytes "
	       "before any snapshot", (unsigned long)(stat_value("stream_bytes") - hdr_bytes));
	for (int c = 0; c < nc; c++) {
		ow += stat_cpu(c, "overwritten");
		CHECKF(stat_cpu(c, "window_blocks") <= 3, "core %d window %lu blocks", c,
		       (unsigned long)stat_cpu(c, "window_blocks"));
	}
	CHECKF(ow > 0, "nothing overwritten with a window of 3 blocks");
	ctl("snapshot");
	for (int c = 0; c < nc; c++) {
		uint64_t d = stat_cpu(c, "delivered"), o = stat_cpu(c, "overwritten");

		CHECKF(d + o == SN1 && d > 0 && d < SN1, "core %d: delivered %lu + overwritten %lu",
		       c, (unsigned long)d, (unsigned long)o);
		dumped += d;
	}
	CHECKF(stat_value("snapshots") == 1, "snapshots %lu", (unsigned long)stat_value("snapshots"));
}

void test_snapshot(void)
{
	struct reader r = { .ps.checkframes = true, .ps.snapcheck = true };
	int nc = SNAP_CORES;

	setup(nc, body_snapshot);
	snap_go = 0;
	ctl("period 5");
	reader_start(&r);
	ctl("start -s -w 3 -b 2048 -d 16");
	CHECKF(!strcmp(stat_str("mode"), "snapshot") && stat_value("window") == 3, "mode");
	snapshot_first(nc);
	core_barrier(-1, nc + 1);
	for (int i = 0; i < 6; i++) {
		sleep_us(3000);
		if (i == 2)
			ctl("pause");
		if (i == 3)
			ctl("resume");
		ctl("snapshot");
	}
	ctl_refused("flush", -EINVAL, "use 'snapshot'");
	__atomic_store_n(&snap_go, 1, __ATOMIC_RELEASE);
	hook_stop();
	ctl("stop");
	reader_join(&r, plat.ticks);
	CHECKF(r.ps.snap_begins == 8, "%lu dumps, want 6 + 1 + the last at stop",
	       (unsigned long)r.ps.snap_begins);
	CHECKF(r.ps.sess.flags & OPF_S_SNAPSHOT, "session flags");
	for (int c = 0; c < nc; c++) {
		CHECKF(r.ps.dump_last[1][c] == SN1, "core %d: dump 1 ends at %lu, want the newest %d",
		       c, (unsigned long)r.ps.dump_last[1][c], SN1);
		CHECKF(r.ps.ce[c].lost[OPF_LOST_PAUSED] > 0, "core %d: no paused ticks", c);
		CHECKF(r.ps.ce[c].overwritten > 0, "core %d: nothing overwritten", c);
	}
	check_no_leak("snapshot");
}

/*
 * Two flight-recorder sessions in a row, the first with one snapshot: the second's first
 * snapshot must dump its windows (snapshot requests used to be numbered per session while
 * the cores remembered the last one across sessions).
 */
void test_flight_twice(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		uint64_t dumped = 0;

		setup(2, body_stream);
		stream_n = 3000;
		reader_start(&r);
		ctl("start -s -w 4 -b 2048 -d 4");
		hook_stop();
		ctl("snapshot");
		for (int c = 0; c < 2; c++)
			dumped += stat_cpu(c, "delivered");
		CHECKF(dumped > 0, "session %d: the first snapshot dumped nothing", round + 1);
		ctl("stop");
		reader_join(&r, plat.ticks);
	}
	check_no_leak("flight twice");
}

