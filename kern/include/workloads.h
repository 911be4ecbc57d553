/*
 * Built-in workloads (workloads.c), run by the shell's `run` command on chosen cores.
 */
#ifndef WORKLOADS_H
#define WORKLOADS_H

#include "kernel.h"

struct workload {
	const char *name;
	const char *unit;		/* what step's return value counts */
	void *(*setup)(void);		/* per-thread state (kfree'd after), or NULL */
	uint64_t (*step)(void *state);	/* one unit of work; returns units done */
};

extern const struct workload workloads[];	/* ends with a NULL name */
const struct workload *workload_find(const char *name);

#endif
