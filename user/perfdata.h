/*
 * perfdata.h: the on-disk pieces of a perf.data file (Linux perf's PERFILE2 format) shared by
 * perf.c (header, attribute, records) and perfdata_feat.c (the feature sections after the
 * data). Little-endian host layout, as perf writes it on x86-64.
 */
#ifndef OPREPORT_PERFDATA_H
#define OPREPORT_PERFDATA_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

#define PERF_SAMPLE_ID_VALUE	1	/* the one event's id: in the attr, every record, EVENT_DESC */
#define PERF_EVENT_NAME		"cpu-clock:k"	/* what perf report and hotspot call it */

struct file_section {
	uint64_t offset, size;
};

struct file_attr {
	struct perf_event_attr attr;
	struct file_section ids;	/* the attribute's ids: one u64, PERF_SAMPLE_ID_VALUE */
};

/*
 * Write the feature sections at the current position of f (just after the data): the table
 * of one file_section per bit set in features[] (in bit order), then each section. a is the
 * one attribute (for EVENT_DESC). Returns 0, or -1 when writing failed.
 */
int perf_write_features(const struct ctx *c, const struct perf_event_attr *a, FILE *f,
			uint64_t features[4]);

#endif
