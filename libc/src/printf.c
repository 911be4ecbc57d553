/*
 * The printf family for apps (app code, any instance: all state is on the caller's stack).
 * Conversions d i u o x X c s p n %, flags - + space # 0, width and precision (or *),
 * length hh h l ll z j t L; floating point f F e E g G a-less (see fmtfloat.c).
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "fmt.h"

void fmt_put(struct fmt_out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (o->len < o->cap)
			o->buf[o->len] = s[i];
		o->len++;
		if (o->flush && o->len == o->cap) {
			o->flush(o->buf, o->len);
			o->flushed += o->len;
			o->len = 0;
		}
	}
}

void fmt_pad(struct fmt_out *o, char c, int n)
{
	for (; n > 0; n--)
		fmt_put(o, &c, 1);
}

/* Sign/prefix, zeros or spaces to the width, then body: the layout of every conversion. */
void fmt_field(struct fmt_out *o, const struct fmt_spec *sp, const char *pre, const char *body,
	       int blen, int zeros)
{
	int plen = (int)strlen(pre), w = plen + zeros + blen;

	if (!sp->left && !sp->zero)
		fmt_pad(o, ' ', sp->width - w);
	fmt_put(o, pre, (size_t)plen);
	if (!sp->left && sp->zero)
		fmt_pad(o, '0', sp->width - w);
	fmt_pad(o, '0', zeros);
	fmt_put(o, body, (size_t)blen);
	if (sp->left)
		fmt_pad(o, ' ', sp->width - w);
}

static void fmt_int(struct fmt_out *o, struct fmt_spec *sp, unsigned long long v, bool neg)
{
	char tmp[24], pre[3] = "";
	int n = 0, base = sp->conv == 'o' ? 8 : (sp->conv | 32) == 'x' || sp->conv == 'p' ? 16 : 10;
	const char *dig = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";

	for (; v; v /= (unsigned)base)
		tmp[sizeof(tmp) - 1 - n++] = dig[v % (unsigned)base];
	if (neg)
		pre[0] = '-';
	else if (sp->plus || sp->space)
		pre[0] = sp->plus ? '+' : ' ';
	if ((sp->alt && base == 16 && n) || sp->conv == 'p')
		pre[0] = '0', pre[1] = sp->conv == 'X' ? 'X' : 'x';
	if (sp->alt && base == 8 && (sp->prec <= n))
		sp->prec = n + 1;
	if (sp->prec >= 0)
		sp->zero = false;
	else if (!n)
		tmp[sizeof(tmp) - 1 - n++] = '0';
	fmt_field(o, sp, pre, tmp + sizeof(tmp) - n, n, sp->prec > n ? sp->prec - n : 0);
}

static unsigned long long arg_u(va_list *ap, int len)
{
	switch (len) {
	case 'H': return (unsigned char)va_arg(*ap, unsigned);
	case 'h': return (unsigned short)va_arg(*ap, unsigned);
	case 'l': case 'q': case 'z': case 'j': case 't': return va_arg(*ap, unsigned long);
	}
	return va_arg(*ap, unsigned);
}

static long long arg_s(va_list *ap, int len)
{
	switch (len) {
	case 'H': return (signed char)va_arg(*ap, int);
	case 'h': return (short)va_arg(*ap, int);
	case 'l': case 'q': case 'z': case 'j': case 't': return va_arg(*ap, long);
	}
	return va_arg(*ap, int);
}

static const char *parse_spec(const char *f, struct fmt_spec *sp, va_list *ap)
{
	*sp = (struct fmt_spec){ .prec = -1 };
	for (;; f++) {
		if (*f == '-') sp->left = true;
		else if (*f == '+') sp->plus = true;
		else if (*f == ' ') sp->space = true;
		else if (*f == '#') sp->alt = true;
		else if (*f == '0') sp->zero = true;
		else break;
	}
	if (*f == '*' && f++)
		sp->width = va_arg(*ap, int);
	for (; *f >= '0' && *f <= '9'; f++)
		sp->width = sp->width * 10 + (*f - '0');
	if (sp->width < 0)
		sp->left = true, sp->width = -sp->width;
	if (*f == '.') {
		sp->prec = 0;
		if (*++f == '*' && f++)
			sp->prec = va_arg(*ap, int);
		for (; *f >= '0' && *f <= '9'; f++)
			sp->prec = sp->prec * 10 + (*f - '0');
	}
	for (; strchr("hlLqzjt", *f) && *f; f++)
		sp->len = *f == 'h' && sp->len == 'h' ? 'H' : *f == 'l' && sp->len == 'l' ? 'q' : *f;
	sp->conv = *f;
	return *f ? f + 1 : f;
}

static void fmt_conv(struct fmt_out *o, struct fmt_spec *sp, va_list *ap)
{
	long long s;
	char c;
	const char *str;

	switch (sp->conv) {
	case 'd': case 'i':
		s = arg_s(ap, sp->len);
		fmt_int(o, sp, s < 0 ? 0ull - (unsigned long long)s : (unsigned long long)s, s < 0);
		return;
	case 'u': case 'o': case 'x': case 'X':
		fmt_int(o, sp, arg_u(ap, sp->len), false);
		return;
	case 'p':
		fmt_int(o, sp, (uintptr_t)va_arg(*ap, void *), false);
		return;
	case 'c':
		c = (char)va_arg(*ap, int);
		fmt_field(o, sp, "", &c, 1, 0);
		return;
	case 's':
		str = va_arg(*ap, const char *);
		str = str ? str : "(null)";
		fmt_field(o, sp, "", str, (int)strnlen(str, sp->prec < 0 ? SIZE_MAX : (size_t)sp->prec),
			  0);
		return;
	case 'n':
		*va_arg(*ap, int *) = (int)(o->flushed + o->len);
		return;
	}
	if (strchr("fFeEgG", sp->conv))
		fmt_float(o, sp, sp->len == 'L' ? (double)va_arg(*ap, long double) : va_arg(*ap, double));
	else
		fmt_put(o, "%", 1);
}

int fmt_run(struct fmt_out *o, const char *f, va_list ap0)
{
	struct fmt_spec sp;
	va_list ap;

	va_copy(ap, ap0);
	while (*f) {
		const char *p = strchr(f, '%');
		size_t lit = p ? (size_t)(p - f) : strlen(f);

		fmt_put(o, f, lit);
		f += lit;
		if (!*f)
			break;
		f = parse_spec(f + 1, &sp, &ap);
		fmt_conv(o, &sp, &ap);
	}
	va_end(ap);
	return (int)(o->flushed + o->len);
}
