/*
 * What every portable kernel file needs: fixed-width types, printk, panic, assertions and
 * a few helpers. Freestanding: only the compiler's own headers (stdint, stddef, stdbool,
 * stdarg) are used, so the same sources also compile on the host against tests/host/shim.
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef long ssize_t;

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#define ROUNDUP(x, n)	(((x) + (n) - 1) / (n) * (n))
#define ROUNDDOWN(x, n)	((x) / (n) * (n))
#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define READ_ONCE(x)	(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define __noreturn	__attribute__((noreturn))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __aligned(n)	__attribute__((aligned(n)))
#define __noinline	__attribute__((noinline))
#define __force_inline	inline __attribute__((always_inline))
#define CACHELINE	64

/*
 * Compiler barriers: no instruction is emitted, only what the compiler may assume changes.
 *
 * signal_fence() orders this context's memory accesses against an interrupt or NMI that
 * lands on the same core (the CPU keeps program order for its own core; the compiler
 * must too): a store before it is made before the loads and stores after it.
 *
 * hide_value(x) makes the compiler forget how x was computed (x stays in a register): it
 * keeps the one value instead of computing it again from its parts at each use.
 */
#define signal_fence()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#define hide_value(x)	__asm__("" : "+r"(x))

/* Print to the console (serial). Any context; output of one call is not interleaved. */
int printk(const char *fmt, ...) __printf(1, 2);
int vprintk(const char *fmt, va_list ap);
int snprintf(char *buf, size_t n, const char *fmt, ...) __printf(3, 4);
int vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);

/* Print the message and a backtrace, stop every core, end QEMU with the panic code. */
__noreturn void panic(const char *fmt, ...) __printf(1, 2);

#define assert(c) \
	do { if (unlikely(!(c))) panic("assertion failed: %s at %s:%d", #c, __FILE__, __LINE__); } while (0)

/*
 * must(cond, rule): a rule of context a comment states -- a lock held, interrupts off, NMI
 * context, this core's state only, the session stopped -- checked where it is relied on.
 * A broken rule panics, naming the file, the line and the rule (then the test expression).
 * Always compiled in: the kernel the tests boot checks every one, and so do the host tests
 * (tests/host/shim's panic aborts). Kept off the paths whose instructions the benchmarks
 * count (a sample, a switch: tests/bench/istep.py, swstep.py); there the rule is checked
 * on the slow path that shares it.
 */
#define must(cond, rule)							\
	do {									\
		if (unlikely(!(cond)))						\
			panic("%s:%d: broken rule: %s (%s)", __FILE__, __LINE__, rule, #cond); \
	} while (0)

/* string.h subset, implemented in kern/src/string.c */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t n);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
size_t strlcpy(char *d, const char *s, size_t n);
char *strdup(const char *s);
/* All of s as a decimal number: 0, or -1 if s is empty, not a number or too big. */
int parse_u64(const char *s, uint64_t *v);
/* Decimal with an optional K, M or G suffix; no suffix: times unit. 0 or -1. */
int parse_size(const char *s, uint64_t unit, uint64_t *v);
/* Seconds with up to 3 fraction digits ("0.5") into milliseconds. 0 or -1. */
int parse_ms(const char *s, uint64_t *ms);

#endif
