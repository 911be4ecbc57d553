/*
 * perfdata.h: the on-disk pieces of a perf.data file (Linux perf's PERFILE2 format) shared by
 * perfdata.c (header, attribute, records) and features.c (the feature sections after the
 * data). Little-endian host layout, as perf writes it on x86-64.
 */
#ifndef OPREPORT_PERFDATA_H
#define OPREPORT_PERFDATA_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>

#include "model/ctx.h"

#define PERF_SAMPLE_ID_VALUE	1	/* the one event's id: in the attr, every record, EVENT_DESC */
#define PERF_EVENT_NAME		"cpu-clock:k"	/* what perf report and hotspot call it */

struct file_section {
	uint64_t offset, size;
};

struct file_attr {
	struct perf_event_attr attr;
	struct file_section ids;	/* the attribute's ids: one u64, PERF_SAMPLE_ID_VALUE */
};

/* The file's events: n attributes, their names; the i-th has id PERF_SAMPLE_ID_VALUE + i. */
struct perf_events {
	const struct file_attr *a;
	const char *const *names;
	uint32_t n;
};

/*
 * Write the feature sections at the current position of f (just after the data): the table
 * of one file_section per bit set in features[] (in bit order), then each section. ev: the
 * events (for EVENT_DESC; more than one: the sched tracepoints, whose formats go in
 * TRACING_DATA). Returns 0, or -1 when writing failed.
 */
int perf_write_features(const struct ctx *c, const struct perf_events *ev, FILE *f,
			uint64_t features[4]);

/* perfdata.c: ns since boot of a timestamp of session s */
struct session;
uint64_t perf_ns_of(const struct session *s, uint64_t tsc);

/* perfdata.c: a record other than a sample (body of n bytes), its sample_id trailer saying
 * pid/tid, time ns and cpu, as sample_id_all asks of every record */
void perf_put_rec(FILE *f, uint32_t type, uint16_t misc, const void *body, size_t n,
		  uint32_t pid, uint32_t tid, uint64_t ns, uint32_t cpu);

/* sched_records.c: the scheduler events as sched:sched_switch, sched_wakeup, sched_stat_runtime */
#define PERF_SCHED_NATTR	3
int perf_sched_on(const struct ctx *c);		/* the stream has events to export */
void perf_sched_attrs(struct file_attr a[PERF_SCHED_NATTR]);
extern const char *const perf_sched_names[PERF_SCHED_NATTR];
int perf_sched_samples(const struct ctx *c, FILE *f);	/* 0, or -1: writing failed */
void perf_sched_tracing_data(FILE *f);		/* HEADER_TRACING_DATA */

/* order.c: the records of two temporary files into out, in time order; 0, or -1 */
int perf_write_ordered(FILE *out, FILE *samples, FILE *sched);

/* The writer's entry, for opreport.c. perf_collect: keep every reported sample of p for
 * report_perf (installs p's hook before the parse); NULL when no temporary file. */
struct perf_samples *perf_collect(struct profile *p);
void perf_free(struct perf_samples *ps);
/* --perf-data FILE: 0, or -1 (errno tells why when it was the file). */
int report_perf(const struct ctx *c, const char *path);

#endif
