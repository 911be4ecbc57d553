/*
 * What the kernel runs on, identified once on the boot core at boot (arch_main, before the
 * other cores start) and read by anyone afterwards (arch_machine): bare hardware or a
 * hypervisor, and whether guest time follows instructions executed (QEMU -icount). The
 * profiler puts it in every session header, because it decides what a profile measures:
 * under plain TCG the guest's clock is the host's, so samples weigh emulation time; under
 * -icount they weigh instructions; on hardware or KVM, real time.
 *
 * The hypervisor: CPUID leaf 1 ECX bit 31 says one is present, leaf 0x40000000 names it
 * with a 12-byte signature in EBX, ECX, EDX ("TCGTCGTCGTCG" is QEMU's TCG, "KVMKVMKVM" KVM).
 *
 * -icount: scripts/qemu, asked by ICOUNT=1, says so through the fw_cfg file opt/kern/icount
 * (its shift, in decimal). Without it the kernel measures: under -icount the TSC is QEMU's
 * virtual clock, 2^shift ns per instruction executed, so two runs of a countable loop with
 * interrupts off differ in TSC by exactly 2^shift times their difference in instructions,
 * every time; the host's or the hardware's clock never does. This must run while no other
 * core executes: under -icount every virtual CPU advances the one virtual clock.
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"

#define HV_PRESENT	(1u << 31)	/* CPUID.1:ECX */
#define LEAF_HV		0x40000000u
#define PROBE_ITERS	4096u		/* loop iterations of the short probe; the long one: 2x */
#define PROBE_TRIES	3

static struct machine mach = { .icount_shift = -1 };

/* Whether CPUID says a hypervisor is present; its signature into mach.hv_sig. */
static bool read_signature(void)
{
	uint32_t a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & HV_PRESENT))
		return false;
	cpuid(LEAF_HV, 0, &a, &b, &c, &d);
	memcpy(mach.hv_sig, &b, 4);
	memcpy(mach.hv_sig + 4, &c, 4);
	memcpy(mach.hv_sig + 8, &d, 4);
	mach.hv_sig[12] = 0;
	return true;
}

static enum machine_kind kind_of(const char *sig, bool hv)
{
	if (!hv)
		return MACHINE_BARE;
	if (!strcmp(sig, "TCGTCGTCGTCG"))
		return MACHINE_QEMU_TCG;
	if (!strcmp(sig, "KVMKVMKVM"))
		return MACHINE_KVM;
	return MACHINE_OTHER_HV;
}

/* TSC ticks across n iterations of a two-instruction loop (dec; jnz), interrupts off. */
static uint64_t probe(uint64_t n)
{
	uint64_t t0, t1;

	__asm__ volatile("rdtsc; shl $32, %%rdx; or %%rdx, %%rax; mov %%rax, %0\n\t"
			 "1: dec %2; jnz 1b\n\t"
			 "rdtsc; shl $32, %%rdx; or %%rdx, %%rax; mov %%rax, %1"
			 : "=&r"(t0), "=&r"(t1), "+c"(n) : : "rax", "rdx", "cc");
	return t1 - t0;
}

/*
 * The shift when the TSC counts instructions (each 2^shift ticks), else -1: the long run
 * executes 2 * PROBE_ITERS instructions more than the short one, in exactly the same
 * number of ticks more every try.
 */
static int measure_shift(void)
{
	unsigned long f = irq_save();
	uint64_t diff = 0, d;
	int shift = -1;

	for (int i = 0; i < PROBE_TRIES; i++) {
		d = probe(2 * PROBE_ITERS) - probe(PROBE_ITERS);
		if (i && d != diff)
			goto out;
		diff = d;
	}
	for (int s = 0; s <= 20; s++)
		if (diff == (uint64_t)(2 * PROBE_ITERS) << s)
			shift = s;
out:
	irq_restore(f);
	return shift;
}

/* Boot core, once, before the other cores start. */
void machine_identify(void)
{
	char buf[16];
	uint64_t told;
	int s;

	mach.kind = kind_of(mach.hv_sig, read_signature());
	if (fwcfg_read_file("opt/kern/icount", buf, sizeof(buf)) > 0 && !parse_u64(buf, &told) &&
	    told <= 20) {
		mach.icount = true;
		mach.icount_told = true;
		mach.icount_shift = (int)told;
	} else if ((s = measure_shift()) >= 0) {
		mach.icount = true;
		mach.icount_shift = s;
	}
}

const struct machine *arch_machine(void)
{
	return &mach;
}
