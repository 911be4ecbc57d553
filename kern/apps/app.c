/*
 * Running apps (app.h): `run NAME` (the shell thread) starts one instance thread per chosen
 * core and waits for them; each instance runs main on a stack of its own with an unmapped
 * guard page below. Faults come in trap context (arch appfault.c -> app_fault_end), Ctrl-C
 * as a stop flag that the timer interrupt acts on (app_tick) when the instance is in app
 * code, and that app_write acts on when it is in the kernel writing.
 *
 * The live instances are in a fixed table that the instance threads fill and empty
 * themselves; trap and interrupt context find theirs by scanning it (lock-free reads).
 */
#include "app.h"
#include "cpu.h"
#include "error.h"
#include "kmalloc.h"
#include "page.h"
#include "cons.h"
#include "dev.h"
#include "thread.h"
#include "tsctime.h"

#define LIVE_MAX	64

struct app_inst {
	const struct app *app;
	struct thread *t;
	struct app_ctx ctx;
	uint8_t *stack;			/* pages; the first is the guard */
	size_t pages;
	int argc;
	char **argv;			/* the instance's own copy */
	struct app_heap *heap;		/* its run's, shared with the run's other instances */
	int core, status;
	bool in_main;			/* ctx is valid: faults and stops end the instance */
	bool stop;			/* Ctrl-C */
	bool done;			/* release: results are final */
	const char *why;		/* how it ended when it did not return: a fault, "stopped" */
	char why_buf[APP_WHY_MAX];	/* app_abort's why, copied: it may be on the app's stack */
	uint64_t start, end;		/* TSC */
};

static struct app_inst *live[LIVE_MAX];
extern char __app_text_start[], __app_text_end[];

const struct app *app_find(const char *name)
{
	for (const struct app *a = app_table; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

struct app_inst *app_current(void)
{
	struct thread *t = current();

	if (!t)
		return NULL;
	for (int i = 0; i < LIVE_MAX; i++) {
		struct app_inst *in = __atomic_load_n(&live[i], __ATOMIC_ACQUIRE);

		if (in && in->t == t && READ_ONCE(in->in_main))
			return in;
	}
	return NULL;
}

bool app_in_guard(struct app_inst *in, uintptr_t addr)
{
	return addr - (uintptr_t)in->stack < PGSIZE;
}

const char *app_inst_name(struct app_inst *in) { return in->app->name; }
struct app_heap *app_inst_heap(struct app_inst *in) { return in->heap; }

struct app_ctx *app_fault_end(struct app_inst *in, const char *what, int status)
{
	in->why = what;
	in->status = status;
	return &in->ctx;
}

void app_tick(struct trapframe *tf)
{
	struct app_inst *in;
	uintptr_t pc = tf_pc(tf);

	if (pc < (uintptr_t)__app_text_start || pc >= (uintptr_t)__app_text_end ||
	    !tf_irq_enabled(tf) || !(in = app_current()) || !READ_ONCE(in->stop))
		return;
	in->why = "stopped";
	arch_tf_app_leave(tf, &in->ctx, APP_ST_INT);
}

/* The status is taken modulo 256 where main returns (inst_main), for both ways out. */
__noreturn void app_exit(int status)
{
	struct app_inst *in = app_current();

	if (!in)
		panic("app_exit outside an app");
	arch_app_leave(&in->ctx, status);
}

/*
 * The app's bytes are copied to this stack before the write takes any lock: a bad pointer
 * faults here, in the instance's thread with interrupts on and nothing held, which ends
 * the instance (appfault.c), never inside the console's or a file's lock.
 */
void app_write(const char *s, size_t n)
{
	struct app_inst *in = app_current();
	char buf[512];		/* libc's printf buffer: one printf stays one write */

	if (in && READ_ONCE(in->stop)) {
		in->why = "stopped";
		arch_app_leave(&in->ctx, APP_ST_INT);
	}
	for (size_t o = 0, k; o < n; o += k) {
		k = MIN(n - o, sizeof(buf));
		memcpy(buf, s + o, k);
		if (kwrite(1, buf, k) == -EBADF)	/* inherited from the shell: its "> FILE" too */
			cons_write(buf, k);
	}
}

/* why may be on the app's stack: copied first (no lock held), then printed from the copy. */
void app_abort(const char *why)
{
	struct app_inst *in = app_current();

	if (!in)
		panic("app_abort outside an app");
	strlcpy(in->why_buf, why, sizeof(in->why_buf));
	in->why = in->why_buf;
	printk("\napp %s on cpu %d: %s\n", in->app->name, core_id(), in->why);
	arch_backtrace_here();
	app_exit(APP_ST_ABRT);
}

static void live_add(struct app_inst *in)
{
	for (;;)
		for (int i = 0; i < LIVE_MAX; i++) {
			struct app_inst *none = NULL;

			if (__atomic_compare_exchange_n(&live[i], &none, in, false,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED))
				return;
		}
}

static void live_del(struct app_inst *in)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i] == in)
			__atomic_store_n(&live[i], NULL, __ATOMIC_RELEASE);
}

