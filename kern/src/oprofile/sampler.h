/*
 * The sampling source (sampler.c), for the glue (glue.c), which hands these to the
 * profiler as struct oprof_hooks. Kernel-only.
 */
#ifndef OPROF_SAMPLER_H
#define OPROF_SAMPLER_H

#include "kernel.h"

/* 0, -ENODEV or -ENOMEM; spread and seed: the jitter (jitter.h) */
int sampler_start(uint32_t hz, uint32_t source, uint32_t spread, uint64_t seed);
void sampler_stop(void);
void sampler_set_rate(int core, uint32_t hz);	/* on core, inside its tick */
bool sampler_by_nmi(void);		/* this session samples by NMI */
uint32_t sampler_default_source(void);	/* NMI where the machine has a route for it */

#endif
