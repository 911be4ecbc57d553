/*
 * sched_offcpu.h: off-CPU and lock-wait stacks for the stack-based reports (sched_offcpu.c),
 * called by opreport.c for --offcpu or --locks with --folded, --flame or --pprof.
 */
#ifndef OPREPORT_SCHED_OFFCPU_H
#define OPREPORT_SCHED_OFFCPU_H

#include "ingest/profile.h"
#include "model/symbols.h"

/*
 * After sched_analyze, before the symbols resolve the stacks: replace the profile's stacks
 * by its stretches off a CPU, each weighing its microseconds, rooted in a synthetic frame
 * naming the reason ("[sleep]", "[qlock lockpair]"). --locks likewise (locks true): each
 * contended acquisition, the waiter's stack where it asked, weighing its wait, rooted in
 * "[qlock NAME]" or "[spin NAME]". 0 or -1 (memory).
 */
int sched_offcpu_stacks(struct profile *p, int locks);
/* Right after the symbols resolved the stacks: name those roots. 0 or -1 (memory). */
int sched_offcpu_roots(struct profile *p, struct symbols *sym);

#endif
