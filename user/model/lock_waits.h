/*
 * lock_waits.h: every wait for a lock in a session (lock_waits.c), finished or not, and
 * which waits lie inside others. Called by sched_acct.c's sched_analyze after the replay;
 * --locks (text/sched_views.c) and its stacks (model/sched_offcpu.c) read s->waits.
 */
#ifndef OPREPORT_LOCK_WAITS_H
#define OPREPORT_LOCK_WAITS_H

#include "ingest/events.h"

/* Fill s->waits (sorted by lock, kind, thread and time). 0, or -1 (memory). */
int sched_lock_waits(struct sched_sess *s);

/* What wait w counts in the report: its time in the report's window (--time), 0 when the
 * filters left its event out (model/filter.c: struct sev.out). */
uint64_t lwait_len(const struct sched_sess *s, const struct lwait *w);

#endif
