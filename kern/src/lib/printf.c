/*
 * Formatted output: vsnprintf and printk.
 *
 * One formatter (fmt_run) writes characters into a struct out. For vsnprintf the out is
 * the caller's buffer, truncated with C semantics (the return value is the length the full
 * output would have). For printk the out is a small stack buffer that is drained to the
 * console whenever it fills, so messages of any length are printed whole.
 *
 * printk holds one spinlock (interrupts off) for the whole message, so lines from different
 * cores and from interrupt handlers never interleave. Two escapes keep panics audible:
 * a printk nested inside printk on the same core (a fault in the console driver) writes
 * without the lock instead of deadlocking, and after printk_panic_unlock() the lock is
 * ignored altogether (a stopped core may hold it forever).
 *
 * Supported: %d %i %u %x %X %o %p %s %c %%, flags - 0 + space #, width and precision as
 * digits or *, length modifiers hh h l ll z t j. No floating point (the kernel is built
 * with -mgeneral-regs-only). An unknown conversion is printed as is.
 */
#include "kernel.h"
#ifndef HOST_SHIM
#include "cons.h"
#include "lock.h"
#endif

struct out {
	char *buf;	/* destination */
	size_t cap;	/* size of buf; one byte is always kept for the NUL */
	size_t len;	/* bytes stored in buf */
	size_t total;	/* bytes produced, stored or not */
	bool drain;	/* when buf fills, write it to the console instead of truncating */
};

struct spec {
	bool left;	/* '-': pad on the right */
	bool zero;	/* '0': pad numbers with zeros */
	char sign;	/* '+' or ' ' for non-negative signed numbers, else 0 */
	bool alt;	/* '#': 0x prefix for %x, 0 for %o */
	int width;	/* minimum field width, 0 for none */
	int prec;	/* precision, -1 for none */
	int lenmod;	/* 'H' hh, 'h', 'l', 'L' ll, 'z', 't', 'j', or 0 */
};

static void out_drain(struct out *o);

static void out_char(struct out *o, char c)
{
	o->total++;
	if (o->len + 1 >= o->cap) {
		if (!o->drain)
			return;
		out_drain(o);
	}
	o->buf[o->len++] = c;
}

static void out_str(struct out *o, const char *s, size_t n)
{
	while (n--)
		out_char(o, *s++);
}

static void out_pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		out_char(o, c);
}

/* Digits of v in base, least significant first, into tmp; returns the count. */
static int utoa_rev(char *tmp, unsigned long long v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	return n;
}

/*
 * One number: [padding][sign/prefix][zeros][digits][padding]. With a precision, the zero
 * flag is ignored and at least prec digits are printed (C: "%.0d" of 0 prints nothing).
 */
static void fmt_number(struct out *o, const struct spec *sp, unsigned long long v, bool neg,
		       unsigned base, bool upper, const char *prefix)
{
	char tmp[24];
	int ndig = 0, nzero, npre, pad;
	char sign = neg ? '-' : sp->sign;

	if (!(sp->prec == 0 && v == 0))
		ndig = utoa_rev(tmp, v, base, upper);
	nzero = sp->prec > ndig ? sp->prec - ndig : 0;
	if (!strcmp(prefix, "0") && nzero)
		prefix = "";	/* %#o: the precision's zeros already lead with 0 */
	npre = (sign ? 1 : 0) + (int)strlen(prefix);
	pad = sp->width - npre - nzero - ndig;
	if (sp->zero && !sp->left && sp->prec < 0) {
		nzero += pad > 0 ? pad : 0;
		pad = 0;
	}
	if (!sp->left)
		out_pad(o, ' ', pad);
	if (sign)
		out_char(o, sign);
	out_str(o, prefix, strlen(prefix));
	out_pad(o, '0', nzero);
	while (ndig)
		out_char(o, tmp[--ndig]);
	if (sp->left)
		out_pad(o, ' ', pad);
}

