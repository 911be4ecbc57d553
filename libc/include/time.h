#ifndef _TIME_H
#define _TIME_H
#include <_libc.h>
#include <stddef.h>
/* CLOCK_REALTIME and time(): seconds since boot (the kernel reads no real-time clock). */
typedef long time_t;
typedef long clock_t;
typedef int clockid_t;
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCKS_PER_SEC 1000000L
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
clock_t clock(void) __LIBC(clock);	/* microseconds since boot: differences time code */
time_t time(time_t *t) __LIBC(time);
int clock_gettime(clockid_t id, struct timespec *ts) __LIBC(clock_gettime);
double difftime(time_t a, time_t b) __LIBC(difftime);
#endif
