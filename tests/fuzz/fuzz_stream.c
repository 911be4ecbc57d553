/*
 * fuzz_stream.c: libFuzzer target for opreport's stream parser and report code. Any input must
 * either be rejected with an error message or be fully reported (raw addresses), without
 * crashes, leaks or undefined behaviour.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "text/text.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile prof = { 0 };
	struct opf_parser ps;
	struct symbols sym;
	struct options o = { .file = "fuzz", .limit = 5, .inclusive = 0 };
	struct ctx c = { 0 };

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	opf_parser_init(&ps, &profile_sink, &prof);
	/* Feed in two pieces to exercise resumption at an arbitrary cut. */
	size_t cut = size ? data[0] % (size + 1) : 0;
	long used = opf_feed(&ps, data, cut);
	int bad = used < 0;
	if (!bad) {
		size_t rest = cut - (size_t)used;
		uint8_t *buf = malloc(rest + (size - cut) + 1);

		memcpy(buf, data + used, rest);
		memcpy(buf + rest, data + cut, size - cut);
		long u2 = opf_feed(&ps, buf, rest + size - cut);
		bad = u2 < 0 || opf_finish(&ps, buf + u2, rest + size - cut - (size_t)u2);
		free(buf);
	}
	if (!bad && prof.nsess && !sym_init_raw(&sym)) {
		c.o = &o;
		c.p = &prof;
		c.sym = &sym;
		c.ncores = prof.ncores;
		if (!sym_resolve(&sym, &prof.stacks) && !ctx_aggregate(&c)) {
			report_stats(&c, devnull);
			report_header(&c, devnull);
			report_symbols(&c, devnull);
			o.cpu = 1;
			report_threads(&c, devnull);
			report_lines(&c, devnull);
			report_callgraph(&c, devnull);
			report_folded(&c, devnull);
		}
		ctx_free(&c);
		sym_close(&sym);
	}
	profile_free(&prof);
	return 0;
}
