/*
 * textfmt.c: the writers of textfmt.h, used by the text sections (pct, print_hex) and the
 * files of export/ (xml_escape; pct in the flame graph's titles).
 */
#include "util/textfmt.h"

double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void print_hex(FILE *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
}

void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc('?', out);
			else
				fputc(*s, out);
		}
	}
}
