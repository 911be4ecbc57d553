/*
 * Kernel threads and the per-core scheduler.
 *
 * Every thread is pinned to the core it was created on. Each core has a FIFO run queue
 * protected by a raw lock (rq->lock) that is held, with interrupts off, across the
 * context switch: the thread that switches away takes it and the thread that resumes on
 * that core releases it (xv6's discipline, per core). Because the interrupt flag to
 * restore lives on each switching thread's own stack (irq_save/irq_restore around the
 * switch), no per-core interrupt state has to be carried across switches. A context
 * switch only happens when this core holds no counted spinlock.
 *
 * Sleeping: a thread marks itself T_SLEEPING under its own core's rq lock and switches;
 * thread_wake (any core, any context) makes it runnable under the same lock and kicks the
 * core out of hlt with an IPI. Spurious wakeups are allowed: sleepers recheck.
 *
 * A dead thread's stack is freed only after the switch away from it, by the next thread
 * on that core (finish_switch): then the joiner is woken, or a detached thread freed.
 */
#include "alarm.h"
#include "cpu.h"
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "page.h"
#include "rendez.h"
#include "sched.h"
#include "schedev.h"

#define STACK_PAGES	4

struct thread {
	int tid;			/* 0 for idle threads */
	int core;
	uintptr_t stack_lo, stack_hi;	/* the stack it runs on now (thread.h: thread_head) */
	enum thread_state state;	/* changed under rq(core)->lock */
	char name[THREAD_NAME_LEN];
	uintptr_t rsp;			/* saved stack pointer while switched out */
	uint8_t *stack;			/* STACK_PAGES pages */
	thread_fn fn;
	void *arg;
	struct thread *rq_next;		/* run queue link */
	struct thread *rnext;		/* rendez waiter link */
	struct rendez *sleeping_on;	/* rendez it waits on, for interrupts */
	struct thread *all_next;	/* all threads, under all_lock */
	uint64_t cpu_tsc;		/* TSC ticks spent running */
	uint64_t run_start;		/* TSC when it last started running */
	bool detached;
	bool gone;			/* dead and off its stack: joinable */
	bool intr;			/* pending interrupt (Ctrl-C) */
	struct rendez exited;		/* joiner waits here for gone */
	struct alarm sleep_alarm;	/* thread_sleep_us and timeouts */
	struct fstate *fs;		/* descriptors and cwd (ns.c) */
	struct schedev_why why;		/* what it is about to wait for (schedev.c) */
	struct schedev_why rwhy;	/* ... unless set: a rendez wait (sched_sleep_release) */
	struct schedev_wake wk;		/* its wake-up, until a switch writes it (schedev.h) */
};

struct runq {
	uint32_t lock;			/* raw lock; see the top of this file */
	struct thread *head, *tail;
	struct thread *prev;		/* thread switched away from, for finish_switch */
	uint64_t sw_tsc;		/* when the last switch happened, for its event */
	bool preempting;		/* the thread yielding is preempted (sched_preempt_irq) */
	bool need_resched;		/* slice over: switch at the next chance */
	struct alarm tick;
	struct thread idle;
} __aligned(CACHELINE);

static struct runq runqs[MAX_CPUS];
static struct spinlock all_lock = SPINLOCK_INIT("threads");
static struct thread *all_threads;
static int next_tid = 1;
static void (*create_hook)(struct thread *t);


static struct runq *rq_of(int core) { return &runqs[core]; }

static void rq_lock(struct runq *rq)
{
	while (__atomic_exchange_n(&rq->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&rq->lock, __ATOMIC_RELAXED))
			cpu_relax();
}

static void rq_unlock(struct runq *rq) { __atomic_store_n(&rq->lock, 0, __ATOMIC_RELEASE); }

static void rq_push(struct runq *rq, struct thread *t)
{
	t->rq_next = NULL;
	if (rq->tail)
		rq->tail->rq_next = t;
	else
		rq->head = t;
	rq->tail = t;
}

static struct thread *rq_pop(struct runq *rq)
{
	struct thread *t = rq->head;

	if (t) {
		rq->head = t->rq_next;
		if (!rq->head)
			rq->tail = NULL;
	}
	return t;
}

