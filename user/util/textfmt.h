/*
 * textfmt.h: how every stage writes a number into its output, so a percentage or a build-id
 * reads the same in every report and file (a name: textenc.h).
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

#endif