static void fmt_string(struct out *o, const struct spec *sp, const char *s)
{
	size_t n;
	int pad;

	if (!s)
		s = "(null)";
	n = sp->prec >= 0 ? strnlen(s, (size_t)sp->prec) : strlen(s);
	pad = sp->width > (int)n ? sp->width - (int)n : 0;
	if (!sp->left)
		out_pad(o, ' ', pad);
	out_str(o, s, n);
	if (sp->left)
		out_pad(o, ' ', pad);
}

/* va_list is passed by pointer so that helpers can consume arguments (C11 7.16p3). */
static unsigned long long arg_unsigned(va_list *ap, int lenmod)
{
	switch (lenmod) {
	case 'H': return (unsigned char)va_arg(*ap, unsigned int);
	case 'h': return (unsigned short)va_arg(*ap, unsigned int);
	case 'l': return va_arg(*ap, unsigned long);
	case 'L': return va_arg(*ap, unsigned long long);
	case 'z': return va_arg(*ap, size_t);
	case 't': return (unsigned long long)va_arg(*ap, ptrdiff_t);
	case 'j': return va_arg(*ap, uintmax_t);
	default: return va_arg(*ap, unsigned int);
	}
}

static long long arg_signed(va_list *ap, int lenmod)
{
	switch (lenmod) {
	case 'H': return (signed char)va_arg(*ap, int);
	case 'h': return (short)va_arg(*ap, int);
	case 'l': return va_arg(*ap, long);
	case 'L': return va_arg(*ap, long long);
	case 'z': return va_arg(*ap, ssize_t);
	case 't': return va_arg(*ap, ptrdiff_t);
	case 'j': return va_arg(*ap, intmax_t);
	default: return va_arg(*ap, int);
	}
}

/* Parses the flags after '%' into sp; returns the pointer past them. */
static const char *parse_flags(const char *f, struct spec *sp)
{
	for (;; f++) {
		if (*f == '-')
			sp->left = true;
		else if (*f == '0')
			sp->zero = true;
		else if (*f == '+')
			sp->sign = '+';
		else if (*f == ' ' && sp->sign != '+')
			sp->sign = ' ';
		else if (*f == '#')
			sp->alt = true;
		else
			return f;
	}
}

/* Parses flags, width, precision and length after '%'; returns the conversion pointer. */
static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
	*sp = (struct spec){ .prec = -1 };
	f = parse_flags(f, sp);
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		if (sp->width < 0) {
			sp->left = true;
			sp->width = sp->width == -__INT_MAX__ - 1 ? __INT_MAX__ : -sp->width;
		}
		f++;
	} else {
		for (; *f >= '0' && *f <= '9'; f++)
			sp->width = sp->width < 100000 ? sp->width * 10 + (*f - '0') : sp->width;
	}
	if (*f == '.') {
		f++;
		sp->prec = 0;
		if (*f == '*') {
			sp->prec = va_arg(*ap, int);	/* negative: as if omitted */
			if (sp->prec < 0)
				sp->prec = -1;
			f++;
		} else {
			for (; *f >= '0' && *f <= '9'; f++)
				sp->prec = sp->prec < 100000 ? sp->prec * 10 + (*f - '0') : sp->prec;
		}
	}
	if (*f == 'h' || *f == 'l') {
		sp->lenmod = *f++;
		if (*f == sp->lenmod) {
			sp->lenmod = sp->lenmod == 'h' ? 'H' : 'L';
			f++;
		}
	} else if (*f == 'z' || *f == 't' || *f == 'j') {
		sp->lenmod = *f++;
	}
	return f;
}

