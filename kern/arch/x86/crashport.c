/*
 * The crash dump's channel and the walks a panic needs (crash.h, arch.h "Crash dumps").
 *
 * The channel is QEMU's isa-debugcon on I/O port 0xe9, which scripts/RUN connects to a
 * file: every byte written to the port is appended to the file, synchronously, with no
 * interrupt, no DMA and no driver state, so any context may write, a panic included.
 * A read of the port returns 0xe9 when the device is there (its readback), nothing that
 * would otherwise answer at 0xe9 does. The host's options are the fw_cfg file
 * opt/kern/crash (read once, boot core, boot time, like every fw_cfg read).
 *
 * Contexts: arch_crash_options at boot; the rest in any context, NMI and panic included.
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"

#define CRASH_PORT	0xe9
#define READBACK	0xe9

int arch_crash_options(char *buf, size_t len)
{
	return fwcfg_read_file("opt/kern/crash", buf, len);
}

bool arch_crash_channel(void)
{
	return inb(CRASH_PORT) == READBACK;
}

void arch_crash_write(const void *p, size_t n)
{
	__asm__ volatile("rep outsb" : "+S"(p), "+c"(n) : "d"((uint16_t)CRASH_PORT) : "memory");
}

bool arch_in_nmi(void)
{
	return nmi_in_handler(core_id());
}

static bool plausible_fp(uintptr_t fp)
{
	return fp && !(fp & 7) && fp >= 0x100000 && fp < (1ull << 32);
}

unsigned arch_crash_walk(const struct trapframe *tf, uintptr_t fp, uintptr_t lo, uintptr_t hi,
			 uint64_t *pc, uint64_t *frames, unsigned max)
{
	unsigned n = 0;
	uintptr_t ret;

	if (tf) {
		*pc = tf->rip;
		fp = tf->rbp;
		if (lo == hi) {
			lo = this_cpu()->irq_stack_lo;
			hi = this_cpu()->irq_stack_hi;
		}
		nmi_stack_bounds(core_id(), &lo, &hi, tf->rsp);	/* a fault inside an NMI */
		if ((ret = arch_unlinked_return(tf->rip, tf->rsp, lo, hi)) && n < max)
			frames[n++] = ret;
	} else {
		/* inside the call: a noreturn call's return address may be past its function */
		*pc = plausible_fp(fp) && ((uintptr_t *)fp)[1] ? ((uintptr_t *)fp)[1] - 1 : 0;
		fp = plausible_fp(fp) ? ((uintptr_t *)fp)[0] : 0;
	}
	while (n < max && plausible_fp(fp)) {
		ret = ((uintptr_t *)fp)[1];
		if (!ret)
			break;
		frames[n++] = ret;
		fp = ((uintptr_t *)fp)[0];
	}
	return n;
}

void arch_print_frames(uint64_t pc, const uint64_t *frames, unsigned n)
{
	print_frame(0, pc);
	for (unsigned i = 0; i < n; i++)
		print_frame((int)i + 1, frames[i]);
}
