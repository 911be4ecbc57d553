/*
 * Per-core data. Each core finds its own struct cpu through this_cpu() (the arch keeps a
 * pointer to it in a register: GS base on x86), so per-core fields need no lock when
 * touched by their own core with interrupts off. Other cores may read fields marked
 * "shared" with READ_ONCE.
 */
#ifndef CPU_H
#define CPU_H

#include "arch.h"
#include "kernel.h"

struct thread;
struct alarm;

struct cpu {
	struct cpu *self;		/* must be first: the arch reads it at offset 0 */
	int id;				/* dense core id, 0 = boot core */
	uint32_t apic_id;		/* shared */
	bool online;			/* shared: set once the core runs ap_main's tail */
	struct thread *cur;		/* running thread */
	struct thread *idle;		/* this core's idle thread */
	uint64_t ticks;			/* shared: scheduler ticks on this core */
	uintptr_t irq_stack_lo;		/* bounds of the stack in use before threads */
	uintptr_t irq_stack_hi;
	void *sched;			/* scheduler's per-core state (sched.c) */
	struct alarm *alarms;		/* armed alarms, sorted by deadline (alarm.c) */
	struct alarm *fast;		/* the fast periodic alarm armed here, or NULL (alarm.c) */
	uint64_t timer_deadline;	/* TSC the timer is programmed for, 0 none */
	uint64_t irqs;			/* shared: interrupts taken */
	bool in_idle;			/* halted in the idle loop (for profiles) */
} __aligned(CACHELINE);

extern struct cpu cpus[MAX_CPUS];

struct cpu *this_cpu(void);

#endif
