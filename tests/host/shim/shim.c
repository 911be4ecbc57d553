/*
 * Host implementations of the kernel primitives that block.c, qio.c, qlock.c and the
 * profiler's portable files use. Spinlocks are real spinlocks on C11-style atomics (so
 * ThreadSanitizer sees the ordering); rendez is a pthread mutex and condition variable;
 * kmalloc is malloc with a live count; core_id() is a per-pthread value the test sets;
 * current() is each pthread's own struct thread, which thread_interrupt can interrupt.
 *
 * The heap (kmalloc, kzmalloc, kfree, kmalloc_footprint) and the page allocator (pages_alloc,
 * pages_alloc_aligned, pages_free) are weak malloc-backed stand-ins: a test that links
 * kern/src/mem/page.c and kmalloc.c gets the real ones instead, with arch_mem_foreach
 * handing them host memory below 4 GiB (the kernel's allocator ignores RAM above it).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#define strerror libc_strerror	/* error.h declares the kernel's own */
#include <string.h>
#undef strerror
#include <time.h>

#include "kernel.h"
#include "arch.h"
#include "error.h"
#include "kmalloc.h"
#include "lock.h"
#include "page.h"
#include "rendez.h"
#include "schedev.h"
#include "shim.h"
#include "thread.h"

static __thread int shim_core;
static int shim_ncpus = 1;
static long live_allocs;

/* Each pthread is a thread to the kernel's code: current() is its own struct thread. */
struct thread {
	int tid;	/* the head thread.h reads inline (struct thread_head) */
	int core;
	uintptr_t stack_lo, stack_hi;	/* 0, 0: the walk trusts no host stack */
	bool intr;	/* thread_interrupt was called; rendez_sleep_intr gives up */
};
static __thread struct thread shim_thread;
static int shim_next_tid;

struct thread *current(void)
{
	if (!shim_thread.tid)
		shim_thread.tid = __atomic_add_fetch(&shim_next_tid, 1, __ATOMIC_RELAXED);
	return &shim_thread;
}


/* kernel.h's strlcpy (kern/src/lib/string.c), which Debian 12's C library lacks. */
size_t strlcpy(char *d, const char *s, size_t n)
{
	size_t len = strlen(s);

	if (n) {
		size_t k = len < n - 1 ? len : n - 1;

		memcpy(d, s, k);
		d[k] = 0;
	}
	return len;
}

/* Ctrl-C stand-in: the sleeper polls the flag (see rendez_sleep_intr). */
void thread_interrupt(struct thread *t)
{
	__atomic_store_n(&t->intr, true, __ATOMIC_RELEASE);
}

bool thread_interrupted(void)
{
	return __atomic_exchange_n(&current()->intr, false, __ATOMIC_ACQ_REL);
}

bool thread_interrupt_pending(void)
{
	return __atomic_load_n(&current()->intr, __ATOMIC_ACQUIRE);
}

void shim_set_core(int core) { shim_core = core; }

/*
 * What the page allocator would say is free (the profiler sizes its sessions by it). Weak,
 * as the heap below: a test that links page.c gets the real count.
 */
static size_t shim_pages_free = (1ul << 30) / PGSIZE;

__attribute__((weak)) size_t pages_free_count(void)
{
	return __atomic_load_n(&shim_pages_free, __ATOMIC_RELAXED);
}
void shim_set_free_memory(size_t bytes)
{
	__atomic_store_n(&shim_pages_free, bytes / PGSIZE, __ATOMIC_RELAXED);
}

/* The profiler's NMI points (internal.h): a test may land an "NMI" at each. */
static void (*shim_nmi_hook)(void);

void shim_set_nmi_hook(void (*fn)(void)) { __atomic_store_n(&shim_nmi_hook, fn, __ATOMIC_RELEASE); }

static __thread int shim_in_nmi, shim_irq_depth;	/* NMIs landed; irq_save nesting */

void shim_nmi_point(void)
{
	void (*fn)(void) = __atomic_load_n(&shim_nmi_hook, __ATOMIC_ACQUIRE);

	if (fn) {
		shim_in_nmi++;	/* what the hook does is an NMI's: interrupts off, in_nmi */
		shim_irq_depth++;
		fn();
		shim_irq_depth--;
		shim_in_nmi--;
	}
}

bool arch_in_nmi(void) { return shim_in_nmi > 0; }
void shim_set_ncpus(int n) { shim_ncpus = n; }
long shim_live_allocs(void) { return __atomic_load_n(&live_allocs, __ATOMIC_SEQ_CST); }

