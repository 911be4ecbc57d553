/*
 * features.h: the feature sections of a perf.data file (features.c), called by perfdata.c's
 * report_perf once the data is written.
 */
#ifndef OPREPORT_PERF_FEATURES_H
#define OPREPORT_PERF_FEATURES_H

#include <stdint.h>
#include <stdio.h>

#include "export/perf/records.h"
#include "model/ctx.h"

/*
 * Write the feature sections at the current position of f (just after the data): the table
 * of one file_section per bit set in features[] (in bit order), then each section. ev: the
 * events (for EVENT_DESC; more than one: the sched tracepoints, whose formats go in
 * TRACING_DATA). Returns 0, or -1 when writing failed.
 */
int perf_write_features(const struct ctx *c, const struct perf_events *ev, FILE *f,
			uint64_t features[4]);

#endif