struct thread *current(void) { return this_cpu()->cur; }

/* After a switch, on the new thread, rq lock released: deal with the thread we left. */
static void thread_free(struct thread *t)
{
	pages_free(t->stack, STACK_PAGES);
	kfree(t);
}

static void finish_switch(struct thread *prev)
{
	if (!prev || prev->state != T_DEAD)
		return;
	if (prev->detached) {
		thread_free(prev);
		return;
	}
	/* the joiner frees prev as soon as it sees gone: set it and wake under the lock */
	rendez_wakeup_set(&prev->exited, &prev->gone);
}

/*
 * Switch to the next runnable thread of this core (or its idle thread). Interrupts off,
 * rq lock held; current's state already set. Returns with the lock released by whoever
 * switched back to us, and returns us: the thread that runs when it returns.
 */
static struct thread *switch_locked(struct runq *rq)
{
	struct cpu *c = this_cpu();
	struct thread *prev = c->cur, *next;
	uint64_t now;

	rq->need_resched = false;
	if (prev->state == T_RUNNING && prev != &rq->idle) {
		if (!rq->head)
			return prev;	/* nothing else to run: keep going */
		prev->state = T_RUNNABLE;
		rq_push(rq, prev);
	}
	next = rq_pop(rq);
	if (!next)
		next = &rq->idle;
	if (next == prev) {
		prev->state = T_RUNNING;
		return prev;
	}
	now = tsc_read();
	prev->cpu_tsc += now - prev->run_start;
	next->run_start = now;
	next->state = T_RUNNING;
	rq->prev = prev;
	rq->sw_tsc = now;
	c->cur = next;
	swtch(&prev->rsp, next->rsp);
	return prev;		/* switched back to: prev is us again */
}

/*
 * Why prev stopped running, from its state and what it said it waits for. rq lock held: a
 * waker on another core may change prev's state as soon as it is released.
 */
static unsigned switch_why(const struct thread *prev, const struct runq *rq)
{
	if (prev->state == T_DEAD)
		return OPF_WHY_EXIT;
	if (prev->state != T_SLEEPING)	/* still runnable, whatever it was about to wait for */
		return rq->preempting ? OPF_WHY_PREEMPT : OPF_WHY_YIELD;
	return prev->why.set ? prev->why.why : OPF_WHY_RENDEZ;
}

/*
 * On the thread the core switched to, interrupts off, rq lock released, prev not yet
 * freed: tell the session's hook (schedev.h). prev is off every core (threads are pinned
 * and this core runs us), so its stack can be walked from the frame swtch saved: a
 * blocking switch hands it to on_block, the others go to on_switch without it.
 */
static __noinline void switch_event(const struct schedev_ops *ops, struct runq *rq,
				    struct thread *prev, unsigned why, struct thread *next)
{
	struct schedev_switch sw;	/* field by field: fp, lo, hi only where on_block reads them */
	/* a wake-up for the hook to write: 0 or 1 (a comparison), the hook tables' index */
	unsigned woke = next->wk.gen == ops->gen;

	sw.prev_tid = (uint32_t)prev->tid;
	sw.next_tid = (uint32_t)next->tid;
	sw.core = (uint16_t)next->core;
	sw.why = (uint16_t)why;
	sw.tsc = rq->sw_tsc;
	sw.prev_cpu = prev->cpu_tsc;
	sw.w = &prev->why;
	sw.wk = &next->wk;
	if (opf_why_waits(why)) {
		if (!prev->why.set)
			sw.w = &prev->rwhy;
		sw.fp = arch_switched_fp(prev->rsp);
		thread_stack(prev, &sw.lo, &sw.hi);
		ops->on_block[woke](&sw);
		return;
	}
	ops->on_switch[woke](&sw);
}

/* After a switch, on the new thread (me), rq lock held: release it, finish the old one. */
static void switched(struct runq *rq, struct thread *me)
{
	struct thread *prev = rq->prev;
	const struct schedev_ops *ops = schedev();
	unsigned why = unlikely(ops) && prev ? switch_why(prev, rq) : 0;

	rq->prev = NULL;
	rq->preempting = false;
	rq_unlock(rq);
	if (unlikely(ops) && prev)
		switch_event(ops, rq, prev, why, me);
	finish_switch(prev);
}

