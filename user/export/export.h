/*
 * export.h: the files a report writes for other tools, each from a ctx (model/ctx.h) to
 * path, called by opreport.c's files[] table after the text sections (perf.data has its own
 * header, export/perf/perfdata.h). Each returns 0, or -1 (errno tells why when it was the
 * file). --folded is here too: the folded stacks flame graph tools read, printed from the
 * same merged list as the SVG.
 */
#ifndef OPREPORT_EXPORT_H
#define OPREPORT_EXPORT_H

#include <stdio.h>

#include "model/ctx.h"

int report_folded(const struct ctx *c, FILE *out);	/* flame.c: to out, a text section */
int report_flame(const struct ctx *c, const char *path);	/* flame.c */
/* --diff --flame: the new profile's graph coloured by change from base. */
int report_diff_flame(const struct ctx *base, const struct ctx *c, const char *path);
int report_pprof(const struct ctx *c, const char *path);	/* pprof.c */
int report_timeline(const struct ctx *c, const char *path);	/* timeline.c */
int report_trace(const struct ctx *c, const char *path);	/* trace_json.c */

#endif
