/*
 * The profiler's glue to the kernel: per-core sampling alarms, the worker thread, thread
 * names, and the hooks of struct oprof_hooks (oprofile.h).
 *
 * Sampling: each core has its own periodic alarm (alarm.c), which runs sample_alarm in
 * that core's timer interrupt; it turns the trap frame and the current thread into a
 * struct oprof_tick and hands it to the portable hot path. Alarms can only be armed and
 * cancelled on their own core, so start and stop run a short thread on every core (the
 * "arm" and "disarm" threads) and join them all: once every disarm thread has run, no
 * core is inside sample_alarm or will enter it again.
 *
 * A core never takes two samples back to back: if, after a tick, its next expiry is already
 * due (the tick, or the emulator running the core, was slower than the period), the alarm
 * is moved a whole period past now. Otherwise an overloaded core would stay in its timer
 * interrupt (alarm_interrupt runs every due expiry before returning), starving its threads
 * -- on core 0, the worker, which then starves every core of empty blocks. The expiries
 * skipped are counted in alarm.missed and shown in the stat file. The overhead budget
 * (percpu.c) lowers such a core's rate through set_rate, which re-arms the core's alarm
 * with the longer period from inside the alarm's own callback.
 *
 * The worker is a kernel thread on core 0 looping on oprof_worker_wait/pass.
 */
#include "alarm.h"
#include "cpu.h"
#include "error.h"
#include "abi/oprofile.h"
#include "oprofile.h"
#include "sched.h"
#include "thread.h"

static struct alarm sample_alarms[MAX_CPUS];
static uint64_t sample_period;		/* TSC ticks between samples at the session's rate */
static uint64_t core_period[MAX_CPUS];	/* each core's own, written only on that core */

/* Timer interrupt on the alarm's core, interrupts off. */
static void sample_alarm(struct alarm *a, struct trapframe *tf)
{
	struct cpu *c = this_cpu();
	struct thread *t = c->cur;
	struct oprof_tick tick = {
		.tsc = tsc_read(),
		.pc = tf_pc(tf),
		.fp = tf_fp(tf),
		.tid = (uint32_t)thread_tid(t),
		.core = (uint16_t)c->id,
		.missed = a->missed,
	};
	uint64_t now;

	if (t) {
		thread_stack(t, &tick.stack_lo, &tick.stack_hi);
		tick.leaf_ret = arch_unlinked_return(tick.pc, tf_sp(tf), tick.stack_lo,
						     tick.stack_hi);
	}
	if (t == c->idle && READ_ONCE(c->in_idle))
		tick.flags = OPF_F_IDLE;
	oprof_tick_irq(&tick);
	now = tsc_read();
	if (alarm_armed(a) && a->deadline <= now)
		alarm_set(a, now + core_period[c->id], core_period[c->id]);
}

/* set_rate hook: on core, inside sample_alarm (so the alarm is armed here). */
static void glue_set_rate(int core, uint32_t hz)
{
	core_period[core] = tsc_hz() / (hz ? hz : 1);
	alarm_set(&sample_alarms[core], tsc_read() + core_period[core], core_period[core]);
}

static void arm_thread(void *arg)
{
	struct alarm *a = &sample_alarms[core_id()];

	(void)arg;
	core_period[core_id()] = sample_period;
	alarm_init(a, sample_alarm, NULL);
	alarm_set(a, tsc_read() + sample_period, sample_period);
}

static void disarm_thread(void *arg)
{
	(void)arg;
	alarm_cancel(&sample_alarms[core_id()]);
}

/* Run fn once on every online core, in a thread there, and wait for all of them. */
static int on_every_core(const char *name, thread_fn fn)
{
	struct thread *ts[MAX_CPUS];
	int n = ncpus(), r = 0;

	for (int i = 0; i < n; i++) {
		ts[i] = kthread_create(name, i, fn, NULL);
		if (!ts[i])
			r = -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (ts[i])
			kthread_join(ts[i]);
	return r;
}

static int glue_start_sampling(uint32_t hz)
{
	int r;

	sample_period = tsc_hz() / hz;
	r = on_every_core("oprof-arm", arm_thread);
	if (r < 0)
		on_every_core("oprof-disarm", disarm_thread);
	return r;
}

static void glue_stop_sampling(void)
{
	/* a disarm thread that cannot be created is retried: stop must not fail */
	while (on_every_core("oprof-disarm", disarm_thread) < 0)
		thread_sleep_us(10000);
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
	.start_sampling = glue_start_sampling,
	.stop_sampling = glue_stop_sampling,
	.foreach_thread = glue_foreach_thread,
	.set_rate = glue_set_rate,
};

static void worker(void *arg)
{
	(void)arg;
	for (;;) {
		oprof_worker_wait();
		oprof_worker_pass();
	}
}

void devoprofile_init(void);

/* Boot, thread context: the profiler's state, its worker on core 0 and its files. */
void oprofile_init(void)
{
	oprof_init(&hooks);
	if (!kthread_create("oprof-worker", 0, worker, NULL))
		panic("oprofile: cannot create the worker");
	thread_set_create_hook(thread_created);
	devoprofile_init();
}