/*
 * rq locked, interrupts off: switch, and once this thread runs again, release the lock and
 * deal with the thread the core left to come back here.
 */
static void switch_and_finish(struct runq *rq)
{
	switched(rq, switch_locked(rq));
}

/* Give the core to the next runnable thread, if any. Thread context. */
void yield(void)
{
	unsigned long f = irq_save();
	struct runq *rq = rq_of(core_id());

	rq_lock(rq);
	switch_and_finish(rq);
	irq_restore(f);
}

/* Every timer interrupt: the core's run queue through its struct cpu (no core_id chain). */
void sched_preempt_irq(struct cpu *c, bool irq_was_on)
{
	struct runq *rq;

	if (!irq_was_on)
		return;
	rq = c->sched;
	if (READ_ONCE(rq->need_resched)) {
		rq->preempting = true;	/* interrupts are off: nothing else yields here */
		yield();
	}
}

void sched_sleep_release(struct spinlock *lk, const void *obj, const void *site)
{
	struct runq *rq = rq_of(core_id());
	struct thread *t = current();

	t->rwhy.obj = obj;	/* the reason unless one was said: two stores, no call */
	t->rwhy.site = site;
	rq_lock(rq);
	t->state = T_SLEEPING;
	spin_unlock(lk);
	switch_and_finish(rq);
}

static void ipi_wake(int core);

/*
 * Interrupts off, t's rq lock held, t not yet queued: leave who woke t, where and when, for
 * the switch that resumes it to write (schedev.h). The hooks are looked up under the lock:
 * once the session's stop has unregistered them and quieted every core, no waker stores.
 */
static inline void wake_note(struct thread *t)
{
	const struct schedev_ops *ops = schedev();

	if (unlikely(ops)) {
		struct cpu *c = this_cpu();

		t->wk.tsc = tsc_read();
		t->wk.waker = c->cur ? (uint32_t)c->cur->tid : 0;
		t->wk.core = (uint16_t)c->id;
		t->wk.gen = ops->gen;
	}
}

void thread_wake(struct thread *t)
{
	struct runq *rq = rq_of(t->core);
	unsigned long f = irq_save();
	bool woke = false;

	rq_lock(rq);
	if (t->state == T_SLEEPING) {
		t->state = T_RUNNABLE;
		wake_note(t);
		rq_push(rq, t);
		woke = true;
	}
	rq_unlock(rq);
	irq_restore(f);
	/* pairs with the fence in idle_loop: either it sees our push or we see it idle */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (woke && t->core != core_id() && READ_ONCE(cpus[t->core].in_idle))
		ipi_wake(t->core);
}

/* The first code of every new thread: the switch into it left the rq lock held. */
static __noreturn void thread_entry(void)
{
	struct thread *t = current();

	switched(rq_of(core_id()), t);
	irq_enable();
	t->fn(t->arg);
	kthread_exit();
}

static void sleep_alarm_fire(struct alarm *a, struct trapframe *tf)
{
	(void)tf;
	thread_wake(a->arg);
}

struct thread *kthread_create(const char *name, int core, thread_fn fn, void *arg)
{
	struct thread *t;

	if (core < 0 || core >= ncpus())
		return NULL;
	t = kzmalloc(sizeof(*t));
	if (!t)
		return NULL;
	t->stack = pages_alloc(STACK_PAGES);
	if (!t->stack) {
		kfree(t);
		return NULL;
	}
	t->fs = fstate_new(current() ? current()->fs : NULL);
	if (!t->fs) {
		pages_free(t->stack, STACK_PAGES);
		kfree(t);
		return NULL;
	}
	strlcpy(t->name, name, sizeof(t->name));
	t->core = core;
	t->fn = fn;
	t->arg = arg;
	t->state = T_SLEEPING;
	t->rwhy = (struct schedev_why){ .set = 1, .why = OPF_WHY_RENDEZ };
	rendez_init(&t->exited);
	alarm_init(&t->sleep_alarm, sleep_alarm_fire, t);
	thread_set_stack(t, 0, 0);
	t->rsp = arch_thread_stack_init((uintptr_t)t->stack + STACK_PAGES * PGSIZE, thread_entry);
	spin_lock(&all_lock);
	t->tid = next_tid++;
	t->all_next = all_threads;
	all_threads = t;
	spin_unlock(&all_lock);
	if (create_hook)
		create_hook(t);
	thread_wake(t);
	return t;
}

