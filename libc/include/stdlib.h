#ifndef _STDLIB_H
#define _STDLIB_H
#include <_libc.h>
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
typedef struct { int quot, rem; } div_t;
typedef struct { long quot, rem; } ldiv_t;
void *malloc(size_t n) __LIBC(malloc);
void *calloc(size_t n, size_t size) __LIBC(calloc);
void *realloc(void *p, size_t n) __LIBC(realloc);
void free(void *p) __LIBC(free);
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
	__LIBC(qsort);
void *bsearch(const void *key, const void *base, size_t n, size_t size,
	      int (*cmp)(const void *, const void *)) __LIBC(bsearch);
long strtol(const char *restrict s, char **restrict end, int base) __LIBC(strtol);
long long strtoll(const char *restrict s, char **restrict end, int base) __LIBC(strtol);
unsigned long strtoul(const char *restrict s, char **restrict end, int base) __LIBC(strtoul);
unsigned long long strtoull(const char *restrict s, char **restrict end, int base)
	__LIBC(strtoul);
double strtod(const char *restrict s, char **restrict end) __LIBC(strtod);
float strtof(const char *restrict s, char **restrict end) __LIBC(strtof);
int atoi(const char *s) __LIBC(atoi);
long atol(const char *s) __LIBC(atol);
long long atoll(const char *s) __LIBC(atol);
double atof(const char *s) __LIBC(atof);
int abs(int v) __LIBC(abs);
long labs(long v) __LIBC(labs);
long long llabs(long long v) __LIBC(labs);
div_t div(int a, int b) __LIBC(div);
ldiv_t ldiv(long a, long b) __LIBC(ldiv);
int rand(void) __LIBC(rand);
void srand(unsigned seed) __LIBC(srand);
/* exit ends this instance of the app only (status 0..255); there are no atexit handlers. */
void exit(int status) __LIBC(exit) __attribute__((noreturn));
void _Exit(int status) __LIBC(exit) __attribute__((noreturn));
void abort(void) __LIBC(abort) __attribute__((noreturn));
char *getenv(const char *name) __LIBC(getenv);	/* always NULL: no environment */
int system(const char *cmd) __LIBC_MISSING(system);
int atexit(void (*fn)(void)) __LIBC_MISSING(atexit);
#endif
