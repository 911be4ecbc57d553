#ifndef _STDIO_H
#define _STDIO_H
#include <_libc.h>
#include <stdarg.h>
#include <stddef.h>
/*
 * Output only: stdout and stderr both go to the console (or run's "> FILE"). Each printf
 * call is written whole, so lines of concurrent instances do not interleave mid-call.
 * There are no files: fopen and friends are compile-time errors.
 */
typedef struct __libc_file FILE;
extern FILE *const stdout __LIBC(stdout);
extern FILE *const stderr __LIBC(stderr);
#define EOF (-1)
#define BUFSIZ 1024
int printf(const char *restrict fmt, ...) __LIBC(printf) __attribute__((format(printf, 1, 2)));
int fprintf(FILE *f, const char *restrict fmt, ...) __LIBC(fprintf)
	__attribute__((format(printf, 2, 3)));
int sprintf(char *restrict buf, const char *restrict fmt, ...) __LIBC(sprintf)
	__attribute__((format(printf, 2, 3)));
int snprintf(char *restrict buf, size_t n, const char *restrict fmt, ...) __LIBC(snprintf)
	__attribute__((format(printf, 3, 4)));
int vprintf(const char *restrict fmt, va_list ap) __LIBC(vprintf);
int vfprintf(FILE *f, const char *restrict fmt, va_list ap) __LIBC(vfprintf);
int vsprintf(char *restrict buf, const char *restrict fmt, va_list ap) __LIBC(vsprintf);
int vsnprintf(char *restrict buf, size_t n, const char *restrict fmt, va_list ap)
	__LIBC(vsnprintf);
int puts(const char *s) __LIBC(puts);
int putchar(int c) __LIBC(putchar);
int fputs(const char *s, FILE *f) __LIBC(fputs);
int fputc(int c, FILE *f) __LIBC(fputc);
int putc(int c, FILE *f) __LIBC(fputc);
size_t fwrite(const void *p, size_t size, size_t n, FILE *f) __LIBC(fwrite);
int fflush(FILE *f) __LIBC(fflush);
void perror(const char *s) __LIBC(perror);
#pragma GCC poison fopen freopen fclose fread fgets fgetc getc getchar gets scanf fscanf sscanf
#pragma GCC poison fseek ftell rewind remove rename tmpfile tmpnam popen
#endif
