/*
 * What this C library takes from the kernel it is linked into (kern/include/app.h,
 * arch.h), declared here because libc/ is compiled with its own headers only.
 * Called from app code, in the app instance's thread.
 */
#ifndef LIBC_SYS_H
#define LIBC_SYS_H
#include <stddef.h>
#include <stdint.h>
void *app_malloc(size_t n);
void app_free(void *p);
size_t app_block_size(void *p);
void app_exit(int status) __attribute__((noreturn));
void app_write(const char *s, size_t n);
void app_abort(const char *why) __attribute__((noreturn));
uint64_t tsc_read(void);
uint64_t tsc_hz(void);
#endif