static void unlink_thread(struct thread *t)
{
	struct thread **pp;

	spin_lock(&all_lock);
	schedev_thread_gone(t);	/* a wake-up still pending in it is kept for the drain */
	for (pp = &all_threads; *pp; pp = &(*pp)->all_next)
		if (*pp == t) {
			*pp = t->all_next;
			break;
		}
	spin_unlock(&all_lock);
}

__noreturn void kthread_exit(void)
{
	struct thread *t = current();
	struct runq *rq;

	unlink_thread(t);
	fstate_free(t->fs);	/* closes its files while it can still sleep */
	t->fs = NULL;
	irq_disable();
	rq = rq_of(core_id());
	rq_lock(rq);
	t->state = T_DEAD;
	switch_locked(rq);
	panic("dead thread %d resumed", t->tid);
}

static bool thread_gone(void *arg) { return READ_ONCE(((struct thread *)arg)->gone); }

int kthread_join(struct thread *t)
{
	rendez_sleep(&t->exited, thread_gone, t);
	thread_free(t);
	return 0;
}

/* Must be called before t can exit (e.g. right after create, by its creator). */
void kthread_detach(struct thread *t)
{
	WRITE_ONCE(t->detached, true);
}

/* thread.h reads these inline through struct thread_head */
_Static_assert(__builtin_offsetof(struct thread, tid) == __builtin_offsetof(struct thread_head, tid)
	       && __builtin_offsetof(struct thread, core) == __builtin_offsetof(struct thread_head, core)
	       && __builtin_offsetof(struct thread, stack_lo) ==
		  __builtin_offsetof(struct thread_head, stack_lo)
	       && __builtin_offsetof(struct thread, stack_hi) ==
		  __builtin_offsetof(struct thread_head, stack_hi), "struct thread_head is its head");

const char *thread_name(struct thread *t) { return t->name; }
int thread_core(struct thread *t) { return t->core; }
enum thread_state thread_state(struct thread *t) { return READ_ONCE(t->state); }
struct thread **thread_rnext(struct thread *t) { return &t->rnext; }
struct schedev_why *thread_why(struct thread *t) { return &t->why; }
struct schedev_wake *thread_wake_slot(struct thread *t) { return &t->wk; }
struct rendez **thread_sleeping_on(struct thread *t) { return &t->sleeping_on; }

/* Running time including the current slice if t is running now. */
uint64_t thread_cpu_tsc(struct thread *t)
{
	uint64_t v = READ_ONCE(t->cpu_tsc);

	if (READ_ONCE(t->state) == T_RUNNING)
		v += tsc_read() - READ_ONCE(t->run_start);
	return v;
}

/* t's own stack: its pages, or for an idle thread the core's boot stack. */
static void own_stack(struct thread *t, uintptr_t *lo, uintptr_t *hi)
{
	if (t->stack) {
		*lo = (uintptr_t)t->stack;
		*hi = (uintptr_t)t->stack + STACK_PAGES * PGSIZE;
	} else {
		*lo = cpus[t->core].irq_stack_lo;
		*hi = cpus[t->core].irq_stack_hi;
	}
}

/*
 * On t's core (t current, or not yet running). hi goes to 0 first and is set last: an NMI
 * in between reads an empty stack, never one bound of each.
 */
