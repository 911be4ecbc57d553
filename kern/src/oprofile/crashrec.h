/*
 * What the crash recorder (crashrec.c), its dump (crashdump.c) and the watchdog
 * (watchdog.c) share. Nothing else includes this.
 */
#ifndef OPROF_CRASHREC_H
#define OPROF_CRASHREC_H

#include "kernel.h"
#include "arch.h"
#include "abi/oprofile.h"
#include "crash.h"
#include "encode.h"

#define BLK_HDR		((uint32_t)sizeof(struct opf_block))

/* One core's window: written only by that core's NMI (crash_nmi), read by the dump. */
struct crec {
	uint8_t *mem;		/* CRASH_NBLOCKS blocks of crash.bsize bytes */
	uint32_t cur;		/* block being filled */
	uint32_t wp;		/* bytes of cur in use, its header included */
	uint32_t samples;	/* OPF_SAMPLE records in cur */
	uint32_t nsealed;	/* sealed blocks before cur still in the window */
	uint64_t seq;		/* cur's block sequence number */
	uint64_t next;		/* TSC from which the next sample is due */
	uint64_t taken;		/* samples recorded since start */
	uint64_t overwritten;	/* of those, in blocks reused for newer ones */
} __aligned(CACHELINE);

struct crash_state {
	struct crash_cfg cfg;
	bool host;		/* the host gave options: it collects dumps */
	bool channel;		/* the crash port answers */
	bool recording;		/* windows exist and crash_nmi fills them */
	bool boot_panic;	/* the host asked for a panic before the recorder starts */
	uint32_t bsize;		/* bytes per block */
	uint64_t period;	/* TSC ticks between samples */
	uint64_t boot_tsc;	/* when crash_init ran */
	uint64_t start_tsc;	/* when the recorder (re)started */
	uint64_t start_ns;
};

extern struct crash_state crash;
extern struct crec crecs[MAX_CPUS];

/* Any context: tf's stack, pc first, then up to CRASH_DEPTH callers (crashdump.c). */
uint16_t crash_walk(const struct trapframe *tf, uint64_t *pc, uint64_t *frames);

static inline uint8_t *crec_block(const struct crec *r, uint32_t i)
{
	return r->mem + (size_t)i * crash.bsize;
}

#endif