int core_id(void) { return shim_core; }
int ncpus(void) { return shim_ncpus; }
/*
 * Interrupts. Each thread counts its own irq_save nesting (and irq_disable), so
 * irq_enabled answers as on a core: false inside irq_save, in shim_on_core's fn, and in
 * an "NMI" a test lands (shim_nmi_point) -- what the kernel's must(!irq_enabled(), ...)
 * asks. Modelled on request (shim_model_irqs): a core runs one thing at a time with
 * interrupts off, so irq_save on core N waits while another thread has them off there, and
 * shim_on_core runs fn as a kernel thread on N would -- only once nothing there has them
 * off. Unmodelled (the default), irq_save takes no lock and shim_on_core just calls fn.
 */
static int shim_irq_model;
static pthread_mutex_t shim_core_mx[MAX_CPUS];
static __thread int shim_irq_core, shim_irq_locked, shim_cli;

void shim_model_irqs(int on)
{
	for (int i = 0; on && i < MAX_CPUS; i++)
		pthread_mutex_init(&shim_core_mx[i], NULL);
	__atomic_store_n(&shim_irq_model, on, __ATOMIC_RELEASE);
}

unsigned long irq_save(void)
{
	if (shim_irq_depth++ == 0 && __atomic_load_n(&shim_irq_model, __ATOMIC_ACQUIRE)) {
		shim_irq_core = shim_core;
		shim_irq_locked = 1;
		pthread_mutex_lock(&shim_core_mx[shim_irq_core]);
	}
	return 0;
}

void irq_restore(unsigned long flags)
{
	(void)flags;
	if (shim_irq_depth > 0 && --shim_irq_depth == 0 && shim_irq_locked) {
		shim_irq_locked = 0;
		pthread_mutex_unlock(&shim_core_mx[shim_irq_core]);
	}
}

void shim_on_core(int core, void (*fn)(void *), void *arg)
{
	int was = shim_core;

	shim_core = core;
	irq_save();
	fn(arg);
	irq_restore(0);
	shim_core = was;
}
void irq_enable(void) { shim_cli = 0; }
void irq_disable(void) { shim_cli = 1; }
bool irq_enabled(void) { return shim_irq_depth == 0 && !shim_cli; }
void cpu_relax(void) { sched_yield(); }

uint64_t nsec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#if defined(__x86_64__)
#include <x86intrin.h>
/* The real TSC, as in the kernel (its cost is part of what host benchmarks measure). */
uint64_t tsc_read(void) { return __rdtsc(); }

/* Measured once against CLOCK_MONOTONIC over 20 ms. */
uint64_t tsc_hz(void)
{
	static uint64_t hz;

	if (!__atomic_load_n(&hz, __ATOMIC_ACQUIRE)) {
		uint64_t n0 = nsec(), t0 = __rdtsc(), n1, t1;

		while ((n1 = nsec()) - n0 < 20000000)
			;
		t1 = __rdtsc();
		__atomic_store_n(&hz, (t1 - t0) * 1000000000ull / (n1 - n0), __ATOMIC_RELEASE);
	}
	return hz;
}
#else
uint64_t tsc_read(void) { return nsec(); }
uint64_t tsc_hz(void) { return 1000000000ull; }
#endif

const uint8_t *kernel_build_id(size_t *len)
{
	static const uint8_t id[20] = { 0x5e, 0xed, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };

	*len = sizeof(id);
	return id;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int vprintk(const char *fmt, va_list ap) { return vprintf(fmt, ap); }

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "panic: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

const char *strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSPC: return "no space";
	case EPIPE: return "hung up";
	case EAGAIN: return "would block";
	case EINTR: return "interrupted";
	case ENOMEM: return "out of memory";
	default: return "error";
	}
}

__attribute__((weak)) void *kmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p)
		__atomic_add_fetch(&live_allocs, 1, __ATOMIC_SEQ_CST);
	return p;
}

__attribute__((weak)) void *kzmalloc(size_t n)
{
	void *p = kmalloc(n);

	if (p)
		memset(p, 0, n);
	return p;
}

__attribute__((weak)) void kfree(void *p)
{
	if (!p)
		return;
	__atomic_sub_fetch(&live_allocs, 1, __ATOMIC_SEQ_CST);
	free(p);
}

/* What glibc's malloc takes for n bytes: a chunk of n + 8 rounded up to 16, at least 32. */
__attribute__((weak)) size_t kmalloc_footprint(size_t n)
{
	return MAX((size_t)32, ROUNDUP(n + 8, 16));
}

__attribute__((weak)) void *pages_alloc_aligned(size_t n, size_t align)
{
	void *p;

	if (n == 0 || align < PGSIZE || (align & (align - 1)))
		return NULL;
	if (!(p = aligned_alloc(align, n * PGSIZE)))
		return NULL;
	/* the kernel's pages are mapped already: touch them now, not in a hot path's timing */
	memset(p, 0xa5, n * PGSIZE);
	__atomic_add_fetch(&live_allocs, 1, __ATOMIC_SEQ_CST);
	return p;
}

