/*
 * fpcheck: floating point that only comes out right if the kernel keeps this thread's
 * FPU/SSE and x87 state across context switches (tests/t/apps-run runs two instances on
 * one core at once, each with its own value).
 *
 *	fpcheck V [N]	adds V (a small integer) N times (default 3,000,000) in SSE registers
 *			and in x87 registers, both kept in registers by the loop, and checks
 *			both sums against V * N (exact in double). Exit 0 when right.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double sse_sum(double v, long n)
{
	double a = 0, b = 0;

	for (long i = 0; i < n; i++) {
		a += v;
		b += a - a + v;		/* a second live register */
	}
	return (a + b) / 2;
}

__attribute__((noinline)) static long double x87_sum(long double v, long n)
{
	long double a = 0;

	for (long i = 0; i < n; i++)
		a += v;
	return a;
}

int main(int argc, char **argv)
{
	double v = argc > 1 ? atof(argv[1]) : 1;
	long n = argc > 2 ? atol(argv[2]) : 3000000;
	double s = sse_sum(v, n);
	long double x = x87_sum(v, n);
	int ok = s == v * (double)n && x == (long double)v * n;

	printf("fpcheck %g: sse %.1f x87 %.1Lf expected %.1f: %s\n", v, s, x, v * (double)n,
	       ok ? "ok" : "WRONG");
	return ok ? 0 : 1;
}
