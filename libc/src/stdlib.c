/*
 * stdlib.h for apps: memory from the run's heap (app_malloc: freed at the run's end), sorting and searching, random
 * numbers, and the ways out (exit, abort, assert). App code, thread context.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sys.h"

int errno;

/*
 * The run's heap (kern/apps/appheap.c) keeps each block's size and checks every pointer
 * handed back: a bad one ends the instance with a report rather than corrupt anything.
 */
void *malloc(size_t n)
{
	void *p = app_malloc(n);

	if (!p)
		errno = ENOMEM;
	return p;
}

void free(void *p)
{
	app_free(p);
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > ((size_t)1 << 40) / size)
		return NULL;
	if ((p = malloc(n * size)))
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q;
	size_t old;

	if (!p)
		return malloc(n);
	old = app_block_size(p);
	if (n <= old && n >= old / 2)
		return p;
	if (!(q = malloc(n)))
		return NULL;
	memcpy(q, p, n < old ? n : old);
	free(p);
	return q;
}

static void swap(char *a, char *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		char t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/* Quicksort on the middle element, insertion sort below 8, recursion on the smaller side. */
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;

	while (n > 7) {
		size_t i = 0, j = n - 1;

		swap(b, b + n / 2 * size, size);	/* pivot at 0 */
		for (;;) {
			while (++i < n && cmp(b + i * size, b) < 0)
				;
			while (cmp(b + j * size, b) > 0)
				j--;
			if (i >= j)
				break;
			swap(b + i * size, b + j * size, size);
		}
		swap(b, b + j * size, size);
		if (j < n - j - 1) {
			qsort(b, j, size, cmp);
			b += (j + 1) * size, n -= j + 1;
		} else {
			qsort(b + (j + 1) * size, n - j - 1, size, cmp);
			n = j;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k && cmp(b + (k - 1) * size, b + k * size) > 0; k--)
			swap(b + (k - 1) * size, b + k * size, size);
}

void *bsearch(const void *key, const void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *))
{
	const char *b = base;

	while (n) {
		const char *m = b + n / 2 * size;
		int c = cmp(key, m);

		if (!c)
			return (void *)m;
		if (c > 0)
			b = m + size, n -= n / 2 + 1;
		else
			n /= 2;
	}
	return NULL;
}

/* One sequence for every instance of every app, like any global of theirs. */
static unsigned long long rand_state = 1;

int rand(void)
{
	rand_state = rand_state * 6364136223846793005ull + 1442695040888963407ull;
	return (int)(rand_state >> 33);
}

void srand(unsigned seed) { rand_state = seed; }

int abs(int v) { return v < 0 ? -v : v; }
long labs(long v) { return v < 0 ? -v : v; }
div_t div(int a, int b) { return (div_t){ a / b, a % b }; }
ldiv_t ldiv(long a, long b) { return (ldiv_t){ a / b, a % b }; }
char *getenv(const char *name) { (void)name; return NULL; }

void exit(int status) { app_exit(status); }
void abort(void) { app_abort("abort() called"); }

void __assert_fail(const char *expr, const char *file, int line, const char *fn)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "assertion failed: %s (%s:%d, in %s)", expr, file, line, fn);
	app_abort(msg);
}
