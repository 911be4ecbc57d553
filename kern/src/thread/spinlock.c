/*
 * Spinlocks with interrupts off, and the per-core interrupt-off nesting count under them.
 *
 * irq_push/irq_pop are like irq_save/irq_restore except that they are matched: the first
 * push on a core remembers whether interrupts were on, the last pop restores that. So
 * spin_lock(a); spin_lock(b); spin_unlock(b) keeps interrupts off until a is released,
 * whatever order the locks are released in. The count is per core, not per thread: this is
 * sound because a thread never sleeps or switches while holding a spinlock, and threads
 * are pinned (a thread never resumes on another core's count).
 *
 * A held lock records its holder core and the pc of the spin_lock caller. Acquiring a lock
 * this core already holds (which would spin forever) and releasing one this core does not
 * hold panic at once, naming the lock and where it was taken.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "schedev.h"
#include "thread.h"

struct cpu_irqstate {
	int ncli;		/* spinlocks (pushes) held on this core */
	unsigned long saved;	/* interrupt state before the outermost push */
} __aligned(CACHELINE);

static struct cpu_irqstate irqstate[MAX_CPUS];

static struct cpu_irqstate *this_irqstate(void)
{
	int c = core_id();

	return &irqstate[c >= 0 && c < MAX_CPUS ? c : 0];
}

/* Disable interrupts, counting: any context. */
static void irq_push(void)
{
	unsigned long flags = irq_save();
	struct cpu_irqstate *s = this_irqstate();

	if (s->ncli++ == 0)
		s->saved = flags;
}

/* Undo one irq_push; the last one restores the interrupt state the first one saw. */
static void irq_pop(void)
{
	struct cpu_irqstate *s = this_irqstate();

	if (irq_enabled())
		panic("irq_pop: interrupts enabled inside a spinlock section (core %d)", core_id());
	if (s->ncli <= 0)
		panic("irq_pop: unbalanced (core %d)", core_id());
	if (--s->ncli == 0)
		irq_restore(s->saved);
}

void spinlock_init(struct spinlock *l, const char *name)
{
	l->locked = 0;
	l->cpu = -1;
	l->name = name;
	l->pc = 0;
}

/* Call with interrupts off, so the answer cannot change under the caller. */
bool spin_holding(struct spinlock *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&l->cpu, __ATOMIC_RELAXED) == core_id();
}

static void spin_note_holder(struct spinlock *l, uintptr_t pc)
{
	__atomic_store_n(&l->cpu, core_id(), __ATOMIC_RELAXED);
	l->pc = pc;
}

static __noreturn void spin_double_acquire(struct spinlock *l, uintptr_t pc)
{
	panic("spin_lock: core %d acquires %s again at %p (it took it at %p)", core_id(),
	      l->name ? l->name : "?", (void *)pc, (void *)l->pc);
}

/*
 * l was taken: spin until it is ours. A spin of ops->spin_min TSC ticks or longer is told
 * to the session (schedev.h), with l held: the holder is the core that held it first.
 */
static __attribute__((noinline)) void spin_contended(struct spinlock *l)
{
	int32_t holder = __atomic_load_n(&l->cpu, __ATOMIC_RELAXED);	/* -1: gone already */
	uint64_t start = tsc_read();
	const struct schedev_ops *ops;
	struct thread *me;

	do {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
	} while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
	if (likely(!(ops = schedev())))
		return;
	me = current();
	struct schedev_lock lk = {
		.kind = OPF_LK_SPIN, .tid = (uint32_t)thread_tid(me),
		.holder = (holder < 0 ? OPF_HOLDER_NONE : (uint32_t)holder) | OPF_HOLDER_CORE,
		.lock = l, .name = l->name,
		.start = start, .tsc = tsc_read(), .fp = (uintptr_t)__builtin_frame_address(0),
	};
	if (me)
		thread_stack(me, &lk.lo, &lk.hi);
	if (lk.tsc - start >= ops->spin_min)
		ops->on_lock(&lk);
}

__attribute__((noinline)) void spin_lock(struct spinlock *l)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);

	irq_push();
	if (spin_holding(l))
		spin_double_acquire(l, pc);
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		spin_contended(l);
	spin_note_holder(l, pc);
}

/*
 * Never spins. A lock this core already holds is reported as busy (false) rather than
 * panicking: trylock is how a context that may have interrupted the holder asks.
 */
__attribute__((noinline)) bool spin_trylock(struct spinlock *l)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);

	irq_push();
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		irq_pop();
		return false;
	}
	spin_note_holder(l, pc);
	return true;
}

void spin_unlock(struct spinlock *l)
{
	if (!spin_holding(l))
		panic("spin_unlock: core %d releases %s, held by core %d (taken at %p)", core_id(),
		      l->name ? l->name : "?", (int)READ_ONCE(l->cpu), (void *)l->pc);
	l->pc = 0;
	__atomic_store_n(&l->cpu, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	irq_pop();
}
