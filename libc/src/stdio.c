/*
 * stdio.h for apps: printf and friends format into a buffer on the caller's stack and hand
 * it to the kernel (app_write) when full and at the end, so that one call is one write.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "fmt.h"
#include "sys.h"

struct __libc_file {
	int fd;
};
static struct __libc_file files[2] = { { 1 }, { 2 } };
FILE *const stdout = &files[0];
FILE *const stderr = &files[1];

int vfprintf(FILE *f, const char *restrict fmt, va_list ap)
{
	char buf[512];
	struct fmt_out o = { .buf = buf, .cap = sizeof(buf), .flush = app_write };
	int n = fmt_run(&o, fmt, ap);

	(void)f;
	if (o.len)
		app_write(buf, o.len);
	return n;
}

int vprintf(const char *restrict fmt, va_list ap) { return vfprintf(stdout, fmt, ap); }

int vsnprintf(char *restrict buf, size_t n, const char *restrict fmt, va_list ap)
{
	char none;
	struct fmt_out o = { .buf = n ? buf : &none, .cap = n ? n - 1 : 0 };
	int r = fmt_run(&o, fmt, ap);

	if (n)
		buf[o.len < o.cap ? o.len : o.cap] = 0;
	return r;
}

int vsprintf(char *restrict buf, const char *restrict fmt, va_list ap)
{
	return vsnprintf(buf, (size_t)1 << 30, fmt, ap);
}

int printf(const char *restrict fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(stdout, fmt, ap);
	va_end(ap);
	return n;
}

int fprintf(FILE *f, const char *restrict fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}

int snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int sprintf(char *restrict buf, const char *restrict fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsprintf(buf, fmt, ap);
	va_end(ap);
	return n;
}

int fputs(const char *s, FILE *f)
{
	(void)f;
	app_write(s, strlen(s));
	return 0;
}

int puts(const char *s) { return printf("%s\n", s) < 0 ? EOF : 0; }

int fputc(int c, FILE *f)
{
	char ch = (char)c;

	(void)f;
	app_write(&ch, 1);
	return (unsigned char)c;
}

int putchar(int c) { return fputc(c, stdout); }

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	(void)f;
	app_write(p, size * n);
	return n;
}

int fflush(FILE *f) { (void)f; return 0; }

void perror(const char *s)
{
	fprintf(stderr, "%s%s%s\n", s && *s ? s : "", s && *s ? ": " : "", strerror(errno));
}
