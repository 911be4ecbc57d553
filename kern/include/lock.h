/*
 * Spinlocks. spin_lock() saves the interrupt flag and disables interrupts (counted, so
 * nested locks restore correctly: see irq_save/irq_restore in arch.h), so a lock may be
 * shared with interrupt handlers. A lock records its holder core and the caller's pc;
 * acquiring a lock this core already holds, or releasing one it does not, panics.
 *
 * Never sleep holding a spinlock. For long critical sections use struct qlock (qlock.h).
 */
#ifndef LOCK_H
#define LOCK_H

#include "kernel.h"

struct spinlock {
	uint32_t locked;	/* 0 free, 1 held; changed only with atomics */
	int32_t cpu;		/* holder core, -1 when free */
	const char *name;	/* for panics */
	uintptr_t pc;		/* where the holder took it */
};

#define SPINLOCK_INIT(n) { .locked = 0, .cpu = -1, .name = (n), .pc = 0 }

void spinlock_init(struct spinlock *l, const char *name);
void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);
bool spin_trylock(struct spinlock *l);
bool spin_holding(struct spinlock *l);	/* held by this core */

#endif
