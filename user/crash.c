/*
 * crash.c: crash dumps (docs/FORMAT.md, "Crash dumps"): the records only a dump holds, the
 * lines of its report header, and what --stats can check in it. Called by the parser
 * (profile.c's sink table), header.c, audit.c and opreport.c's load.
 *
 * A dump is one session (flags OPF_S_CRASH) that the kernel wrote at a panic: every core's
 * last window of the crash recorder, which the report counts like any samples, plus who
 * panicked, why and with which stack, and each core's state when it was stopped. It ends
 * with OPF_CRASH_END; without it the dump was cut short (the machine died while writing,
 * or the file was truncated), and everything before the cut is reported as it stands.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "profile.h"
#include "report.h"
#include "symbols.h"

static struct crash_info *crash_of(struct profile *p, char *err, size_t errlen)
{
	struct session *s = p->nsess ? &p->sess[p->nsess - 1] : NULL;

	if (!s || !(s->hdr.flags & OPF_S_CRASH)) {
		snprintf(err, errlen, "crash record in a stream that is not a crash dump");
		return NULL;
	}
	if (!s->crash) {
		snprintf(err, errlen, "out of memory");
		if (!(s->crash = calloc(1, sizeof(*s->crash))))
			return NULL;
		s->crash->ncores = s->hdr.ncores;
		if (!(s->crash->cores = calloc(s->hdr.ncores, sizeof(*s->crash->cores))))
			return NULL;
	}
	return s->crash;
}

/* The frames after a record's fixed part: at most what its length holds, and our room. */
static uint16_t copy_frames(uint64_t *dst, const struct opf_view *v, uint32_t fixed,
			    uint16_t n)
{
	uint32_t room = v->len > fixed ? (v->len - fixed) / 8 : 0;

	if (n > room)
		n = (uint16_t)room;
	if (n > CRASH_MAX_FRAMES)
		n = CRASH_MAX_FRAMES;
	memcpy(dst, v->tail, 8 * (size_t)n);
	return n;
}

int crash_on_crash(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct crash_info *ci = crash_of(arg, err, errlen);

	if (!ci)
		return -1;
	ci->seen = 1;
	ci->r = v->r->crash;
	ci->r.msg[OPF_CRASH_MSG - 1] = 0;
	ci->r.nframes = copy_frames(ci->frames, v, sizeof(struct opf_crash), ci->r.nframes);
	return 0;
}

int crash_on_core(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct crash_info *ci = crash_of(arg, err, errlen);
	struct crash_core *cc;

	if (!ci)
		return -1;
	cc = &ci->cores[v->r->crash_core.core];
	cc->seen = 1;
	cc->r = v->r->crash_core;
	cc->r.nframes = copy_frames(cc->frames, v, sizeof(struct opf_crash_core), cc->r.nframes);
	return 0;
}

int crash_on_end(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	struct crash_info *ci = crash_of(p, err, errlen);

	if (!ci)
		return -1;
	ci->have_end = 1;
	ci->end = v->r->crash_end;
	ci->end_off = v->off - p->sess[p->nsess - 1].off;
	return 0;
}

int session_is_crash(const struct session *s)
{
	return (s->hdr.flags & OPF_S_CRASH) != 0;
}

void crash_free(struct crash_info *ci)
{
	if (ci)
		free(ci->cores);
	free(ci);
}

/* "name+0xoff" of an address (a return address is looked up one byte back). */
static void print_addr(const struct ctx *c, FILE *out, uint64_t addr, int ret)
{
	const struct frame *f;
	uint32_t n = sym_frames(c->sym, ret ? addr - 1 : addr, addr, &f);

	if (!n) {
		fprintf(out, "0x%" PRIx64, addr);
		return;
	}
	/* the outermost frame at addr is the function whose symbol covers it */
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " <- " : "", c->sym->funcs[f[i].fid].name);
}

static void print_stack(const struct ctx *c, FILE *out, uint64_t pc, const uint64_t *fr,
			uint16_t n)
{
	fprintf(out, "  #0  0x%016" PRIx64 " ", pc);
	print_addr(c, out, pc, 0);
	fputc('\n', out);
	for (uint16_t i = 0; i < n; i++) {
		fprintf(out, "  #%-2u 0x%016" PRIx64 " ", i + 1, fr[i]);
		print_addr(c, out, fr[i], 1);
		fputc('\n', out);
	}
}

static const char *cause_name(uint32_t cause)
{
	static const char *const names[] = { "panic", "CPU exception", "hard lockup (NMI watchdog)" };

	return cause < sizeof(names) / sizeof(names[0]) ? names[cause] : "unknown cause";
}

static const char *state_name(uint16_t st)
{
	static const char *const names[] = { "panicked", "stopped", "did not answer the stop NMI",
					     "offline" };

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown state";
}

