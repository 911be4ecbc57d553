/*
 * tracepoints.c: the scheduler tracepoints' format files, attributes and names
 * (tracepoints.h), used by perfdata.c (attributes, names) and features.c (the formats,
 * in HEADER_TRACING_DATA). A tracepoint sample's payload (PERF_SAMPLE_RAW) is the event's
 * record as the kernel's trace buffer holds it: the common header (type, flags, preempt
 * count, pid), then the fields at the offsets its format file states. perf parses them only
 * through those format files (tools/perf/util/trace-event-read.c reads them), so the
 * formats below are the contract, and tracepoints.h's structs must match them.
 */
#include <string.h>

#include "export/perf/tracepoints.h"

#define TP_STR_(x)	#x
#define TP_STR(x)	TP_STR_(x)	/* an id as its format file writes it */

/* The fields every tracepoint record starts with (struct trace_entry). */
#define TP_COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"

static const char switch_format[] =
	"name: sched_switch\n"
	"ID: " TP_STR(TP_SWITCH_ID) "\n"
	"format:\n"
	TP_COMMON_FIELDS
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"REC->prev_state, REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char wakeup_format[] =
	"name: sched_wakeup\n"
	"ID: " TP_STR(TP_WAKEUP_ID) "\n"
	"format:\n"
	TP_COMMON_FIELDS
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
	"REC->target_cpu\n";

/* The trace buffer's page and event headers as a 6.1 x86-64 kernel describes them. */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

static const char runtime_format[] =
	"name: sched_stat_runtime\n"
	"ID: " TP_STR(TP_RUNTIME_ID) "\n"
	"format:\n"
	TP_COMMON_FIELDS
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:u64 runtime;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 vruntime;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d runtime=%Lu [ns] vruntime=%Lu [ns]\", REC->comm, REC->pid, "
	"(unsigned long long)REC->runtime, (unsigned long long)REC->vruntime\n";

const char *const perf_sched_names[PERF_SCHED_NATTR] = {
	"sched:sched_switch", "sched:sched_wakeup", "sched:sched_stat_runtime"
};

void perf_sched_attrs(struct file_attr a[PERF_SCHED_NATTR])
{
	memset(a, 0, PERF_SCHED_NATTR * sizeof(*a));
	for (int i = 0; i < PERF_SCHED_NATTR; i++) {
		a[i].attr.type = PERF_TYPE_TRACEPOINT;
		a[i].attr.size = sizeof(a[i].attr);
		a[i].attr.config = i == 0 ? TP_SWITCH_ID : i == 1 ? TP_WAKEUP_ID : TP_RUNTIME_ID;
		a[i].attr.sample_period = 1;
		a[i].attr.sample_type = PERF_TP_SAMPLE_TYPE;	/* records.h's tp_sample_head */
		a[i].attr.sample_id_all = 1;
	}
	a[0].attr.sample_type |= PERF_SAMPLE_CALLCHAIN;	/* prev's stack: hotspot's off-CPU */
}

/*
 * HEADER_TRACING_DATA, as perf's trace-event-read.c reads it (version 0.6): magic, version,
 * endianness, long size, page size; header_page and header_event (perf reads the first, which
 * may not be empty, and skips the second); no ftrace formats; one system "sched" with the
 * three formats; empty kallsyms, printk formats and saved command lines.
 */
void perf_sched_tracing_data(FILE *f)
{
	static const char magic[] = "\027\010\104tracing0.6";
	const char *fmts[PERF_SCHED_NATTR] = { switch_format, wakeup_format, runtime_format };

	fwrite(magic, 1, sizeof(magic), f);	/* with its NUL: the version is a C string */
	fputc(0, f);				/* file little-endian */
	fputc(8, f);				/* sizeof(long) */
	perf_put_u32(f, 4096);			/* page size */
	fwrite("header_page", 1, 12, f);
	perf_put_u64(f, sizeof(header_page) - 1);
	fwrite(header_page, 1, sizeof(header_page) - 1, f);
	fwrite("header_event", 1, 13, f);
	perf_put_u64(f, sizeof(header_event) - 1);
	fwrite(header_event, 1, sizeof(header_event) - 1, f);
	perf_put_u32(f, 0);				/* ftrace formats */
	perf_put_u32(f, 1);				/* systems */
	fwrite("sched", 1, 6, f);
	perf_put_u32(f, PERF_SCHED_NATTR);
	for (int i = 0; i < PERF_SCHED_NATTR; i++) {
		perf_put_u64(f, strlen(fmts[i]));
		fwrite(fmts[i], 1, strlen(fmts[i]), f);
	}
	perf_put_u32(f, 0);				/* kallsyms */
	perf_put_u32(f, 0);				/* printk formats */
	perf_put_u64(f, 0);				/* saved cmdlines */
}
