/*
 * sched_records.h: a stream's scheduler events as tracepoint samples and context switch
 * records of the perf.data file (sched_records.c), called by perfdata.c.
 */
#ifndef OPREPORT_PERF_SCHED_RECORDS_H
#define OPREPORT_PERF_SCHED_RECORDS_H

#include <stdio.h>

#include "model/ctx.h"

/* The stream has events to export (the file then carries the tracepoints). */
int perf_sched_on(const struct ctx *c);
/* Every session's events as records into f, each session's in time order; 0, or -1:
 * writing failed. */
int perf_sched_samples(const struct ctx *c, FILE *f);

#endif
