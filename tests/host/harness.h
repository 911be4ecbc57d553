/*
 * harness.h: the host tests' shared harness, used by every tests/host test program: checks
 * that count and report from any thread, a table of named subtests run one at a time under
 * a watchdog, and the verdict lines tests/lib/host-variants.sh reads ("PASS name",
 * "FAIL name").
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"

/*
 * CHECK(c): a failed check prints the expression; CHECKF(c, fmt, ...) prints the message.
 * FAIL(fmt, ...) is a check that failed. Any thread may check; a subtest fails when one of
 * the checks made while it ran failed. Only the first few failures of a subtest print.
 */
#define CHECK(c) do { \
	if (c) harness_ok(); else harness_fail(__FILE__, __LINE__, "check failed: %s", #c); \
} while (0)
#define CHECKF(c, ...) do { \
	if (c) harness_ok(); else harness_fail(__FILE__, __LINE__, __VA_ARGS__); \
} while (0)
#define FAIL(...) harness_fail(__FILE__, __LINE__, __VA_ARGS__)

void harness_ok(void);
__printf(3, 4) void harness_fail(const char *file, int line, const char *fmt, ...);
/* failed checks so far in the running subtest */
int harness_failures(void);

struct harness_test {
	const char *name;
	void (*fn)(void);
};

struct harness {
	const struct harness_test *tests;
	size_t ntests;
	unsigned timeout;	/* seconds per subtest; HOST_TEST_TIMEOUT overrides */
	void (*after)(void);	/* optional: checks after every subtest (leaks), part of it */
};

/* -q on the command line: subtests may run a shorter version */
extern bool harness_quick;

/*
 * Runs the subtests (only the one named on the command line, if one is) and prints a
 * verdict line for each; returns the exit status: 0 when every subtest passed. A subtest
 * that outlives its timeout ends the program with "FAIL name (timed out)".
 */
int harness_run(const struct harness *h, int argc, char **argv);

#endif