__attribute__((weak)) void *pages_alloc(size_t n)
{
	return pages_alloc_aligned(n, PGSIZE);
}

__attribute__((weak)) void pages_free(void *p, size_t n)
{
	if (!p || n == 0)
		return;
	__atomic_sub_fetch(&live_allocs, 1, __ATOMIC_SEQ_CST);
	free(p);
}

static size_t shim_mem_bytes = 8 << 20;
static int shim_mem_regions = 2;

void shim_set_mem(size_t bytes, int nregions)
{
	shim_mem_bytes = bytes;
	shim_mem_regions = nregions;
}

/*
 * The machine's free RAM: shim_mem_bytes of fresh anonymous memory below 2 GiB (MAP_32BIT,
 * inside what the sanitizers leave to the application), reported as shim_mem_regions
 * ranges with a one-page hole between neighbours so they cannot merge. Never unmapped.
 */
void arch_mem_foreach(void (*fn)(uintptr_t start, uintptr_t end))
{
	size_t each = ROUNDDOWN(shim_mem_bytes / (size_t)shim_mem_regions, PGSIZE);
	size_t len = (each + PGSIZE) * (size_t)shim_mem_regions;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (m == MAP_FAILED)
		panic("arch_mem_foreach: cannot map %zu bytes below 2 GiB", len);
	for (int i = 0; i < shim_mem_regions; i++) {
		uintptr_t start = (uintptr_t)m + (size_t)i * (each + PGSIZE);

		fn(start, start + each);
	}
}

void spinlock_init(struct spinlock *l, const char *name)
{
	l->locked = 0;
	l->cpu = -1;
	l->name = name;
	l->pc = 0;
}

void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			sched_yield();
	l->pc = (uintptr_t)__builtin_return_address(0);
}

bool spin_trylock(struct spinlock *l)
{
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

void spin_unlock(struct spinlock *l)
{
	if (!__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
		panic("spin_unlock: %s not held", l->name ? l->name : "?");
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

bool spin_holding(struct spinlock *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

void rendez_init(struct rendez *r)
{
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
}

void rendez_sleep(struct rendez *r, bool (*cond)(void *), void *arg)
{
	pthread_mutex_lock(&r->mu);
	while (!cond(arg))
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

/* As the kernel's: -EINTR (the interrupt left pending) if interrupted before cond held. */
int rendez_sleep_intr(struct rendez *r, bool (*cond)(void *), void *arg)
{
	int ret = 0;

	pthread_mutex_lock(&r->mu);
	while (!cond(arg)) {
		struct timespec ts;

		if (thread_interrupt_pending()) {
			ret = -EINTR;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;	/* interrupts are noticed within a millisecond */
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	}
	pthread_mutex_unlock(&r->mu);
	return ret;
}

bool rendez_sleep_timeout(struct rendez *r, bool (*cond)(void *), void *arg, uint64_t usec)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(usec / 1000000);
	ts.tv_nsec += (long)(usec % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&r->mu);
	while (!(ok = cond(arg)))
		if (pthread_cond_timedwait(&r->cv, &r->mu, &ts))
			break;
	ok = cond(arg);
	pthread_mutex_unlock(&r->mu);
	return ok;
}

/*
 * The waker changed the condition before calling; taking the mutex orders that change
 * before any sleeper's next check, so no wakeup is lost.
 */
void rendez_wakeup(struct rendez *r)
{
	pthread_mutex_lock(&r->mu);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* No scheduler events on the host: the kernel's schedev.c owns them (schedev.h). */
const struct schedev_ops *schedev_ops;

bool schedev_wait(unsigned why, const void *obj, const void *site, const char *name,
		  uint32_t holder)
{
	(void)why, (void)obj, (void)site, (void)name, (void)holder;
	return false;
}

void schedev_unwait(void) { }
void schedev_holder(const void *obj, uint32_t holder) { (void)obj, (void)holder; }

void schedev_drain(uint32_t gen, schedev_drain_fn fn, void *arg)
{
	(void)gen, (void)fn, (void)arg;
}

/* The host tests run on "hardware": what the profiler's clock fields say then. */
const struct machine *arch_machine(void)
{
	static const struct machine m = { .kind = MACHINE_BARE, .icount_shift = -1 };

	return &m;
}

/* The host has no kernel symbol table: every pc is unknown (top.c counts it so). */
bool ksym_lookup(uintptr_t pc, const char **name, uintptr_t *off)
{
	(void)pc, (void)name, (void)off;
	return false;
}
