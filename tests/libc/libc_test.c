/*
 * Host test of the apps' C library (libc/): its printf family, strtod/strtol, qsort and
 * bsearch, string functions and math against the host's glibc on a table of cases. The
 * library is compiled with its own headers, where every function is libc_NAME; this file
 * uses glibc's and calls ours by those names. Prints each difference; exit 1 if any.
 */
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int libc_snprintf(char *buf, size_t n, const char *fmt, ...);
double libc_strtod(const char *s, char **end);
long libc_strtol(const char *s, char **end, int base);
unsigned long libc_strtoul(const char *s, char **end, int base);
void libc_qsort(void *b, size_t n, size_t size, int (*cmp)(const void *, const void *));
void *libc_bsearch(const void *k, const void *b, size_t n, size_t size,
		   int (*cmp)(const void *, const void *));
char *libc_strstr(const char *h, const char *n);
char *libc_strtok(char *s, const char *d);
size_t libc_strcspn(const char *s, const char *r);
double libc_sqrt(double), libc_exp(double), libc_log(double), libc_pow(double, double);
double libc_sin(double), libc_cos(double), libc_atan2(double, double), libc_fmod(double, double);
double libc_floor(double), libc_ceil(double), libc_round(double);

/* what libc/src/sys.h asks of the kernel */
void *app_malloc(size_t n) { return malloc(n); }
void app_free(void *p) { free(p); }
size_t app_block_size(void *p) { return malloc_usable_size(p); }	/* at least asked */
void app_write(const char *s, size_t n) { fwrite(s, 1, n, stdout); }
void app_exit(int st) { exit(st); }
void app_abort(const char *why) { fprintf(stderr, "%s\n", why); abort(); }
uint64_t tsc_read(void) { return 0; }
uint64_t tsc_hz(void) { return 1000000000; }

static int bad;

#define SAME(fmt, ...) do {							\
	char a[800], b[800];							\
	int ra = libc_snprintf(a, sizeof(a), fmt, __VA_ARGS__);		\
	int rb = snprintf(b, sizeof(b), fmt, __VA_ARGS__);			\
	if (strcmp(a, b) || ra != rb) {						\
		printf("printf %s: ours '%s' (%d), glibc '%s' (%d)\n", fmt, a, ra, b, rb); \
		bad++;								\
	}									\
} while (0)

static void test_printf(void)
{
	static const double vs[] = { 0, 1, -1, 0.5, 1.5, 2.5, 3.14159265358979, 1e-5, 123456.789,
		1e17, 1e-20, 9.9999999, 0.000123456, 100, -0.0, 999999.4, 0.1, 12345678901234.5,
		2.0 / 3, 1e300, 4.9e-324, 1.7976931348623157e308, 65536.125 };
	static const char *const fs[] = { "%f", "%.0f", "%.2f", "%.10f", "%e", "%.0e", "%.3e",
		"%E", "%g", "%.3g", "%.10g", "%G", "%10.3f", "%-12.2e|", "%+f", "% g", "%010.2f",
		"%.1g", "%.15g", "%#.0f", "%#.3g", "%12g|" };
	char small[8];

	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++)
			if (!(vs[i] >= 1e18 && strchr(fs[k], 'f')))	/* digits past 18: zeros */
				SAME(fs[k], vs[i]);
	SAME("%f %e %g", INFINITY, -INFINITY, NAN);
	SAME("%d %5d %-5d| %05d %x %X %#x %o %#o %u %ld %lld %hhd %zu %s %.2s %c %%", 42, -42, 7,
	     -3, 255u, 255u, 255u, 8u, 8u, 3000000000u, -5L, 1LL << 40, 300, (size_t)9, "str",
	     "abc", 'z');
	SAME("%.3d %.0d| %+d % d %*d %-*d| %ld %lu", 5, 0, 5, 5, 6, 1, 4, 2, (long)INT64_MIN,
	     (unsigned long)UINT64_MAX);
	SAME("%p %s|%10s|%-10s|", (void *)0x1234, "x", "right", "left");
	if (libc_snprintf(small, sizeof(small), "%s", "truncated") != 9 || strcmp(small, "truncat"))
		printf("snprintf truncation: '%s'\n", small), bad++;
}

