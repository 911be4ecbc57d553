/*
 * printf_test.c: run by tests/t/host-printf (build/host/printf{,-tsan,-asan}), on the shared harness.
 * Host test of kern/src/lib/printf.c (vsnprintf/snprintf): a table of formats with the exact
 * expected output, truncation semantics, and a differential check of integer conversions
 * against the C library's vsnprintf (found with dlsym, since ours shadows it).
 * Prints PASS/FAIL per subtest (harness.h); the exit status is the verdict.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "harness.h"

typedef int (*vsnprintf_fn)(char *, size_t, const char *, va_list);

/* No format attribute: the table holds formats gcc would (rightly) warn about. */
static void check_(int line, const char *expect, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	CHECKF(!strcmp(buf, expect) && n == (int)strlen(expect),
	       "line %d: format \"%s\": got \"%s\" (%d), want \"%s\" (%zu)", line, fmt, buf, n,
	       expect, strlen(expect));
}
#define check(...) check_(__LINE__, __VA_ARGS__)

static void test_table(void)
{
	check("hello", "hello");
	check("%", "%%");
	check("42 -42 0", "%d %i %d", 42, -42, 0);
	check("-2147483648 2147483647", "%d %d", INT_MIN, INT_MAX);
	check("4294967295", "%u", UINT_MAX);
	check("ff FF 0xff 0XFF 0", "%x %X %#x %#X %#x", 255, 255, 255, 255, 0);
	check("-9223372036854775808", "%ld", LONG_MIN);
	check("18446744073709551615", "%lu", ULONG_MAX);
	check("ffffffffffffffff", "%llx", ULLONG_MAX);
	check("123456789012", "%lld", 123456789012ll);
	check("12 -3 1f", "%zu %zd %zx", (size_t)12, (ssize_t)-3, (size_t)31);
	check("0x0 0x1000", "%p %p", (void *)0, (void *)0x1000);
	check("[   42][42   ][00042][-0042]", "[%5d][%-5d][%05d][%05d]", 42, 42, 42, -42);
	check("[  -42][+42][ 42]", "[%5d][%+d][% d]", -42, 42, 42);
	check("[   7][7   ]", "[%*d][%*d]", 4, 7, -4, 7);
	check("[007][  007][]", "[%.3d][%5.3d][%.0d]", 7, 7, 0);
	check("[abc][ab][  abc][abc  ]", "[%s][%.2s][%5s][%-5s]", "abc", "abc", "abc", "abc");
	check("[hel]", "[%.*s]", 3, "hello");
	check("[hello]", "[%.*s]", -1, "hello");
	check("(null)", "%s", (char *)NULL);
	check("[x][  x][x  ]", "[%c][%3c][%-3c]", 'x', 'x', 'x');
	check("17 021", "%o %#o", 15, 17);
	check("255 -1 65535", "%hhu %hhd %hu", 0x1ff, 255, 0x1ffff);
	check("%q", "%q");
	check("end %", "end %");
	check("0000cafe", "%08x", 0xcafe);
	check("[      cafe]", "[%10.4x]", 0xcafe);
	check("0x00001000", "%#010x", 0x1000);
}

/* A call gcc cannot check or fold, so the truncation paths of ours really run. */
static int fmt_n(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

static void test_truncation(void)
{
	char buf[8];
	int n;

	memset(buf, 'Z', sizeof(buf));
	n = fmt_n(buf, 4, "%s", "abcdef");
	CHECKF(n == 6 && !strcmp(buf, "abc") && buf[4] == 'Z', "truncation: n=%d buf=\"%s\"", n,
	       buf);
	n = fmt_n(NULL, 0, "%d", 12345);
	CHECKF(n == 5, "size query: n=%d", n);
	n = fmt_n(buf, 1, "xyz");
	CHECKF(n == 3 && buf[0] == '\0', "cap 1: n=%d", n);
}

static void compare_(vsnprintf_fn libc, const char *fmt, ...)
{
	char ours[128], theirs[128];
	va_list ap, ap2;
	int a, b;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	a = vsnprintf(ours, sizeof(ours), fmt, ap);
	b = libc(theirs, sizeof(theirs), fmt, ap2);
	va_end(ap2);
	va_end(ap);
	CHECKF(a == b && !strcmp(ours, theirs), "differs from libc: \"%s\": ours \"%s\" (%d), "
	       "libc \"%s\" (%d)", fmt, ours, a, theirs, b);
}

/* Every flag/width/precision combination over a few values, %d %u %x %X %o and %ld. */
static void test_against_libc(void)
{
	static const char *flags[] = { "", "-", "0", "+", " ", "#", "-0", "+0", "-#", "0#" };
	static const char *widths[] = { "", "1", "6", "22" };
	static const char *precs[] = { "", ".0", ".3", ".21" };
	static const char convs[] = "duxXo";
	static const long vals[] = { 0, 1, -1, 42, -42, 255, INT_MAX, INT_MIN, LONG_MAX, LONG_MIN };
	vsnprintf_fn libc = (vsnprintf_fn)dlsym(RTLD_NEXT, "vsnprintf");
	char fmt[32];

	if (!libc) {
		printf("no libc vsnprintf: skipping the differential test\n");
		return;
	}
	for (size_t f = 0; f < ARRAY_SIZE(flags); f++)
		for (size_t w = 0; w < ARRAY_SIZE(widths); w++)
			for (size_t p = 0; p < ARRAY_SIZE(precs); p++)
				for (size_t c = 0; c < sizeof(convs) - 1; c++)
					for (size_t v = 0; v < ARRAY_SIZE(vals); v++) {
						snprintf(fmt, sizeof(fmt), "[%%%s%s%s%c]", flags[f],
							 widths[w], precs[p], convs[c]);
						compare_(libc, fmt, (int)vals[v]);
						snprintf(fmt, sizeof(fmt), "[%%%s%s%sl%c]", flags[f],
							 widths[w], precs[p], convs[c]);
						compare_(libc, fmt, vals[v]);
					}
}

static const struct harness_test tests[] = {
	{ "table", test_table },
	{ "truncation", test_truncation },
	{ "against_libc", test_against_libc },
};

int main(int argc, char **argv)
{
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 60, NULL }, argc, argv);
}
