/* The printf engine's parts shared by printf.c, fmtfloat.c and stdio.c. */
#ifndef LIBC_FMT_H
#define LIBC_FMT_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct fmt_out {
	char *buf;
	size_t cap, len;	/* len counts past cap for snprintf's result when not flushing */
	size_t flushed;		/* bytes handed to flush so far */
	void (*flush)(const char *s, size_t n);	/* NULL: a string of cap bytes */
};

struct fmt_spec {
	bool left, plus, space, alt, zero;
	int width, prec;	/* prec -1: none */
	int len;		/* length modifier: h H(hh) l q(ll) L z j t, or 0 */
	char conv;
};

void fmt_put(struct fmt_out *o, const char *s, size_t n);
void fmt_pad(struct fmt_out *o, char c, int n);
void fmt_field(struct fmt_out *o, const struct fmt_spec *sp, const char *pre, const char *body,
	       int blen, int zeros);
void fmt_float(struct fmt_out *o, struct fmt_spec *sp, double v);
int fmt_run(struct fmt_out *o, const char *f, va_list ap);
#endif
