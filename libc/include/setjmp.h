#ifndef _SETJMP_H
#define _SETJMP_H
#include <_libc.h>
typedef long jmp_buf[8];	/* rbx rbp r12 r13 r14 r15 rsp rip */
int setjmp(jmp_buf env) __LIBC(setjmp) __attribute__((returns_twice));
void longjmp(jmp_buf env, int val) __LIBC(longjmp) __attribute__((noreturn));
#endif
