/*
 * faulty: an app that does what it is told to go wrong (tests/t/apps-run).
 *	faulty null | recurse | div | ud | spin | exit N | abort | big | leak N | ok
 * big uses a 200 KiB local array: within the default stack, it must not fault. leak N
 * keeps N blocks of 2000 bytes (malloc, realloc) and 100 of 5 (strdup), frees the rest, then
 * dereferences NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int faulty_zero;
int *volatile faulty_nowhere;

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

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "ok";

	printf("faulty: %s\n", what);
	if (!strcmp(what, "null"))
		return faulty_null();
	if (!strcmp(what, "recurse"))
		return faulty_recurse(0);
	if (!strcmp(what, "div"))
		return faulty_div(argc);
	if (!strcmp(what, "ud"))
		__builtin_trap();
	if (!strcmp(what, "spin"))
		return (int)faulty_spin();
	if (!strcmp(what, "exit"))
		exit(argc > 2 ? atoi(argv[2]) : 1);
	if (!strcmp(what, "abort"))
		abort();
	if (!strcmp(what, "big"))
		return faulty_big();
	if (!strcmp(what, "leak"))
		return faulty_leak(argc > 2 ? atoi(argv[2]) : 100);
	return 0;
}
