/*
 * The profiler's glue to the kernel: the hooks of struct oprof_hooks (oprofile.h), the
 * worker thread, thread names, and boot. The sampling source itself is sampler.c's.
 *
 * The worker is a kernel thread on core 0 looping on oprof_worker_wait/pass. Contexts:
 * each hook says its own; oprofile_init at boot, in thread context.
 */
#include "cpu.h"
#include "error.h"
#include "abi/oprofile.h"
#include "oprofile.h"
#include "sampler.h"
#include "sched.h"
#include "schedev.h"
#include "thread.h"

/*
 * kick hook, outside the profiler's writers (they kick by irq work: kick_later). Timer
 * sampling: a thread may wake the worker itself. By NMI a wake-up (a lock) must wait for
 * ordinary interrupt context: the irq work, which runs glue_kick_work.
 */
static void glue_kick(void)
{
	if (sampler_by_nmi())
		arch_irq_work_raise();
	else
		oprof_worker_wake();
}

static void glue_kick_work(void)
{
	oprof_worker_wake();
}

/* sched_events hook: the scheduler's and locks' hooks for a session (schedev.h). */
static void glue_sched_events(const struct schedev_ops *ops)
{
	schedev_register(ops);
}

struct on_core_call {
	void (*fn)(void *);
	void *arg;
};

static void on_core_thread(void *arg)
{
	struct on_core_call *call = arg;
	unsigned long f = irq_save();

	call->fn(call->arg);
	irq_restore(f);
}

/* on_core hook: a thread on core, interrupts off around fn; retried until it can be made. */
static void glue_on_core(int core, void (*fn)(void *), void *arg)
{
	struct on_core_call call = { fn, arg };
	struct thread *t;

	while (!(t = kthread_create("oprof-oncore", core, on_core_thread, &call)))
		thread_sleep_us(10000);
	kthread_join(t);
}

struct foreach_ctx {
	oprof_thread_fn fn;
	void *arg;
};

static void foreach_one(struct thread *t, void *arg)
{
	struct foreach_ctx *ctx = arg;

	ctx->fn(ctx->arg, (uint32_t)thread_tid(t), thread_core(t), thread_name(t));
}

static void glue_foreach_thread(oprof_thread_fn fn, void *arg)
{
	struct foreach_ctx ctx = { fn, arg };

	thread_foreach(foreach_one, &ctx);
}

/* Thread-create hook: in the creator's context. */
static void thread_created(struct thread *t)
{
	oprof_thread_created((uint32_t)thread_tid(t), thread_core(t), thread_name(t));
}

static const struct oprof_hooks hooks = {
	.start_sampling = sampler_start,
	.stop_sampling = sampler_stop,
	.kick = glue_kick,
	.on_core = glue_on_core,
	.foreach_thread = glue_foreach_thread,
	.set_rate = sampler_set_rate,
	.default_source = sampler_default_source,
	.sched_events = glue_sched_events,
	.kick_later = arch_irq_work_raise,
};

static void worker(void *arg)
{
	(void)arg;
	for (;;) {
		oprof_worker_wait();
		oprof_worker_pass();
	}
}

/* Boot, thread context: the profiler's state, its worker on core 0 and its files. */
void oprofile_init(void)
{
	oprof_init(&hooks);
	arch_irq_work_init(glue_kick_work);
	if (!kthread_create("oprof-worker", 0, worker, NULL))
		panic("oprofile: cannot create the worker");
	thread_set_create_hook(thread_created);
	devoprofile_init();
}
