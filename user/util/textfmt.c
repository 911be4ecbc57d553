/*
 * textfmt.c: the writers of textfmt.h, used by the text sections (pct, print_hex) and the
 * files of export/ (pct in the flame graph's titles).
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
