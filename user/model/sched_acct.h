/*
 * sched_acct.h: where every thread's time went, replayed from a session's scheduler events
 * (sched_acct.c). Called once by opreport.c after the parse, before any view of the events.
 */
#ifndef OPREPORT_SCHED_ACCT_H
#define OPREPORT_SCHED_ACCT_H

#include "ingest/profile.h"

/* Sort every session's events into time order and account them: the derived fields of
 * struct sched_sess, sched_core and sthread (ingest/events.h). 0 or -1 (memory). */
int sched_analyze(struct profile *p);

#endif
