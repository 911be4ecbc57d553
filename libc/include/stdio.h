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
FILE *fopen(const char *path, const char *mode) __LIBC_MISSING(fopen);
FILE *freopen(const char *path, const char *mode, FILE *f) __LIBC_MISSING(freopen);
int fclose(FILE *f) __LIBC_MISSING(fclose);
size_t fread(void *p, size_t size, size_t n, FILE *f) __LIBC_MISSING(fread);
char *fgets(char *s, int n, FILE *f) __LIBC_MISSING(fgets);
int fgetc(FILE *f) __LIBC_MISSING(fgetc);
int getc(FILE *f) __LIBC_MISSING(getc);
int getchar(void) __LIBC_MISSING(getchar);
int scanf(const char *fmt, ...) __LIBC_MISSING(scanf);
int fscanf(FILE *f, const char *fmt, ...) __LIBC_MISSING(fscanf);
int sscanf(const char *s, const char *fmt, ...) __LIBC_MISSING(sscanf);
int fseek(FILE *f, long off, int whence) __LIBC_MISSING(fseek);
long ftell(FILE *f) __LIBC_MISSING(ftell);
int remove(const char *path) __LIBC_MISSING(remove);
int rename(const char *from, const char *to) __LIBC_MISSING(rename);
#endif