/* The instance's thread. */
static void inst_main(void *arg)
{
	struct app_inst *in = arg;
	uintptr_t lo = (uintptr_t)in->stack + PGSIZE, hi = (uintptr_t)in->stack +
							   in->pages * PGSIZE;

	in->t = current();
	live_add(in);
	arch_page_flush((uintptr_t)in->stack);	/* a stale TLB entry must not hide the guard */
	thread_set_stack(in->t, lo, hi);
	in->start = tsc_read();
	WRITE_ONCE(in->in_main, true);
	/* main's value or exit's argument modulo 256, as a POSIX parent sees it */
	in->status = arch_app_enter(&in->ctx, in->app->main, in->argc, in->argv, hi) & 0xff;
	WRITE_ONCE(in->in_main, false);
	in->end = tsc_read();
	thread_set_stack(in->t, 0, 0);
	live_del(in);
	__atomic_store_n(&in->done, true, __ATOMIC_RELEASE);
}

/* argv[0] is the app's name, then args; one allocation holds the vector and the strings. */
static char **argv_copy(const char *name, int argc, char **args)
{
	size_t bytes = (size_t)(argc + 2) * sizeof(char *) + strlen(name) + 1;
	char **v, *p;

	for (int i = 0; i < argc; i++)
		bytes += strlen(args[i]) + 1;
	if (!(v = kmalloc(bytes)))
		return NULL;
	p = (char *)(v + argc + 2);
	for (int i = -1; i < argc; i++) {
		const char *s = i < 0 ? name : args[i];

		v[i + 1] = p;
		memcpy(p, s, strlen(s) + 1);
		p += strlen(s) + 1;
	}
	v[argc + 1] = NULL;
	return v;
}

void app_inst_free(struct app_inst *in)
{
	if (in->stack) {
		arch_page_map((uintptr_t)in->stack);
		pages_free(in->stack, in->pages);
	}
	kfree(in->argv);
	kfree(in);
}

struct app_inst *app_start(const struct app *a, int core, size_t stack, int argc,
				 char **argv, struct app_heap *heap)
{
	struct app_inst *in = kzmalloc(sizeof(*in));
	char name[THREAD_NAME_LEN];
	void *spare;

	if (!in)
		return NULL;
	in->app = a;
	in->heap = heap;
	in->core = core;
	in->pages = (stack + PGSIZE - 1) / PGSIZE + 1;
	in->argc = argc + 1;
	in->argv = argv_copy(a->name, argc, argv);
	in->stack = pages_alloc(in->pages);
	spare = page_alloc();
	if (in->stack && arch_page_unmap((uintptr_t)in->stack, &spare) < 0) {
		pages_free(in->stack, in->pages);
		in->stack = NULL;
	}
	if (spare)
		page_free(spare);
	snprintf(name, sizeof(name), "%s.%d", a->name, core);
	if (!in->argv || !in->stack || !(in->t = kthread_create(name, core, inst_main, in))) {
		app_inst_free(in);
		return NULL;
	}
	return in;
}

void app_result(struct app_inst *in, int *core, int *status, const char **why,
		uint64_t *us)
{
	*core = in->core;
	*status = in->status;
	*why = in->why;
	*us = us_of_tsc(in->end - in->start);
}

/* Wait for every instance; Ctrl-C tells them all to stop and goes on waiting. */
bool app_wait(struct app_inst **ins, int n)
{
	bool intr = false;

	for (int i = 0; i < n; i++)
		while (!__atomic_load_n(&ins[i]->done, __ATOMIC_ACQUIRE))
			if (thread_sleep_us(10000) == -EINTR) {
				thread_interrupted();
				intr = true;
				for (int j = 0; j < n; j++)
					WRITE_ONCE(ins[j]->stop, true);
			}
	for (int i = 0; i < n; i++)
		kthread_join(ins[i]->t);
	return intr;
}
