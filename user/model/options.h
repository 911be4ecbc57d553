/*
 * options.h: what the command line asks of a report, filled by opreport.c's option table
 * (parse_args, then plan() derives the rest) and read by every stage after ingest through
 * struct ctx. Plain data: a new option is a field here and a row in opreport.c's opt_rows[].
 */
#ifndef OPREPORT_OPTIONS_H
#define OPREPORT_OPTIONS_H

struct options {
	const char *file;	/* the first of files (the one messages name) */
	const char *base;	/* --diff: the first of bases */
	char **files;		/* the streams reported together (--diff: the new side) */
	int nfiles;
	char **bases;		/* --diff BASE NEW, or --diff B1 B2 -- N1 N2: the base side */
	int nbases;
	const char *kernel;	/* -k, or NULL for the default */
	long limit;		/* -n: most rows (or blocks, or symbols); -1 for all */
	long snapshot;		/* --snapshot N; 0: every sample */
	int by_samples;		/* --weight samples: count samples, not the periods they stand for */
	int inclusive, cpu, thread, lines, callgraph, folded, stats, bench_stats, diff;
	int wall, offcpu, locks;	/* scheduler events: views (text/sched_views.c) */
	int offcpu_text;	/* derived: --offcpu as a table (no --folded, --flame, --pprof) */
	int locks_text;		/* derived: --locks as a table (likewise) */
	int delay;		/* derived: the stacks are waits (--offcpu or --locks with --folded,
				   --flame or --pprof), weighing microseconds: pprof's delay types */
	int symbols, header, need_elf;	/* derived by plan() in opreport.c */
	const char *flame;	/* --flame FILE.svg */
	const char *pprof;	/* --pprof FILE.pb.gz */
	const char *perf_data;	/* --perf-data FILE */
	const char *timeline;	/* --timeline FILE.html: per core over time (export/timeline.c) */
	const char *trace;	/* --trace FILE.json: the same as Chrome trace events */
	int no_buildid_cache;	/* --no-buildid-cache: leave perf's build-id cache alone */
	/* the filters, as given (model/filter.c parses them); NULL or 0 when not */
	const char *f_tid, *f_comm, *f_cores, *f_time, *f_focus, *f_ignore;
	int no_idle;
	int no_inline;	/* --no-inline: inlined code counted in the function it was inlined
			   into (model/symbols.c), as valgrind and perf report --no-inline */
	const char *annotate;	/* --annotate FUNC */
	int annotated;		/* derived: annotate given (its section's flag) */
	int force_kernel;	/* --force-kernel: -k ELF even when it is another kernel's */
	const char *add_kernel;	/* --add-kernel ELF: keep it in the store and cache, and exit */
	int argc;		/* the command line, for perf.data's cmdline feature */
	char **argv;
};

#endif
