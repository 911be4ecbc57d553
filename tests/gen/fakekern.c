/*
 * fakekern.c: a stand-in "kernel" for opreport's tests. Built as a static, non-PIE host ELF
 * with DWARF (-O0 -g), so its functions have fixed addresses and one line-table entry per
 * statement; tests/gen/opgen places samples at "function@line" addresses taken from it.
 * Keep the line numbers of the marked statements stable: golden files name them.
 */
#include <stdio.h>

volatile unsigned long fk_sink;

__attribute__((noinline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fk_sink += i;				/* line 14: spin's hot line */
	fk_sink ^= n;					/* line 15 */
}

__attribute__((noinline)) void matrix_inner(unsigned long *c, const unsigned long *a,
					    const unsigned long *b, int n)
{
	for (int k = 0; k < n; k++)
		*c += a[k] * b[k * n];			/* line 22: the multiply-add */
}

__attribute__((noinline)) void matrix_mul(unsigned long *c, const unsigned long *a,
					  const unsigned long *b, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			matrix_inner(&c[i * n + j], &a[i * n], &b[j], n);	/* line 30 */
}

__attribute__((noinline)) unsigned long fib(unsigned n)
{
	if (n < 2)
		return n;				/* line 36 */
	return fib(n - 1) + fib(n - 2);			/* line 37 */
}

__attribute__((noinline)) void idle_loop(void)
{
	fk_sink++;					/* line 42: "hlt" */
}

__attribute__((noinline)) void worker(int app)
{
	static unsigned long a[16], b[16], c[16];

	switch (app) {
	case 0:
		spin(1000);				/* line 51 */
		break;
	case 1:
		matrix_mul(c, a, b, 4);			/* line 54 */
		break;
	default:
		fk_sink += fib(20);			/* line 57 */
	}
}

__attribute__((noinline)) void kthread_entry(int app)
{
	worker(app);					/* line 63 */
}

int main(void)
{
	for (int app = 0; app < 3; app++)
		kthread_entry(app);			/* line 69 */
	idle_loop();
	printf("%lu\n", fk_sink);
	return 0;
}

/* Always inlined even at -O0: its code lives inside hash_loop, and DWARF's inline scopes say
 * so (tests/t/opreport-inline). */
static inline __attribute__((always_inline)) unsigned long mix_step(unsigned long x)
{
	x ^= x >> 7;					/* line 79: first inlined line */
	return x * 2654435761u;				/* line 80 */
}

__attribute__((noinline)) void hash_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fk_sink = mix_step(fk_sink + i);	/* line 86: the call site */
}
