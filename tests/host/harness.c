/*
 * harness.c: the host tests' shared harness (harness.h), called by every tests/host test
 * program's main and by its checks, from any of its threads.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define PRINT_MAX	8	/* failures printed per subtest */

bool harness_quick;
static int fails;			/* in the running subtest, from any thread */
static unsigned long checks;		/* made in the running subtest */
static const char *volatile running;	/* the subtest's name, for the watchdog */

void harness_ok(void)
{
	__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
}

void harness_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&fails, 1, __ATOMIC_RELAXED) >= PRINT_MAX)
		return;
	va_start(ap, fmt);
	flockfile(stderr);
	fprintf(stderr, "    ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s:%d)\n", file, line);
	funlockfile(stderr);
	va_end(ap);
}

int harness_failures(void)
{
	return __atomic_load_n(&fails, __ATOMIC_RELAXED);
}

/* A hang (a lost wakeup, a missed end of stream) becomes a verdict line; signal-safe. */
static void watchdog(int sig)
{
	static const char pre[] = "FAIL ", post[] = " (timed out)\n";
	const char *name = running;

	(void)sig;
	if (write(1, pre, sizeof(pre) - 1) < 0 || write(1, name, strlen(name)) < 0 ||
	    write(1, post, sizeof(post) - 1) < 0)
		_exit(3);
	_exit(2);
}

static bool run_one(const struct harness *h, const struct harness_test *t, unsigned timeout)
{
	running = t->name;
	__atomic_store_n(&fails, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&checks, 0, __ATOMIC_RELAXED);
	alarm(timeout);
	t->fn();
	if (h->after)
		h->after();
	alarm(0);
	printf("%s %s (%lu checks)\n", harness_failures() ? "FAIL" : "PASS", t->name,
	       __atomic_load_n(&checks, __ATOMIC_RELAXED));
	return harness_failures() == 0;
}

int harness_run(const struct harness *h, int argc, char **argv)
{
	const char *e = getenv("HOST_TEST_TIMEOUT"), *only = NULL;
	unsigned timeout = e ? (unsigned)atoi(e) : h->timeout, failed = 0, ran = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGALRM, watchdog);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q"))
			harness_quick = true;
		else
			only = argv[i];
	}
	for (size_t i = 0; i < h->ntests; i++) {
		if (only && strcmp(h->tests[i].name, only) != 0)
			continue;
		ran++;
		failed += !run_one(h, &h->tests[i], timeout);
	}
	if (only && !ran) {
		printf("FAIL no subtest named '%s'\n", only);
		return 1;
	}
	printf("%u of %u subtests failed\n", failed, ran);
	return failed ? 1 : 0;
}