static void test_strto(void)
{
	static const char *const ds[] = { "0", "1", "-2.5", "3.25e2", "1e-5", "0.1", "123456.789",
		"1e300", "  42xyz", "inf", "-nan", ".5", "5.", "1.7976931348623157e308", "2.2250738585072014e-308",
		"0.30000000000000004", "abc" };
	static const char *const is[] = { "0", "-17", "0x1f", "017", "  +99 rest", "9223372036854775807",
		"-9223372036854775808", "99999999999999999999", "z" };

	for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
		char *e1, *e2;
		double a = libc_strtod(ds[i], &e1), b = strtod(ds[i], &e2);

		if ((a != b && !(isnan(a) && isnan(b))) || e1 - ds[i] != e2 - ds[i])
			printf("strtod %s: ours %.17g (+%td), glibc %.17g (+%td)\n", ds[i], a,
			       e1 - ds[i], b, e2 - ds[i]), bad++;
	}
	for (size_t i = 0; i < sizeof(is) / sizeof(is[0]); i++)
		for (int base = 0; base <= 16; base += 8) {
			char *e1, *e2;
			long a = libc_strtol(is[i], &e1, base), b = strtol(is[i], &e2, base);

			if (a != b || e1 != e2)
				printf("strtol %s base %d: ours %ld, glibc %ld\n", is[i], base, a, b), bad++;
		}
	if (libc_strtoul("0xffffffffffffffff", NULL, 16) != UINT64_MAX)
		printf("strtoul of the largest value\n"), bad++;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void test_sort(void)
{
	int v[1000], n = 0;

	for (int len = 0; len < 1000; len = len * 2 + 1) {
		for (int i = 0; i < len; i++)
			v[i] = (int)((unsigned)i * 2654435761u % 97);
		libc_qsort(v, (size_t)len, sizeof(int), cmp_int);
		for (int i = 1; i < len; i++)
			if (v[i - 1] > v[i])
				printf("qsort of %d: out of order at %d\n", len, i), bad++, i = len;
	}
	for (int i = 0; i < 500; i++)
		v[i] = 3 * i;
	for (int k = -1; k < 1500; k++) {
		int *p = libc_bsearch(&k, v, 500, sizeof(int), cmp_int);

		n += (p != NULL) != (k >= 0 && k % 3 == 0);
	}
	if (n)
		printf("bsearch: %d wrong answers\n", n), bad++;
}

static void test_string_math(void)
{
	char buf[] = "a,b;;c", *t1 = libc_strtok(buf, ",;"), *t2 = libc_strtok(NULL, ",;"),
	     *t3 = libc_strtok(NULL, ",;");
	static const double xs[] = { 0.5, 1, 2, 3.7, 10, 100.25 };

	if (strcmp(t1, "a") || strcmp(t2, "b") || strcmp(t3, "c") || libc_strtok(NULL, ",;"))
		printf("strtok\n"), bad++;
	if (libc_strstr("hello world", "o w") != strstr("hello world", "o w") ||
	    libc_strcspn("abc;d", ";") != 3)
		printf("strstr/strcspn\n"), bad++;
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double x = xs[i];
		double r[][2] = { { libc_sqrt(x), sqrt(x) }, { libc_exp(x), exp(x) },
			{ libc_log(x), log(x) }, { libc_pow(x, 2.5), pow(x, 2.5) },
			{ libc_sin(x), sin(x) }, { libc_cos(x), cos(x) },
			{ libc_atan2(x, 2), atan2(x, 2) }, { libc_fmod(x, 0.75), fmod(x, 0.75) },
			{ libc_floor(-x), floor(-x) }, { libc_ceil(x), ceil(x) },
			{ libc_round(x), round(x) } };

		for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++)
			if (fabs(r[k][0] - r[k][1]) > 1e-12 * fmax(1, fabs(r[k][1])))
				printf("math function %zu at %g: ours %.17g, glibc %.17g\n", k, x,
				       r[k][0], r[k][1]), bad++;
	}
}

int main(void)
{
	test_printf();
	test_strto();
	test_sort();
	test_string_math();
	printf("%s: %d difference(s)\n", bad ? "FAIL" : "ok", bad);
	return bad != 0;
}
