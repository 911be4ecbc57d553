/*
 * clockdesc.c: what a profile's samples weigh, named from the session header's clock fields
 * (filled by the kernel's kern/src/oprofile/clock.c; docs/FORMAT.md, "The clock"). Called
 * by the text header (header.c), --stats (stats.c), the pprof comment (pprof.c) and the
 * perf.data header (perfdata.c), so they all say it in the same words. A stream from before
 * the fields has a shorter session record; the reader zero-fills it: "unknown clock".
 */
#include <stdio.h>
#include <string.h>

#include "model/clockdesc.h"
#include "util/textenc.h"

/* The clock in a few words, e.g. "emulation time, QEMU TCG"; buf holds it (n >= 64). */
const char *clock_text(const struct opf_session *h, char *buf, size_t n)
{
	switch (h->clock) {
	case OPF_CLOCK_EMULATION:
		snprintf(buf, n, "emulation time, QEMU TCG");
		break;
	case OPF_CLOCK_INSN:
		if (h->icount_shift >= 0 && h->icount_shift < 31)
			snprintf(buf, n, "instructions, QEMU -icount (shift=%d: %d ns each)",
				 h->icount_shift, 1 << h->icount_shift);
		else
			snprintf(buf, n, "instructions, QEMU -icount");
		break;
	case OPF_CLOCK_HARDWARE: {
		char sig[sizeof(h->hv_sig) + 1] = { 0 };	/* the stream's bytes: shown */
		int k = snprintf(buf, n, "hardware time, %s", h->machine == OPF_MACH_KVM ? "KVM" :
				 h->machine == OPF_MACH_BARE ? "bare hardware" : "hypervisor ");

		memcpy(sig, h->hv_sig, sizeof(h->hv_sig));
		if (h->machine == OPF_MACH_OTHER && k >= 0 && (size_t)k < n)
			shown_copy(buf + k, n - (size_t)k, sig);
		break;
	}
	default:
		snprintf(buf, n, "unknown clock (a stream from before the kernel recorded it)");
	}
	return buf;
}

/* How the periods were placed, from the jitter fields (zero in a record from before them). */
const char *jitter_text(const struct opf_session *h, char *buf, size_t n)
{
	if (h->jitter)
		snprintf(buf, n, "spread %u%% of a period (seed 0x%llx): each sample at a random "
			 "moment", h->jitter, (unsigned long long)h->jitter_seed);
	else
		snprintf(buf, n, "none: fixed periods (a loop that divides one is seen at one place)");
	return buf;
}

/* Under plain TCG, the one sentence a reader needs before trusting caller/callee shares. */
const char *clock_advice(const struct opf_session *h)
{
	if (h->clock != OPF_CLOCK_EMULATION)
		return NULL;
	return "Under plain TCG a sample weighs the host's time spent emulating, and the "
	       "emulator takes an interrupt only between translated blocks and pays far more for "
	       "a call or return than for straight-line code, so callers look heavier and their "
	       "callees lighter than the instructions they execute; scripts/RUN's default "
	       "clock (ICOUNT=1, unless ICOUNT=0 is given) profiles by instructions.";
}
