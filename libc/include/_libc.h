/*
 * Internal to the headers of this C library (libc/, for apps linked in with make APPS=).
 * Every function is linked under the name libc_NAME (__LIBC) so that none clashes with the
 * kernel's own functions of the same name; app code just calls NAME.
 */
#ifndef _LIBC_H
#define _LIBC_H
#define __LIBC(n) __asm__("libc_" #n)
/* A function a hosted C library has and this one has not: calling it is a compile error. */
#define __LIBC_MISSING(n) __attribute__((error(#n " is not in this kernel's C library (libc/)")))
#endif
