/*
 * records.h: the pieces of a perf.data file (Linux perf's PERFILE2 format) that every part
 * of the writer shares, each layout written once: the attribute and section layouts, the
 * events' ids, the fixed fields each kind of sample starts with and the sample_id trailer of
 * every other record -- written by perfdata.c (cpu-clock samples) and sched_records.c
 * (tracepoint samples, switch records), read back by order.c for their times -- and the
 * writers of the small pieces (records.c). Little-endian host layout, as perf writes it on
 * x86-64.
 */
#ifndef OPREPORT_PERF_RECORDS_H
#define OPREPORT_PERF_RECORDS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ingest/profile.h"

#define PERF_SAMPLE_ID_VALUE	1	/* the cpu-clock event's id: its attr, records, EVENT_DESC */
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
 * A cpu-clock sample (id PERF_SAMPLE_ID_VALUE): its sample_type, and the fixed fields it
 * starts with, in the order perf lays out those bits; the call chain follows (u64 count,
 * then the addresses).
 */
#define PERF_CPU_SAMPLE_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
				 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
				 PERF_SAMPLE_CALLCHAIN)
struct cpu_sample_head {
	struct perf_event_header h;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t period;
};

/*
 * A tracepoint sample (ids PERF_SAMPLE_ID_VALUE + 1 on): likewise; then the call chain
 * (sched_switch only: PERF_SAMPLE_CALLCHAIN), then the raw record (u32 size, the bytes).
 */
#define PERF_TP_SAMPLE_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
struct tp_sample_head {
	struct perf_event_header h;
	uint64_t id;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t period;
};

/* What sample_id_all appends to every record that is not a sample: pid/tid, time, cpu, id. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

_Static_assert(sizeof(struct cpu_sample_head) == 56 && sizeof(struct tp_sample_head) == 48 &&
	       sizeof(struct sample_id) == 32, "perf's layouts have no padding");

/* ns since boot of a timestamp of session s. */
uint64_t perf_ns_of(const struct session *s, uint64_t tsc);

/* A record other than a sample (body of n bytes, zero-padded to 8), its sample_id trailer
 * saying pid/tid, time ns and cpu, as sample_id_all asks of every record. */
void perf_put_rec(FILE *f, uint32_t type, uint16_t misc, const void *body, size_t n,
		  uint32_t pid, uint32_t tid, uint64_t ns, uint32_t cpu);

/* A u32 or u64 as the file holds it (the feature sections, the tracing data). */
void perf_put_u32(FILE *f, uint32_t v);
void perf_put_u64(FILE *f, uint64_t v);

#endif
