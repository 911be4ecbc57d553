/*
 * Built-in workloads for `run`: small, recognizable hot spots to profile and compare.
 * Each app does one unit of work per call of its step function and returns a count of
 * what it did (iterations, bytes); `run` calls it on every chosen core until time is up.
 * The hot functions are noinline so profiles and call graphs name them.
 */
#include "arch.h"
#include "kmalloc.h"
#include "qlock.h"
#include "thread.h"
#include "workloads.h"
#include "tsctime.h"

/* spin: a tight loop in its own function */
__attribute__((noinline)) uint64_t spin_loop(uint64_t n)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++)
		x += i;
	return x;
}

static uint64_t spin_step(void *st)
{
	(void)st;
	spin_loop(10000);
	return 10000;
}

/* matrix: integer matrix multiply; the inner dot product is the hot function */

struct matrix_state {
	uint32_t a[MN][MN], b[MN][MN], c[MN][MN];
};

__attribute__((noinline)) uint32_t matrix_inner(const uint32_t *row, const uint32_t (*b)[MN],
						 int col)
{
	uint32_t s = 0;

	for (int k = 0; k < MN; k++)
		s += row[k] * b[k][col];
	return s;
}

__attribute__((noinline)) void matrix_multiply(struct matrix_state *m)
{
	for (int i = 0; i < MN; i++)
		for (int j = 0; j < MN; j++)
			m->c[i][j] = matrix_inner(m->a[i], m->b, j);
}

static void *matrix_setup(void)
{
	struct matrix_state *m = kmalloc(sizeof(*m));

	if (m)
		for (int i = 0; i < MN; i++)
			for (int j = 0; j < MN; j++) {
				m->a[i][j] = (uint32_t)(i * 7 + j);
				m->b[i][j] = (uint32_t)(i + j * 3);
			}
	return m;
}

static uint64_t matrix_step(void *st)
{
	matrix_multiply(st);
	return 1;
}

/* fib: deep recursion, for call graphs */
__attribute__((noinline)) uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

static uint64_t fib_step(void *st)
{
	(void)st;
	fib(20);
	return 1;
}

/* memcpy: bandwidth between two 1 MiB buffers */
#define MC_BYTES (1u << 20)

static void *memcpy_setup(void)
{
	uint8_t *p = kmalloc(2 * MC_BYTES);

	if (p)
		memset(p, 0x5a, 2 * MC_BYTES);
	return p;
}

__attribute__((noinline)) void memcpy_copy(uint8_t *buf)
{
	memcpy(buf + MC_BYTES, buf, MC_BYTES);
}

static uint64_t memcpy_step(void *st)
{
	memcpy_copy(st);
	return MC_BYTES;
}

/*
 * irqoff: rounds of a spin-wait with interrupts disabled, in a function of its own, as a
 * core waiting for a contended lock with interrupts off would spin; they are enabled for a
 * moment between rounds (in run's loop), where pending interrupts land. A round is
 * IRQOFF_ROUND iterations: tens of microseconds under emulation, short enough that the
 * core's timer interrupts are late, not lost.
 *
 * The spin-wait hint (pause, every 64 iterations) matters under QEMU 7.2 with -icount:
 * TCG ends the translation block at a pause and its single-threaded round robin moves on
 * to the next virtual CPU; without it, one busy vCPU can keep the host thread for whole
 * timer periods while the others starve (measured: per-core rates 100x apart).
 */
#define IRQOFF_ROUND	10000

__attribute__((noinline)) uint64_t irqoff_spin(uint64_t n)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++) {
		x += i;
		if ((i & 63) == 0)
			cpu_relax();
	}
	return x;
}

static uint64_t irqoff_step(void *st)
{
	unsigned long f = irq_save();

	(void)st;
	irqoff_spin(IRQOFF_ROUND);
	irq_restore(f);
	return IRQOFF_ROUND;
}

/*
 * lockup: interrupts off, then spin forever (Linux's lkdtm HARDLOCKUP), for the NMI
 * watchdog (crash.h) to catch. Only an NMI ever reaches the core again. The pause keeps
 * TCG's round robin fair to the other virtual CPUs (see irqoff).
 */
__attribute__((noinline)) __noreturn void lockup_spin(void)
{
	volatile uint64_t x = 0;

	for (;;) {
		x++;
		if ((x & 63) == 0)
			cpu_relax();
	}
}

static uint64_t lockup_step(void *st)
{
	(void)st;
	irq_disable();
	lockup_spin();
}

/* Busy (in a function of its own) until us microseconds of TSC time have passed. */
__attribute__((noinline)) uint64_t busy_us(uint64_t us)
{
	uint64_t end = tsc_read() + tsc_of_us(us), n = 0;

	while (tsc_read() < end)
		n++;
	return n;
}

/*
 * duty: a known answer for off-CPU time. Each step computes DUTY_ON_US then sleeps
 * DUTY_OFF_US: the thread is on a CPU a tenth of its time and asleep (timed) the rest,
 * give or take its wake-up latency.
 */
#define DUTY_ON_US	1000
#define DUTY_OFF_US	9000

__attribute__((noinline)) void duty_compute(void)
{
	busy_us(DUTY_ON_US);
}

static uint64_t duty_step(void *st)
{
	(void)st;
	duty_compute();
	thread_sleep_us(DUTY_OFF_US);
	return 1;
}

