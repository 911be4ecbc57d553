/*
 * crash_header.c: the lines a crash dump's report opens with (docs/FORMAT.md, "Crash
 * dumps"), called by header.c's report_header: the cause, the panicking core's stack, every
 * core's state when the panic stopped it (its thread by id and name: the dump's OPF_THREAD
 * records, "?" in a dump older than them), and whether the dump arrived whole. Nothing for
 * another stream.
 */
#include <inttypes.h>

#include "text/text.h"
#include "util/textenc.h"

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
		fprintf(out, "  cpu %u: %s%s, tid %u (", k, state_name(cc->r.state),
			cc->r.h.flags & OPF_CC_IRQOFF ? " (interrupts off)" : "", cc->r.tid);
		term_puts(out, profile_thread_label(c->p, cc->r.tid));
		fprintf(out, "), window %u blocks, %" PRIu64 " samples in the report (%" PRIu64
			" taken, %" PRIu64 " overwritten)", cc->r.blocks, s->cores[k].samples,
			cc->r.taken, cc->r.overwritten);
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
	fputs("Message:     ", out);
	term_puts(out, ci->r.msg);
	fputc('\n', out);
	status_line(ci, out);
	fprintf(out, "Panic stack (cpu %u):\n", ci->r.core);
	print_stack(c, out, ci->r.pc, ci->frames, ci->r.nframes);
	core_lines(c, ci, out);
}
