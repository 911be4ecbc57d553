/*
 * tracepoints.h: the three Linux scheduler tracepoints the perf.data file carries for a
 * stream with scheduler events (sched:sched_switch, sched_wakeup, sched_stat_runtime):
 * their ids, the raw records a sample of each holds, as their format files (tracepoints.c)
 * state the fields -- the formats are the contract perf parses them by, so the structs
 * below must match them -- and their attributes. sched_records.c fills the records;
 * perfdata.c writes the attributes, features.c the formats (HEADER_TRACING_DATA).
 */
#ifndef OPREPORT_PERF_TRACEPOINTS_H
#define OPREPORT_PERF_TRACEPOINTS_H

#include <stdint.h>
#include <stdio.h>

#include "export/perf/records.h"

#define PERF_SCHED_NATTR	3	/* attributes, ids PERF_SAMPLE_ID_VALUE + 1, + 2, + 3 */
#define TP_SWITCH_ID	316	/* the formats' ID lines: attr.config of each event */
#define TP_WAKEUP_ID	318
#define TP_RUNTIME_ID	319
#define TP_PRIO		120

struct tp_common {
	uint16_t type;
	uint8_t flags, preempt_count;
	int32_t pid;
};

struct tp_switch {	/* switch_format */
	struct tp_common h;
	char prev_comm[16];
	int32_t prev_pid, prev_prio;
	int64_t prev_state;
	char next_comm[16];
	int32_t next_pid, next_prio;
};

struct tp_wakeup {	/* wakeup_format */
	struct tp_common h;
	char comm[16];
	int32_t pid, prio, target_cpu;
};

struct tp_runtime {	/* runtime_format */
	struct tp_common h;
	char comm[16];
	int32_t pid, pad;
	uint64_t runtime, vruntime;
};

/* Their names, and their attributes (sched_switch with prev's call chain: hotspot's
 * off-CPU stacks). */
extern const char *const perf_sched_names[PERF_SCHED_NATTR];
void perf_sched_attrs(struct file_attr a[PERF_SCHED_NATTR]);

/* HEADER_TRACING_DATA: the formats, as perf's trace-event-read.c reads them. */
void perf_sched_tracing_data(FILE *f);

#endif