/*
 * lockpair: a known answer for lock contention. Every thread (run it on two cores) takes
 * the one qlock "lockpair", holds it LOCKPAIR_HOLD_US, lets it go and waits LOCKPAIR_OUT_US
 * before the next round -- asleep both times, so the answer does not depend on how the
 * emulator shares the host between virtual CPUs. Two threads alternate: each comes back
 * OUT after letting go and finds the other holding it for HOLD - OUT more, so nearly every
 * acquisition is contended and waits HOLD - OUT (plus wake-up latency).
 */
#define LOCKPAIR_HOLD_US	2000
#define LOCKPAIR_OUT_US		1000

static struct qlock pair_lock;
static uint32_t pair_init;	/* 0 untouched, 1 being initialized, 2 ready */

__attribute__((noinline)) void lockpair_hold(void)
{
	thread_sleep_us(LOCKPAIR_HOLD_US);
}

static void *lockpair_setup(void)
{
	uint32_t zero = 0;

	if (__atomic_compare_exchange_n(&pair_init, &zero, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		qlock_init_named(&pair_lock, "lockpair");
		__atomic_store_n(&pair_init, 2, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&pair_init, __ATOMIC_ACQUIRE) != 2)
		cpu_relax();
	return kmalloc(sizeof(uint64_t));	/* no state; not NULL, which says setup failed */
}

static uint64_t lockpair_step(void *st)
{
	(void)st;
	qlock(&pair_lock);
	lockpair_hold();
	qunlock(&pair_lock);
	thread_sleep_us(LOCKPAIR_OUT_US);
	return 1;
}

/*
 * twonap: a known answer for telling two waits apart. Step n sleeps TWONAP_US through
 * twonap_a when n is even and twonap_b when it is odd: the same frames at the same
 * addresses, only the return addresses differ -- so half the sleeps have each stack (the
 * profiler may reuse a thread's last stack only when every word of it is the same).
 */
#define TWONAP_US	1000

__attribute__((noinline)) void twonap_a(void)
{
	thread_sleep_us(TWONAP_US);
}

__attribute__((noinline)) void twonap_b(void)
{
	thread_sleep_us(TWONAP_US + 1);	/* not the same code as twonap_a: never merged */
}

static uint64_t twonap_step(void *st)
{
	uint64_t *n = st;

	if ((*n)++ & 1)
		twonap_b();
	else
		twonap_a();
	return 1;
}

static void *twonap_setup(void)
{
	return kzmalloc(sizeof(uint64_t));	/* the step count */
}

/*
 * The built-in workloads, one row each: name, unit, setup, step, done, and what it does
 * (`run` alone lists them with it). Every name is also a global symbol,
 * workload_name__NAME: scripts/applink reads the kernel objects' symbols and refuses an app
 * named like a workload (`run NAME` would always start the workload, never the app).
 */
#define WORKLOADS(X)								\
	X(spin, "iterations", NULL, spin_step, NULL,				\
	  "a tight loop in its own function")					\
	X(matrix, "multiplies", matrix_setup, matrix_step, NULL,		\
	  "integer matrix multiply; matrix_inner is hot")			\
	X(fib, "fib(20) calls", NULL, fib_step, NULL,				\
	  "deep recursion, for call graphs")					\
	X(memcpy, "bytes", memcpy_setup, memcpy_step, NULL,			\
	  "copies between two 1 MiB buffers")					\
	X(irqoff, "iterations", NULL, irqoff_step, NULL,			\
	  "spin-waits with interrupts off (irqoff_spin)")			\
	X(duty, "cycles", NULL, duty_step, NULL,				\
	  "1 ms on a CPU, 9 ms asleep, over and over")				\
	X(lockpair, "acquisitions", lockpair_setup, lockpair_step, NULL,	\
	  "threads taking turns on one qlock (run it on two cores)")		\
	X(twonap, "naps", twonap_setup, twonap_step, NULL,			\
	  "sleeps from two call sites in turn: two stacks")			\
	X(split, "rounds", NULL, split_step, NULL,				\
	  "two leaves called 1 : 8, a known instruction split")			\
	X(yield, "yields", NULL, yield_step, NULL,				\
	  "gives up its core every step")					\
	X(pingpong, "hand-overs", NULL, pingpong_step, NULL,			\
	  "two on one core hand a turn back and forth")				\
	X(qlockfree, "qlock pairs", qlockfree_setup, qlockfree_step, NULL,	\
	  "takes and drops a qlock nobody else uses")				\
	X(spinfree, "spinlock pairs", spinfree_setup, spinfree_step, NULL,	\
	  "takes and drops a spinlock nobody else uses")			\
	X(iowrite, "files written", iowrite_setup, iowrite_step, iowrite_done,	\
	  "rewrites /host/iowrite-CORE.bin over 9P: I/O wait")			\
	X(lockup, "never returns", NULL, lockup_step, NULL,			\
	  "interrupts off forever, for the NMI watchdog")			\
	X(wakewait, "hand-overs", wakewait_setup, wakewait_step, wakewait_done, \
	  "wakes a partner it keeps from running 1 ms")				\
	X(wakehold, "holds", NULL, wakehold_step, NULL,				\
	  "interrupts off until the session stops")				\
	X(wakelate, "steps", NULL, wakelate_step, NULL,				\
	  "does nothing; start it beside wakehold")

#define WORKLOAD_NAME(name, ...)	const char workload_name__##name[] = #name;
WORKLOADS(WORKLOAD_NAME)

#define WORKLOAD_ROW(name, unit, setup, step, done, about)	\
	{ workload_name__##name, unit, setup, step, done, about },
const struct workload workloads[] = {
	WORKLOADS(WORKLOAD_ROW)
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct workload *workload_find(const char *name)
{
	for (const struct workload *w = workloads; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}
