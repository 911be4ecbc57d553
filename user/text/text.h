/*
 * text.h: the text sections of a report, each written to out from a ctx (model/ctx.h) and
 * called by opreport.c's sections[] table in the order they print (header, symbols,
 * threads, lines, call graph, folded, the scheduler views), --stats before them and --diff
 * instead of them. Each returns 0, or -1 when out of memory.
 */
#ifndef OPREPORT_TEXT_H
#define OPREPORT_TEXT_H

#include <stdio.h>

#include "model/ctx.h"

int report_header(const struct ctx *c, FILE *out);	/* header.c */
/* Its lines saying which filters shaped the report and what --no-idle left out (nothing
 * without filters): of the samples, or (sched) of the scheduler views' threads. */
void report_filter_lines(const struct ctx *c, int sched, FILE *out);
/* Its lines for a crash dump (crash_header.c; nothing for another stream). */
void crash_header(const struct ctx *c, FILE *out);
int report_symbols(const struct ctx *c, FILE *out);	/* flat.c */
int report_threads(const struct ctx *c, FILE *out);	/* flat.c */
int report_lines(const struct ctx *c, FILE *out);	/* lines.c */
/* --annotate FUNC (annotate.c): its source lines and instructions with their samples; the
 * caller checked that the ELF has a function symbol of that name. */
int report_annotate(const struct ctx *c, FILE *out);
int report_callgraph(const struct ctx *c, FILE *out);	/* callgraph.c */
int report_wall(const struct ctx *c, FILE *out);	/* sched_views.c */
int report_offcpu(const struct ctx *c, FILE *out);
int report_locks(const struct ctx *c, FILE *out);	/* sched_locks.c */
/* The views' helpers (sched_views.c): the function at return address a (frame) or starting
 * at a; up to max frames of a stack on one line, the scheduler's own left out. */
const char *sched_fname(const struct ctx *c, uint64_t a, int frame);
void sched_print_stack(const struct ctx *c, const uint64_t *fr, unsigned n, int max, FILE *out);
/* A "WARNING:" line when part of session si's core time is unknown (its events have gaps:
 * model/sched_gaps.h), above every view of its events. */
void sched_unknown_line(const struct sched_sess *s, uint32_t si, FILE *out);

/* --stats (stats.c): returns 0 when conservation holds, 3 if not, 4 when the stream is
 * incomplete and what it holds adds up; -1 when out of memory. */
int report_stats(const struct ctx *c, FILE *out);
/* Its scheduler events' part (sched_stats.c): the events' accounting and the time checks;
 * 0, or 3 when they do not add up. */
int sched_stats(const struct profile *p, FILE *out);

/* --diff (diff.c): the change per function from base to c (both aggregated over one symbol
 * table). */
int report_diff(const struct ctx *base, const struct ctx *c, FILE *out);

#endif
