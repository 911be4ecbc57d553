/*
 * textfmt.h: how every stage writes a number or a name into its output, so a percentage, a
 * build-id or an XML attribute reads the same in every report and file.
 * Pure functions of their arguments (textfmt.c); no stage-specific type comes in.
 */
#ifndef OPREPORT_TEXTFMT_H
#define OPREPORT_TEXTFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* part as a percentage of whole; 0 when whole is 0. */
double pct(uint64_t part, uint64_t whole);

/* b[0..n) as lowercase hex, two digits a byte, nothing between (a build-id). */
void print_hex(FILE *out, const uint8_t *b, size_t n);

/* s escaped for XML and HTML text and attributes (control characters as '?'): the flame
 * graph's SVG and the timeline's page. */
void xml_escape(FILE *out, const char *s);

#endif
