/*
 * textenc.h: a name from the stream or the ELF (a thread's, a lock's, a function's, a panic
 * message) written in the encoding of the output it goes to, one writer per target:
 *
 *	terminal text	term_puts, term_cell (fixed-width columns)
 *	XML and HTML	xml_escape, xml_escape_cut (the flame graph, the timeline page)
 *	JSON strings	json_str (the trace)
 *	UTF-8 C strings	shown_copy, shown_dup (pprof's string table, perf.data's comms)
 *
 * Every writer shows a name the same way (textenc.c): each printable UTF-8 character as it
 * is; every other byte -- control characters (C0, DEL, C1: a terminal obeys them), bytes that
 * begin no valid UTF-8 character (a viewer rejects the whole file for one) -- as the four
 * characters \xNN. So what a user reads is valid in every encoding, can move no cursor, and
 * says which byte was there. A name is cut only between such units, never inside a
 * character or an escape, and counted in characters (an escape is four), as a monospace
 * column or the flame graph's labels count them.
 * Pure functions of their arguments; every stage may call them.
 */
#ifndef OPREPORT_TEXTENC_H
#define OPREPORT_TEXTENC_H

#include <stddef.h>
#include <stdio.h>

/* Characters s takes when shown (an escaped byte counts four). */
size_t shown_chars(const char *s);

/* s shown, into dst[0..n) (n >= 1), NUL-terminated, cut before the first unit that does not
 * fit. Returns dst. */
char *shown_copy(char *dst, size_t n, const char *s);

/* s shown, in a new string (the caller frees it); NULL when out of memory. */
char *shown_dup(const char *s);

/* Bytes that hold, with the NUL, a name of up to n bytes shown whole (a byte is at most four
 * bytes shown), or padded to n characters. */
#define SHOWN_SIZE(n)	(4 * (size_t)(n) + 1)

/* s shown on a terminal. */
void term_puts(FILE *out, const char *s);

/* s shown in a column at least width characters wide: padded with spaces on the right, a
 * longer name kept whole (what printf's "%-Ws" does for ASCII, by characters, not bytes), in
 * buf[0..n), n >= SHOWN_SIZE of s's bytes and of width (else cut where buf ends). Returns buf. */
const char *term_cell(char *buf, size_t n, const char *s, int width);

/* s shown, escaped for XML and HTML text and attributes. */
void xml_escape(FILE *out, const char *s);

/* The first chars characters of s shown, escaped as xml_escape does. */
void xml_escape_cut(FILE *out, const char *s, size_t chars);

/* s shown, as a JSON string, quotes included. */
void json_str(FILE *out, const char *s);

#endif
