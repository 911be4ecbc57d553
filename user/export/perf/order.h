/*
 * order.h: the data section of a perf.data file with scheduler events in time order
 * (order.c), called by perfdata.c's report_perf.
 */
#ifndef OPREPORT_PERF_ORDER_H
#define OPREPORT_PERF_ORDER_H

#include <stdio.h>

/* The records of two temporary files (the samples, the scheduler records) into out, in
 * time order, ties in file order; 0, or -1 (reading, memory, writing). */
int perf_write_ordered(FILE *out, FILE *samples, FILE *sched);

#endif
