/*
 * stacks.h: the table of unique stacks, filled by profile.c sample by sample, resolved by
 * symbols.c and read by every report. Memory grows with distinct (thread, pc, frames) tuples,
 * never with the number of samples; each entry carries its per-core sample counts.
 */
#ifndef OPREPORT_STACKS_H
#define OPREPORT_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stack {
	uint64_t total;		/* samples with exactly this key */
	uint64_t weight;	/* the sampling periods they stand for (profile.c weighs them) */
	uint64_t weight2;	/* the sum of each sample's weight squared (for a share's
				   half-width: model/noise.h) */
	uint32_t tid;
	uint16_t naddr;		/* 1 + nframes: addr[0] is the pc, then return addresses */
	uint16_t nfids;		/* entries in fids */
	uint32_t *fids;		/* the functions on the stack, leaf first (symbols.c fills it) */
	uint32_t cut;		/* 1: the backtrace was cut short (its root is not the real one) */
	uint32_t run;		/* the run (session) its samples are of: part of the key, so that
				   each run's shares can be told apart (--diff's noise) */
	uint64_t addr[];	/* naddr addresses, then ncores per-core counts, then ncores
				   per-core weights */
};

static inline uint64_t *stack_cores(struct stack *s)
{
	return s->addr + s->naddr;
}

struct stack_slot {
	uint64_t hash;
	struct stack *s;
};

/* A sample hashed and waiting in the batch (frames point into the caller's buffer). */
struct stack_pending {
	uint64_t hash;
	uint64_t pc;
	const uint8_t *frames;
	uint32_t tid;
	uint16_t core;
	uint16_t nframes;
	uint32_t cut;
	uint32_t run;
	uint64_t weight;
};

#define STACK_BATCH	32

struct stacks {
	uint32_t ncores;
	uint32_t run;		/* the run samples added now belong to (profile.c: the session) */
	struct stack_pending batch[STACK_BATCH];	/* prefetch pipeline, see stacks_add */
	uint32_t nbatch;
	struct stack_slot *tab;	/* open addressing, power-of-two size */
	size_t mask;
	size_t n;		/* unique stacks */
	struct stack **list;	/* insertion order, for deterministic iteration */
	size_t listcap;
	uint8_t *arena;		/* bump allocator for entries */
	size_t arena_left;
	void **chunks;		/* every arena chunk, to free */
	size_t nchunks;
};

/* Set up an empty table for ncores cores. Returns 0 or -1 (out of memory). */
int stacks_init(struct stacks *t, uint32_t ncores);

/*
 * Count one sample on core (< ncores) standing for weight periods; cut (0 or 1) is part of
 * the key. frames holds nframes
 * unaligned little-endian uint64s.
 * Samples are batched so that table and entry cache misses overlap: frames must stay valid
 * until the next stacks_flush, which the caller must call before reusing that memory and
 * before reading the table. Returns 0 or -1 (out of memory).
 */
int stacks_add(struct stacks *t, uint32_t tid, uint16_t core, uint32_t cut, uint64_t weight,
	       uint64_t pc, const uint8_t *frames, uint16_t nframes);

/* Count every batched sample. Returns 0 or -1 (out of memory). */
int stacks_flush(struct stacks *t);

void stacks_free(struct stacks *t);

#endif
