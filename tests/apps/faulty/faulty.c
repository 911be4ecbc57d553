/*
 * faulty: an app that does what it is told to go wrong (tests/t/apps-run, apps-heap,
 * shell-input). `faulty MODE [ARGS]`, the modes are the rows of modes[] below.
 *
 * big uses a 200 KiB local array: within the default stack, it must not fault. leak N
 * keeps N blocks of 2000 bytes (malloc, realloc) and 100 of 5 (strdup), frees the rest, then
 * dereferences NULL. The heap modes make one ordinary heap bug each, then print "still
 * here" (which they must never reach). churn allocates, grows and frees blocks of every
 * size class and checks that none ever held another's bytes. hog N takes every byte malloc
 * gives, says so, holds it N seconds and returns. args prints what main was given (the
 * last argument's first 16 bytes in hex).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile int faulty_zero;
int *volatile faulty_nowhere;
char *volatile faulty_sink;

__attribute__((noinline)) int faulty_null(void) { return *faulty_nowhere; }

__attribute__((noinline)) int faulty_recurse(int n)
{
	volatile char pad[256];

	pad[0] = (char)n;
	if (faulty_zero > 1)		/* never: recurse until the stack runs out */
		return 0;
	return faulty_recurse(n + 1) + pad[0];
}

__attribute__((noinline)) int faulty_div(int a) { return a / faulty_zero; }

__attribute__((noinline)) double faulty_spin(void)
{
	double x = 0;

	for (;;)
		x += 1.5;
	return x;
}

__attribute__((noinline)) int faulty_big(void)
{
	volatile char big[200 * 1024];

	for (size_t i = 0; i < sizeof(big); i += 512)
		big[i] = (char)i;
	return big[1024] == (char)1024 ? 0 : 1;
}

__attribute__((noinline)) int faulty_leak(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(1000), *q = malloc(64);

		if (!p || !q || !(p = realloc(p, 2000)))
			return 2;
		memset(p, i, 2000);
		free(q);
	}
	for (int i = 0; i < 100; i++)
		if (!strdup("leak"))
			return 2;
	return faulty_null();
}

/* ---- heap bugs: each must end the instance inside free or realloc ---- */

__attribute__((noinline)) void faulty_dfree(void)
{
	char *p = malloc(32);

	free(p);
	free(p);
}

/* the audit's case: 256 bytes into a 24-byte block, then the block after it freed first */
__attribute__((noinline)) void faulty_smash(void)
{
	char *a = malloc(24), *b = malloc(24);

	memset(a, 'A', 256);
	free(b);
	free(a);
}

__attribute__((noinline)) void faulty_overflow(int len)
{
	char *p = malloc((size_t)len);

	p[len] = 1;	/* one byte past the end */
	free(p);
}

__attribute__((noinline)) void faulty_underflow(void)
{
	char *p = malloc(40);

	p[-1] = 0;
	free(p);
}

__attribute__((noinline)) void faulty_freestack(void)
{
	char local[64] = { 0 };

	faulty_sink = local;
	free(local + 16);
}

__attribute__((noinline)) void faulty_freeglobal(void) { free((void *)&faulty_zero); }
__attribute__((noinline)) void faulty_freecode(void) { free((void *)(size_t)printf); }

__attribute__((noinline)) void faulty_freemid(void)
{
	char *p = malloc(100);

	free(p + 8);
}

__attribute__((noinline)) void faulty_realloc(void)
{
	char local[64];

	faulty_sink = realloc(local, 128);
}

__attribute__((noinline)) void faulty_bigdfree(void)
{
	char *p = malloc(100000);

	free(p);
	free(p);
}

/* a block written past its end and never freed: found when the run ends */
__attribute__((noinline)) void faulty_overrun_kept(void)
{
	char *p = malloc(10);

	memset(p, 'x', 11);
}

/* ---- the heap working ---- */

static unsigned churn_seed = 12345;

static unsigned churn_rand(void)
{
	churn_seed = churn_seed * 1103515245u + 12345u;
	return churn_seed >> 8;
}

/* every block holds its own index as a byte pattern, checked before each change */
__attribute__((noinline)) int faulty_churn(int rounds)
{
	enum { N = 64 };
	unsigned char *b[N] = { 0 };
	size_t len[N] = { 0 };

	for (int r = 0; r < rounds; r++) {
		int i = (int)(churn_rand() % N);
		size_t n = churn_rand() % (churn_rand() % 4 ? 3000 : 20000);

		for (size_t k = 0; k < len[i]; k++)
			if (b[i][k] != (unsigned char)(i + k)) {
				printf("faulty churn: block %d byte %zu changed\n", i, k);
				return 3;
			}
		if (!b[i] || churn_rand() % 3 == 0) {
			free(b[i]);
			b[i] = malloc(n);
		} else {
			b[i] = realloc(b[i], n);
		}
		if (!b[i] && n)
			return 2;
		for (size_t k = 0; k < n; k++)
			b[i][k] = (unsigned char)(i + k);
		len[i] = n;
	}
	for (int i = 0; i < N; i++)
		free(b[i]);
	printf("faulty churn: %d rounds ok\n", rounds);
	return 0;
}

