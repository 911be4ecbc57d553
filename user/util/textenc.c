/*
 * textenc.c: the writers of textenc.h, called by every stage that writes a name (the text
 * views, the files of export/, clockdesc). One walk over a name, next_unit, decides what is
 * shown (a printable character as it is, any other byte as \xNN); the writers differ only
 * in what they do with a unit: the terminal and the C strings take it as it is, XML and JSON
 * escape their own special characters on top (xml_quote, json_quote).
 *
 * Invariant: a shown name is valid UTF-8 without control characters, whatever bytes came
 * in, because next_unit passes a byte through only inside a sequence printable() checked
 * whole, and writes every other byte as four ASCII characters.
 */
#include <stdlib.h>
#include <string.h>

#include "util/textenc.h"

/*
 * Bytes of the character at s when it is printable UTF-8: the shortest encoding of a code
 * point up to U+10FFFF, not a surrogate, not a control character (below U+0020, U+007F to
 * U+009F) and not U+FFFE or U+FFFF (which XML forbids); else 0, as at the terminating NUL.
 * Reads no byte past a NUL: a NUL is no continuation byte, so the loop stops at it.
 */
static size_t printable(const unsigned char *s)
{
	static const unsigned least[5] = { 0, 0, 0xa0, 0x800, 0x10000 };
	unsigned c = s[0], n, cp;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)	/* controls, continuations, overlong leads, past U+10FFFF */
		return 0;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	cp = c & (0x7fu >> n);
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/* The next unit of s as shown: *text and *len (a printable character of s, or its byte as
 * \xNN in esc) and the characters it takes. Returns the bytes of s it stands for, 0 at the
 * end of s. */
static size_t next_unit(const char *s, const char **text, size_t *len, size_t *chars,
			char esc[5])
{
	size_t n;

	if (!*s)
		return 0;
	if ((n = printable((const unsigned char *)s))) {
		*text = s;
		*len = n;
		*chars = 1;
		return n;
	}
	snprintf(esc, 5, "\\x%02x", (unsigned char)*s);
	*text = esc;
	*len = *chars = 4;
	return 1;
}

size_t shown_chars(const char *s)
{
	const char *t;
	size_t len, chars, all = 0, step;
	char esc[5];

	while ((step = next_unit(s, &t, &len, &chars, esc))) {
		all += chars;
		s += step;
	}
	return all;
}

/* s shown into dst[0..n), whole units only, at most max characters; returns them. */
static size_t copy_units(char *dst, size_t n, const char *s, size_t max)
{
	const char *t;
	size_t len, chars, used = 0, shown = 0, step;
	char esc[5];

	while ((step = next_unit(s, &t, &len, &chars, esc)) && used + len < n &&
	       shown + chars <= max) {
		memcpy(dst + used, t, len);
		used += len;
		shown += chars;
		s += step;
	}
	dst[used] = 0;
	return shown;
}

char *shown_copy(char *dst, size_t n, const char *s)
{
	copy_units(dst, n, s, (size_t)-1);
	return dst;
}

char *shown_dup(const char *s)
{
	size_t n = SHOWN_SIZE(strlen(s));
	char *d = malloc(n);

	return d ? shown_copy(d, n, s) : NULL;
}

const char *term_cell(char *buf, size_t n, const char *s, int width)
{
	size_t w = width > 0 ? (size_t)width : 0, shown = copy_units(buf, n, s, (size_t)-1);
	size_t used = strlen(buf);

	while (shown < w && used + 1 < n) {
		buf[used++] = ' ';
		shown++;
	}
	buf[used] = 0;
	return buf;
}

/* How a target writes a character of its own syntax: the replacement, or NULL for as is. */
typedef const char *(*quote_fn)(char ch);

static const char *as_is(char ch)
{
	(void)ch;
	return NULL;
}

static const char *xml_quote(char ch)
{
	switch (ch) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	default: return NULL;
	}
}

static const char *json_quote(char ch)
{
	return ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : NULL;
}

/* The first max characters of s shown, each byte of the shown text through quote. */
static void write_units(FILE *out, const char *s, size_t max, quote_fn quote)
{
	const char *t;
	size_t len, chars, shown = 0, step;
	char esc[5];

	while ((step = next_unit(s, &t, &len, &chars, esc)) && shown + chars <= max) {
		for (size_t i = 0; i < len; i++) {
			const char *q = quote(t[i]);

			if (q)
				fputs(q, out);
			else
				fputc(t[i], out);
		}
		shown += chars;
		s += step;
	}
}

void term_puts(FILE *out, const char *s)
{
	write_units(out, s, (size_t)-1, as_is);
}

void xml_escape(FILE *out, const char *s)
{
	write_units(out, s, (size_t)-1, xml_quote);
}

void xml_escape_cut(FILE *out, const char *s, size_t chars)
{
	write_units(out, s, chars, xml_quote);
}

void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	write_units(out, s, (size_t)-1, json_quote);
	fputc('"', out);
}
