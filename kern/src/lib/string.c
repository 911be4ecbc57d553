/*
 * The string.h subset kernel.h declares. Plain byte loops: these run on small kernel
 * buffers, and the compiler itself emits calls to memcpy/memset/memmove/memcmp for struct
 * copies and initializers, so they must exist and be correct before anything else works.
 *
 * Hazard: at -O2 gcc recognizes a byte-copy loop as "memcpy" and replaces it with a call
 * to memcpy, which inside memcpy is infinite recursion. NO_LIBCALL turns that
 * transformation off for the functions that would otherwise call themselves.
 */
#include "kernel.h"
#include "kmalloc.h"

#define NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

/*
 * memset and memcpy move 8 bytes at a time once the pointers allow it (x86 tolerates
 * unaligned words, but aligned ones are what the bulk users — blocks, pages — have):
 * eight times fewer iterations matter under emulation, where /dev/zero, the 9P client
 * and the profiler's reader spend their time here. memcpy moves eight words an iteration,
 * so its loop costs 20 instructions for 64 bytes (four words an iteration: 24), through
 * one register at a time, so the call pushes no callee-saved registers. Not rep
 * movsq: that is one instruction to an -icount emulator but microcode with a startup cost
 * on hardware, so it would only look cheaper here.
 */
NO_LIBCALL void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;

	for (; n && ((uintptr_t)p & 7); n--)
		*p++ = (unsigned char)c;
	for (; n >= 8; n -= 8, p += 8)
		*(uint64_t *)p = w;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

NO_LIBCALL void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if ((((uintptr_t)dp ^ (uintptr_t)sp) & 7) == 0) {
		for (; n && ((uintptr_t)dp & 7); n--)
			*dp++ = *sp++;
		for (; n >= 64; n -= 64, dp += 64, sp += 64) {
			/* word by word through one register: no callee-saved spills */
			uint64_t *dw = (uint64_t *)dp;
			const uint64_t *sw = (const uint64_t *)sp;

			dw[0] = sw[0];
			dw[1] = sw[1];
			dw[2] = sw[2];
			dw[3] = sw[3];
			dw[4] = sw[4];
			dw[5] = sw[5];
			dw[6] = sw[6];
			dw[7] = sw[7];
		}
		for (; n >= 8; n -= 8, dp += 8, sp += 8)
			*(uint64_t *)dp = *(const uint64_t *)sp;
	}
	while (n--)
		*dp++ = *sp++;
	return d;
}

/* Overlap-safe: copies backwards when the destination starts inside the source. */
NO_LIBCALL void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp == sp || n == 0)
		return d;
	if (dp < sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

NO_LIBCALL int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p < *q ? -1 : 1;
	return 0;
}

NO_LIBCALL size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

NO_LIBCALL size_t strnlen(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i])
		i++;
	return i;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

/* As in C, searching for '\0' finds the terminator. */
char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	for (;; s++) {
		if (*s == (char)c)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

/* Copies at most n-1 bytes and always terminates (n > 0); returns strlen(s) to detect cuts. */
size_t strlcpy(char *d, const char *s, size_t n)
{
	size_t len = strlen(s);

	if (n) {
		size_t k = len < n - 1 ? len : n - 1;

		memcpy(d, s, k);
		d[k] = '\0';
	}
	return len;
}

/* Thread context (kmalloc). NULL when memory is out. */
char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = kmalloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}
