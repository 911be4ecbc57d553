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
	/* optional, in the same thread after the last step: a line for run's report about
	 * what state measured (note, n bytes); it may still use state's resources */
	void (*done)(void *state, char *note, size_t n);
	const char *about;		/* what it does, for `run`'s list of workloads */
};

extern const struct workload workloads[];	/* ends with a NULL name */
const struct workload *workload_find(const char *name);

/*
 * The hot functions, named in profiles: global (not static), so that no compiler clone
 * renames them and tests and the peer harness (../shared/peer) find them by name.
 */
uint64_t spin_loop(uint64_t n);
#define MN 48		/* matrix: side of the square matrices */
uint32_t matrix_inner(const uint32_t *row, const uint32_t (*b)[MN], int col);
struct matrix_state;
void matrix_multiply(struct matrix_state *m);
uint64_t fib(int n);
void memcpy_copy(uint8_t *buf);
uint64_t irqoff_spin(uint64_t n);	/* runs with interrupts off */
uint64_t busy_us(uint64_t us);		/* computes for us microseconds */
void duty_compute(void);		/* duty's on-CPU part */
void lockpair_hold(void);		/* lockpair's critical section */
void twonap_a(void);			/* twonap's even steps sleep here */
void twonap_b(void);			/* ... and its odd steps here */
/* split (split.c): two branch-free leaves called 1 : SPLIT_LIGHT_CALLS, a known answer */
#define SPLIT_LIGHT_CALLS	8
#define SPLIT_ROUNDS		1000	/* rounds per step */
uint64_t split_heavy(uint64_t x);
uint64_t split_light(uint64_t x);
uint64_t split_step(void *st);
extern volatile uint64_t split_sink;
/* lockcost.c: the scheduler's and the uncontended locks' own paths (tests/bench/schedcost.sh) */
uint64_t yield_step(void *st);
uint64_t pingpong_step(void *st);
void *qlockfree_setup(void);
uint64_t qlockfree_step(void *st);
void *spinfree_setup(void);
uint64_t spinfree_step(void *st);
__noreturn void lockup_spin(void);	/* interrupts off, forever */
struct iowrite;
/* iowrite.c: rewrites a file on the 9P share, timing its own waits for the server */
void *iowrite_setup(void);
void iowrite_put(struct iowrite *w);
uint64_t iowrite_step(void *st);
void iowrite_done(void *st, char *note, size_t n);
/* wakewait.c: known answers for wake-ups (runnable time; a thread woken as a session stops) */
void *wakewait_setup(void);
uint64_t wakewait_step(void *st);
void wakewait_done(void *st, char *note, size_t n);
uint64_t wakehold_step(void *st);
uint64_t wakelate_step(void *st);

#endif