/* One conversion at f (after the spec); returns false for an unknown conversion. */
static bool fmt_conv(struct out *o, struct spec *sp, char conv, va_list *ap)
{
	long long sv;
	unsigned long long uv;

	switch (conv) {
	case 'd':
	case 'i':
		sv = arg_signed(ap, sp->lenmod);
		uv = sv < 0 ? 0ull - (unsigned long long)sv : (unsigned long long)sv;
		fmt_number(o, sp, uv, sv < 0, 10, false, "");
		return true;
	case 'u':
		sp->sign = 0;	/* + and space apply to signed conversions only */
		fmt_number(o, sp, arg_unsigned(ap, sp->lenmod), false, 10, false, "");
		return true;
	case 'x':
	case 'X':
		uv = arg_unsigned(ap, sp->lenmod);
		sp->sign = 0;
		fmt_number(o, sp, uv, false, 16, conv == 'X',
			   sp->alt && uv ? (conv == 'X' ? "0X" : "0x") : "");
		return true;
	case 'o':
		uv = arg_unsigned(ap, sp->lenmod);
		sp->sign = 0;
		fmt_number(o, sp, uv, false, 8, false, sp->alt && (uv || !sp->prec) ? "0" : "");
		return true;
	case 'p':
		sp->sign = 0;
		fmt_number(o, sp, (uintptr_t)va_arg(*ap, void *), false, 16, false, "0x");
		return true;
	case 's':
		fmt_string(o, sp, va_arg(*ap, const char *));
		return true;
	case 'c':
		out_pad(o, ' ', sp->left ? 0 : sp->width - 1);
		out_char(o, (char)va_arg(*ap, int));
		out_pad(o, ' ', sp->left ? sp->width - 1 : 0);
		return true;
	case '%':
		out_char(o, '%');
		return true;
	default:
		return false;
	}
}

static void fmt_run(struct out *o, const char *fmt, va_list ap0)
{
	va_list ap;
	struct spec sp;
	const char *start;

	va_copy(ap, ap0);
	while (*fmt) {
		if (*fmt != '%') {
			out_char(o, *fmt++);
			continue;
		}
		start = fmt;
		fmt = parse_spec(fmt + 1, &sp, &ap);
		if (*fmt && fmt_conv(o, &sp, *fmt, &ap)) {
			fmt++;
			continue;
		}
		/* Unknown or truncated conversion: print it literally. */
		if (*fmt)
			fmt++;
		out_str(o, start, (size_t)(fmt - start));
	}
	va_end(ap);
}

int vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct out o = { .buf = buf, .cap = n };

	fmt_run(&o, fmt, ap);
	if (n)
		buf[o.len] = '\0';
	return o.total > __INT_MAX__ ? __INT_MAX__ : (int)o.total;
}

int snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

#ifdef HOST_SHIM
/* Host builds: printk comes from the shim; the drain never runs (drain is false). */
static void out_drain(struct out *o)
{
	o->len = 0;
}
#else

static struct spinlock printk_lock = SPINLOCK_INIT("printk");
static bool printk_nolock;	/* set once by panic: ignore printk_lock from now on */

static void out_drain(struct out *o)
{
	arch_console_write(o->buf, o->len);
	o->len = 0;
}

/*
 * Returns whether the lock was taken. Not taken when panicking, or when this core already
 * holds it (printk from a fault or NMI inside printk): writing unlocked may interleave
 * text but deadlocking would lose the message. spin_holding is stable here: if this core
 * holds the lock its interrupts are off, and if not, nothing on this core can make it so.
 */
static bool printk_lock_take(void)
{
	if (READ_ONCE(printk_nolock) || spin_holding(&printk_lock))
		return false;
	spin_lock(&printk_lock);
	return true;
}

static void printk_lock_give(bool taken)
{
	if (taken)
		spin_unlock(&printk_lock);
}

void printk_panic_unlock(void)
{
	WRITE_ONCE(printk_nolock, true);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void printk_write(const char *s, size_t n)
{
	bool taken = printk_lock_take();

	arch_console_write(s, n);
	printk_lock_give(taken);
}

int vprintk(const char *fmt, va_list ap)
{
	char buf[160];
	struct out o = { .buf = buf, .cap = sizeof(buf), .drain = true };
	bool taken = printk_lock_take();

	fmt_run(&o, fmt, ap);
	out_drain(&o);
	printk_lock_give(taken);
	return o.total > __INT_MAX__ ? __INT_MAX__ : (int)o.total;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vprintk(fmt, ap);
	va_end(ap);
	return r;
}
#endif
