/*
 * perfdata.h: --perf-data, the profile as a perf.data file (Linux perf's PERFILE2 format;
 * perfdata.c and the parts beside it in export/perf/), for opreport.c: collect the samples
 * while the stream is read, write the file after the text.
 */
#ifndef OPREPORT_PERFDATA_H
#define OPREPORT_PERFDATA_H

#include "ingest/profile.h"
#include "model/ctx.h"

/* Keep every reported sample of p for report_perf (installs p's hook before the parse);
 * NULL when no temporary file. */
struct perf_samples *perf_collect(struct profile *p);
void perf_free(struct perf_samples *ps);

/* --perf-data FILE: 0, or -1 (errno tells why when it was the file). */
int report_perf(const struct ctx *c, const char *path);

#endif
