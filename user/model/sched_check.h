/*
 * sched_check.h: a session's samples against its switches (sched_check.c), per core and per
 * thread, over the time its events cover. Called by sched_acct.c's sched_analyze after the
 * replay; --stats prints the verdicts, --wall and --thread show the shares.
 */
#ifndef OPREPORT_SCHED_CHECK_H
#define OPREPORT_SCHED_CHECK_H

#include "ingest/events.h"

/* How far the two shares may be apart: this many standard deviations of periodic ticks,
 * plus SCHED_CHECK_SLACK periods, plus what late samples may have moved (sched_check.c). */
#define SCHED_CHECK_SIGMAS	4.0
#define SCHED_CHECK_SLACK	3.0

/* Fill each core's and thread's check and bad_samples (s->smp sorted by core and time, the
 * spans made). */
void sched_check(struct sched_sess *s);

#endif
