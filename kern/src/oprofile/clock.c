/*
 * The session header's clock fields: what the machine is and what the time between two
 * samples measures, so a report can say what it weighs (docs/FORMAT.md, "The clock").
 * Called by the session builder (rec_session) and the stat file, any thread context; the
 * machine was identified once at boot (arch_machine) and never changes.
 *
 * Under QEMU's TCG without -icount the guest's clock is the host's and an interrupt is
 * taken only between translated blocks, so a sample weighs emulation time; with -icount it
 * weighs instructions; on hardware or under KVM, real time.
 */
#include "internal.h"

static const uint32_t machine_abi[] = {
	[MACHINE_BARE] = OPF_MACH_BARE,
	[MACHINE_QEMU_TCG] = OPF_MACH_QEMU_TCG,
	[MACHINE_KVM] = OPF_MACH_KVM,
	[MACHINE_OTHER_HV] = OPF_MACH_OTHER,
};

/* The clock of this machine (enum opf_clock). */
uint32_t clock_kind(void)
{
	const struct machine *m = arch_machine();

	if (m->icount)
		return OPF_CLOCK_INSN;
	return m->kind == MACHINE_QEMU_TCG ? OPF_CLOCK_EMULATION : OPF_CLOCK_HARDWARE;
}

/* Fill s's machine, clock, icount_shift, hv_sig and OPF_S_CLOCK_TOLD. */
void clock_describe(struct opf_session *s)
{
	const struct machine *m = arch_machine();

	s->machine = machine_abi[m->kind];
	s->clock = clock_kind();
	s->icount_shift = m->icount ? m->icount_shift : -1;
	memcpy(s->hv_sig, m->hv_sig, MIN(sizeof(s->hv_sig), sizeof(m->hv_sig)));
	if (m->icount_told)
		s->flags |= OPF_S_CLOCK_TOLD;
}

/* Names for /dev/oprofilestat: the "machine" and "clock" lines. */
const char *clock_machine_name(void)
{
	static const char *const names[] = {
		[MACHINE_BARE] = "bare", [MACHINE_QEMU_TCG] = "qemu-tcg",
		[MACHINE_KVM] = "kvm", [MACHINE_OTHER_HV] = "hypervisor",
	};

	return names[arch_machine()->kind];
}

const char *clock_name(void)
{
	static const char *const names[] = {
		[OPF_CLOCK_EMULATION] = "emulation", [OPF_CLOCK_INSN] = "instructions",
		[OPF_CLOCK_HARDWARE] = "hardware",
	};

	return names[clock_kind()];
}
