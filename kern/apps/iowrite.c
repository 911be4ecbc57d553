/*
 * iowrite: a known answer for I/O wait. Each step rewrites the file /host/iowrite-CORE.bin
 * on the 9P share (create with truncation, one IOWRITE_BYTES write, close: a handful of 9P
 * round trips, each a sleep until the host's reply) and times every one of those calls
 * with the TSC itself. The thread does nothing else that waits, so the total it prints
 * (run's report, through the workload's done hook) is the time it spent waiting for the
 * 9P server plus the little computing inside the calls -- measured without the profiler,
 * for tests/t/sched-iowait to hold opreport's "io 9p" time against.
 *
 * Runs in run's per-core kthreads (cmds_thread.c): setup, then steps, then done, all in
 * the one thread, so the state needs no lock.
 */
#include "arch.h"
#include "dev.h"
#include "kmalloc.h"
#include "workloads.h"
#include "tsctime.h"

#define IOWRITE_BYTES	(64u * 1024)

struct iowrite {
	char path[32];		/* the file this thread rewrites */
	uint64_t wait;		/* TSC ticks inside the calls that talk to the 9P server */
	uint64_t calls;		/* those calls */
	uint64_t errs;		/* of those, failed */
	uint8_t buf[IOWRITE_BYTES];
};

void *iowrite_setup(void)
{
	struct iowrite *w = kzmalloc(sizeof(*w));

	if (w) {
		snprintf(w->path, sizeof(w->path), "/host/iowrite-%d.bin", core_id());
		memset(w->buf, 'w', sizeof(w->buf));
	}
	return w;
}

/* One timed call's end: its time counts, and its failure. */
static long timed(struct iowrite *w, uint64_t t0, long r)
{
	w->wait += tsc_read() - t0;
	w->calls++;
	w->errs += r < 0;
	return r;
}

/* The writer: every call in here that reaches the 9P server is timed. */
__attribute__((noinline)) void iowrite_put(struct iowrite *w)
{
	uint64_t t0 = tsc_read();
	int fd = (int)timed(w, t0, kcreate(w->path, OWRITE | OTRUNC, 0644));

	if (fd < 0)
		return;
	t0 = tsc_read();
	timed(w, t0, kwrite(fd, w->buf, sizeof(w->buf)));
	t0 = tsc_read();
	timed(w, t0, kclose(fd));
}

uint64_t iowrite_step(void *st)
{
	iowrite_put(st);
	return 1;
}

void iowrite_done(void *st, char *note, size_t n)
{
	struct iowrite *w = st;
	uint64_t us = us_of_tsc(w->wait);

	snprintf(note, n, "%lu calls to the 9P share (%lu failed), %lu.%03lu ms in them",
		 (unsigned long)w->calls, (unsigned long)w->errs, (unsigned long)(us / 1000),
		 (unsigned long)(us % 1000));
}
