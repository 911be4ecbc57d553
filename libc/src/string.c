/*
 * string.h for apps (app code; any instance, no shared state but strtok's). Built with
 * -fno-tree-loop-distribute-patterns so that no loop here becomes a call to itself.
 */
#include <stdlib.h>
#include <string.h>

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	void *r = d;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory");
	return r;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

void *memset(void *d, int c, size_t n)
{
	void *r = d;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return r;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i])
		i++;
	return i;
}

char *strcpy(char *restrict d, const char *restrict s)
{
	return memcpy(d, s, strlen(s) + 1);
}

char *strncpy(char *restrict d, const char *restrict s, size_t n)
{
	size_t k = strnlen(s, n);

	memcpy(d, s, k);
	memset(d + k, 0, n - k);
	return d;
}

char *strcat(char *restrict d, const char *restrict s)
{
	strcpy(d + strlen(d), s);
	return d;
}

char *strncat(char *restrict d, const char *restrict s, size_t n)
{
	char *e = d + strlen(d);
	size_t k = strnlen(s, n);

	memcpy(e, s, k);
	e[k] = 0;
	return d;
}

int strcmp(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n && *a && *a == *b; n--, a++, b++)
		;
	return n ? (unsigned char)*a - (unsigned char)*b : 0;
}

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
	const char *r = NULL;

	for (;; s++) {
		if (*s == (char)c)
			r = s;
		if (!*s)
			return (char *)r;
	}
}

char *strstr(const char *h, const char *n)
{
	size_t k = strlen(n);

	for (; *h; h++)
		if (!strncmp(h, n, k))
			return (char *)h;
	return k ? NULL : (char *)h;
}

size_t strspn(const char *s, const char *acc)
{
	size_t i = 0;

	while (s[i] && strchr(acc, s[i]))
		i++;
	return i;
}

size_t strcspn(const char *s, const char *rej)
{
	size_t i = 0;

	while (s[i] && !strchr(rej, s[i]))
		i++;
	return i;
}

char *strpbrk(const char *s, const char *acc)
{
	s += strcspn(s, acc);
	return *s ? (char *)s : NULL;
}

/* One position for every instance of every app: a portable program's usual assumption. */
static char *tok_next;

char *strtok(char *restrict s, const char *restrict delim)
{
	char *e;

	if (!s && !(s = tok_next))
		return NULL;
	s += strspn(s, delim);
	if (!*s)
		return tok_next = NULL;
	e = s + strcspn(s, delim);
	tok_next = *e ? e + 1 : NULL;
	*e = 0;
	return s;
}

char *strndup(const char *s, size_t n)
{
	size_t k = strnlen(s, n);
	char *d = malloc(k + 1);

	if (d) {
		memcpy(d, s, k);
		d[k] = 0;
	}
	return d;
}

char *strdup(const char *s) { return strndup(s, (size_t)-1); }

char *strerror(int e)
{
	switch (e) {
	case 0: return "Success";
	case 12: return "Out of memory";
	case 22: return "Invalid argument";
	case 33: return "Numerical argument out of domain";
	case 34: return "Numerical result out of range";
	}
	return "Unknown error";
}
