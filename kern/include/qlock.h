/*
 * Sleeping lock (thread context only): a thread that finds it held sleeps until it is
 * free. Use for long critical sections (file systems, the 9P client, control paths).
 */
#ifndef QLOCK_H
#define QLOCK_H

#include "rendez.h"

struct thread;
struct qlock {
	struct spinlock lk;	/* protects owner */
	struct thread *owner;	/* NULL when free */
	uint32_t owner_tid;	/* owner's tid while held: what a waiter's switch-out names
				   (read without lk, relaxed: never a thread pointer that may
				   be gone by then) */
	struct rendez r;	/* waiters sleep here until owner is NULL */
	const char *name;	/* for contention events (schedev.h) */
};

void qlock_init(struct qlock *q);	/* named "qlock" */
void qlock_init_named(struct qlock *q, const char *name);
void qlock(struct qlock *q);
void qunlock(struct qlock *q);
bool qholding(struct qlock *q);

#endif