__attribute__((noinline)) int faulty_hog(int secs)
{
	size_t big = 0, small = 0;
	clock_t end;

	while (malloc(1 << 20))
		big++;
	while (malloc(64))
		small++;
	printf("faulty hog: holding %zu MiB and %zu small blocks for %d s\n", big, small, secs);
	end = clock() + (clock_t)secs * CLOCKS_PER_SEC;
	while (clock() < end)
		;
	return 0;
}

/* what main got: the count, the bytes, and the last argument's first bytes in hex */
static int faulty_args(int argc, char **argv)
{
	const unsigned char *last = (const unsigned char *)argv[argc - 1];
	size_t total = 0;

	for (int i = 0; i < argc; i++)
		total += strlen(argv[i]);
	printf("faulty args: argc %d, %zu bytes, last %zu bytes:", argc, total, strlen(argv[argc - 1]));
	for (int i = 0; i < 16 && last[i]; i++)
		printf(" %02x", last[i]);
	printf("\n");
	return 0;
}

/* ---- the modes ---- */

static int num(int argc, char **argv, int dflt)
{
	return argc > 2 ? atoi(argv[2]) : dflt;
}

static int m_null(int c, char **v) { (void)c, (void)v; return faulty_null(); }
static int m_recurse(int c, char **v) { (void)c, (void)v; return faulty_recurse(0); }
static int m_div(int c, char **v) { (void)v; return faulty_div(c); }
static int m_ud(int c, char **v) { (void)c, (void)v; __builtin_trap(); }
static int m_spin(int c, char **v) { (void)c, (void)v; return (int)faulty_spin(); }
static int m_exit(int c, char **v) { exit(num(c, v, 1)); }
static int m_return(int c, char **v) { return num(c, v, 1); }
static int m_abort(int c, char **v) { (void)c, (void)v; abort(); }
static int m_big(int c, char **v) { (void)c, (void)v; return faulty_big(); }
static int m_leak(int c, char **v) { return faulty_leak(num(c, v, 100)); }
static int m_dfree(int c, char **v) { (void)c, (void)v; faulty_dfree(); return 0; }
static int m_smash(int c, char **v) { (void)c, (void)v; faulty_smash(); return 0; }
static int m_overflow(int c, char **v) { faulty_overflow(num(c, v, 24)); return 0; }
static int m_underflow(int c, char **v) { (void)c, (void)v; faulty_underflow(); return 0; }
static int m_freestack(int c, char **v) { (void)c, (void)v; faulty_freestack(); return 0; }
static int m_freeglobal(int c, char **v) { (void)c, (void)v; faulty_freeglobal(); return 0; }
static int m_freecode(int c, char **v) { (void)c, (void)v; faulty_freecode(); return 0; }
static int m_freemid(int c, char **v) { (void)c, (void)v; faulty_freemid(); return 0; }
static int m_realloc(int c, char **v) { (void)c, (void)v; faulty_realloc(); return 0; }
static int m_bigdfree(int c, char **v) { (void)c, (void)v; faulty_bigdfree(); return 0; }
static int m_overrun_kept(int c, char **v) { (void)c, (void)v; faulty_overrun_kept(); return 0; }
static int m_churn(int c, char **v) { return faulty_churn(num(c, v, 20000)); }
static int m_hog(int c, char **v) { return faulty_hog(num(c, v, 1)); }
static int m_ok(int c, char **v) { (void)c, (void)v; return 0; }

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	int heap_bug;		/* returning from it is a failure: say so */
} modes[] = {
	{ "null", m_null, 0 }, { "recurse", m_recurse, 0 }, { "div", m_div, 0 },
	{ "ud", m_ud, 0 }, { "spin", m_spin, 0 }, { "exit", m_exit, 0 },
	{ "return", m_return, 0 }, { "abort", m_abort, 0 }, { "big", m_big, 0 },
	{ "leak", m_leak, 0 }, { "dfree", m_dfree, 1 }, { "smash", m_smash, 1 },
	{ "overflow", m_overflow, 1 }, { "underflow", m_underflow, 1 },
	{ "freestack", m_freestack, 1 }, { "freeglobal", m_freeglobal, 1 },
	{ "freecode", m_freecode, 1 }, { "freemid", m_freemid, 1 },
	{ "realloc", m_realloc, 1 }, { "bigdfree", m_bigdfree, 1 },
	{ "overrun-kept", m_overrun_kept, 0 }, { "churn", m_churn, 0 }, { "hog", m_hog, 0 },
	{ "args", faulty_args, 0 }, { "ok", m_ok, 0 },
};

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "ok";

	if (strcmp(what, "args"))
		printf("faulty: %s\n", what);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int r;

		if (strcmp(what, modes[i].name))
			continue;
		r = modes[i].run(argc, argv);
		if (modes[i].heap_bug)
			printf("faulty %s: still here: the heap did not notice\n", what);
		return r;
	}
	printf("faulty: no mode %s\n", what);
	return 2;
}