void thread_set_stack(struct thread *t, uintptr_t lo, uintptr_t hi)
{
	if (!hi)
		own_stack(t, &lo, &hi);
	WRITE_ONCE(t->stack_hi, 0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* an NMI sees the stores in order */
	WRITE_ONCE(t->stack_lo, lo);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	WRITE_ONCE(t->stack_hi, hi);
}

void thread_set_create_hook(void (*hook)(struct thread *t)) { create_hook = hook; }

void thread_foreach(void (*fn)(struct thread *t, void *arg), void *arg)
{
	spin_lock(&all_lock);
	for (struct thread *t = all_threads; t; t = t->all_next)
		fn(t, arg);
	spin_unlock(&all_lock);
}

/*
 * The crash dump's walk: all_lock is not taken, since its holder may be a core the panic
 * stopped, or this very core. A core stopped inside kthread_create or unlink_thread has
 * made one pointer store or the other, each leaving the list whole (a thread is freed
 * only after its unlink, by a join that a stopped core cannot finish), so the walk sees
 * the thread linked or not. It stops after max threads in case the list is torn anyway.
 */
void thread_foreach_stopped(void (*fn)(struct thread *t, void *arg), void *arg, unsigned max)
{
	struct thread *t = READ_ONCE(all_threads);

	must(!irq_enabled(), "panic context: interrupts off, the other cores stopped");
	for (unsigned n = 0; t && n < max; n++, t = READ_ONCE(t->all_next))
		fn(t, arg);
}

static bool never(void *arg) { (void)arg; return false; }

int thread_sleep_us(uint64_t usec)
{
	struct rendez r;
	bool said;
	int rc;

	if (usec == 0) {	/* a sleep of nothing: let others run, no timeout at all */
		yield();
		return thread_interrupt_pending() ? -EINTR : 0;
	}
	rendez_init(&r);
	said = schedev_wait(OPF_WHY_SLEEP, NULL, NULL, NULL, 0);
	rc = rendez_sleep_until(&r, never, NULL, usec, true) == -EINTR ? -EINTR : 0;
	if (said)
		schedev_unwait();
	return rc;
}

void thread_interrupt(struct thread *t)
{
	struct rendez *r;

	WRITE_ONCE(t->intr, true);
	r = READ_ONCE(t->sleeping_on);
	if (r)
		thread_wake(t);
}

bool thread_interrupt_pending(void)
{
	struct thread *t = current();

	return t && READ_ONCE(t->intr);
}

bool thread_interrupted(void)
{
	struct thread *t = current();

	if (!t || !READ_ONCE(t->intr))
		return false;
	WRITE_ONCE(t->intr, false);
	return true;
}

struct alarm *thread_sleep_alarm(struct thread *t) { return &t->sleep_alarm; }
struct fstate **thread_fstate(struct thread *t) { return &t->fs; }

/* ---- per-core start ---- */

static void tick(struct alarm *a, struct trapframe *tf)
{
	struct runq *rq = a->arg;

	(void)tf;
	this_cpu()->ticks++;
	if (rq->head)
		rq->need_resched = true;
}

static __noreturn void idle_loop(void)
{
	struct runq *rq = rq_of(core_id());
	struct cpu *c = this_cpu();

	for (;;) {
		irq_disable();
		WRITE_ONCE(c->in_idle, true);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (READ_ONCE(rq->head)) {
			WRITE_ONCE(c->in_idle, false);
			irq_enable();
			yield();
			continue;
		}
		cpu_halt();		/* sti; hlt: a wakeup IPI after the check still wakes us */
		WRITE_ONCE(c->in_idle, false);
	}
}

/* The calling flow becomes this core's idle thread (tid 0); the tick starts. */
static void start_core(void)
{
	int core = core_id();
	struct runq *rq = rq_of(core);
	struct thread *idle = &rq->idle;

	strlcpy(idle->name, "idle", sizeof(idle->name));
	idle->core = core;
	thread_set_stack(idle, 0, 0);	/* the core's boot stack */
	idle->state = T_RUNNING;
	idle->run_start = tsc_read();
	rendez_init(&idle->exited);
	cpus[core].idle = idle;
	cpus[core].cur = idle;
	cpus[core].sched = rq;
	alarm_init(&rq->tick, tick, rq);
	alarm_set(&rq->tick, tsc_read() + tsc_hz() / SCHED_HZ, tsc_hz() / SCHED_HZ);
}

void sched_init(void)
{
	start_core();
}

__noreturn void sched_start_ap(void)
{
	start_core();
	irq_enable();
	idle_loop();
}

/* Boot core: after kernel_main has started its threads, it becomes the idle loop. */
__noreturn void sched_idle_boot(void)
{
	irq_enable();
	idle_loop();
}


static void ipi_wake(int core) { arch_send_wake_ipi(core); }