/* One line per core: its state, thread and where it was; the window it left. */
static void core_lines(const struct ctx *c, const struct crash_info *ci, FILE *out)
{
	const struct session *s = &c->p->sess[0];

	fprintf(out, "Cores at the crash:\n");
	for (uint32_t k = 0; k < ci->ncores; k++) {
		const struct crash_core *cc = &ci->cores[k];

		if (!cc->seen) {
			fprintf(out, "  cpu %u: not in the dump (cut short)\n", k);
			continue;
		}
		fprintf(out, "  cpu %u: %s%s, tid %u, window %u blocks, %" PRIu64 " samples in the "
			"report (%" PRIu64 " taken, %" PRIu64 " overwritten)", k,
			state_name(cc->r.state), cc->r.h.flags & OPF_CC_IRQOFF ? " (interrupts off)"
			: "", cc->r.tid, cc->r.blocks, s->cores[k].samples, cc->r.taken,
			cc->r.overwritten);
		if (cc->r.state == OPF_CS_STOPPED && cc->r.pc) {
			fprintf(out, ", at ");
			print_addr(c, out, cc->r.pc, 0);
		}
		fputc('\n', out);
	}
}

static void status_line(const struct crash_info *ci, FILE *out)
{
	if (ci->have_end && !ci->cut_at)
		fprintf(out, "Dump:        complete: %s\n", ci->r.h.flags & OPF_C_NORECORD ?
			"every core's state arrived (no windows)" : "every core's window arrived");
	else
		fprintf(out, "Dump:        CUT SHORT%s: what follows is what arrived before the cut; "
			"the rest of the windows is missing\n", ci->cut_at ? " (the file ends inside "
			"a record)" : " (no OPF_CRASH_END)");
	if (ci->r.h.flags & OPF_C_NORECORD)
		fprintf(out, "Recorder:    not running yet: the panic came before the crash "
			"recorder started, so the dump holds the stacks only\n");
}

void crash_header(const struct ctx *c, FILE *out)
{
	const struct session *s = c->p->nsess ? &c->p->sess[0] : NULL;
	const struct crash_info *ci = s ? s->crash : NULL;

	if (!s || !session_is_crash(s))
		return;
	if (!ci || !ci->seen) {
		fprintf(out, "Crash dump:  CUT SHORT before its cause: nothing but the header "
			"arrived\n");
		return;
	}
	fprintf(out, "Crash dump:  cpu %u panicked, %.3f s after boot: %s%s\n", ci->r.core,
		(double)ci->r.ns / 1e9, cause_name(ci->r.cause),
		ci->r.h.flags & OPF_C_IN_NMI ? ", inside the NMI handler" : "");
	fprintf(out, "Message:     %s\n", ci->r.msg);
	status_line(ci, out);
	fprintf(out, "Panic stack (cpu %u):\n", ci->r.core);
	print_stack(c, out, ci->r.pc, ci->frames, ci->r.nframes);
	core_lines(c, ci, out);
}

/* A complete dump: each core's OPF_CRASH_CORE against the blocks that followed. */
static void audit_blocks(const struct session *s, FILE *out, int *fail)
{
	const struct crash_info *ci = s->crash;

	for (uint32_t k = 0; k < ci->ncores; k++) {
		const struct crash_core *cc = &ci->cores[k];

		if (!cc->seen) {
			*fail = 1;
			if (out)
				fprintf(out, "  FAIL crash dump: no OPF_CRASH_CORE for core %u\n", k);
		} else if (cc->r.blocks != s->writers[k].n) {
			*fail = 1;
			if (out)
				fprintf(out, "  FAIL crash dump: core %u: OPF_CRASH_CORE says %u blocks, "
					"the dump holds %u\n", k, cc->r.blocks, s->writers[k].n);
		}
	}
	if (ci->end.bytes != ci->end_off - sizeof(struct opf_block)) {
		*fail = 1;
		if (out)
			fprintf(out, "  FAIL crash dump: OPF_CRASH_END says %" PRIu64 " bytes came "
				"before it, the dump has %" PRIu64 "\n", ci->end.bytes,
				ci->end_off - (uint64_t)sizeof(struct opf_block));
	}
}

void crash_audit(const struct session *s, FILE *out, int *fail, int *incomplete)
{
	const struct crash_info *ci = s->crash;
	int whole = ci && ci->seen && ci->have_end && !ci->cut_at;

	if (whole)
		audit_blocks(s, out, fail);
	else
		*incomplete = 1;
	if (!out)
		return;
	fprintf(out, "  crash dump: checked: per core, the blocks of its window are consecutive "
		"(no gap, no repeat) and each holds what its header says%s\n", whole ?
		"; each core's block count and the dump's length match its records" : "");
	fprintf(out, "  crash dump: cannot check: the cores' totals (a dump has no OPF_CORE_END: "
		"what was taken, lost or overwritten before each window is the kernel's word "
		"only)%s\n", whole ? "" : "; the dump was CUT SHORT: what came after the cut");
}
