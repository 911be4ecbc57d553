/*
 * Per-core data access, the interrupt flag, and leaving QEMU.
 *
 * GS base holds the address of this core's struct cpu (set by cpu_setup_this before the
 * core takes any interrupt), so this_cpu() and core_id() are one load each.
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"

struct cpu cpus[MAX_CPUS];
int ncpus_online = 1;

void cpu_setup_this(int core)
{
	struct cpu *c = &cpus[core];

	c->self = c;
	c->id = core;
	wrmsr(MSR_GS_BASE, (uintptr_t)c);
}

struct cpu *this_cpu(void)
{
	return cpu_here();
}

int core_id(void) { return this_cpu()->id; }
int ncpus(void) { return READ_ONCE(ncpus_online); }
int arch_cpu_apic_id(int core) { return (int)cpus[core].apic_id; }

unsigned long irq_save(void)
{
	unsigned long f = read_rflags();

	cli();
	return f & RFLAGS_IF;
}

void irq_restore(unsigned long flags)
{
	if (flags & RFLAGS_IF)
		sti();
}

void irq_enable(void) { sti(); }
void irq_disable(void) { cli(); }
bool irq_enabled(void) { return read_rflags() & RFLAGS_IF; }
void cpu_relax(void) { pause(); }

/*
 * sti takes effect after the next instruction, so no interrupt slips in before hlt. An NMI
 * may (the SDM says only that NMIs "may be inhibited" there; 40000 NMIs under QEMU never
 * hit it, but nothing rules it out), and its iretq ends the shadow: an interrupt that came
 * meanwhile would then be taken before the hlt, which would sleep with its wakeup spent. nmi_trap therefore returns past the hlt
 * when it interrupted exactly there (its address is in cpu_halt_hlt, a data word, so that
 * the symbol table still calls the hlt cpu_halt), and the caller re-checks. noinline: the
 * asm, and its label, must exist once.
 */
__attribute__((noinline)) void cpu_halt(void)
{
	__asm__ volatile("sti\n"
			 "1:\thlt\n"
			 "\t.pushsection .rodata\n"
			 "\t.balign 8\n"
			 "\t.globl cpu_halt_hlt\n"
			 "cpu_halt_hlt:\t.quad 1b\n"
			 "\t.popsection" ::: "memory");
}

/* QEMU's isa-debug-exit device (iobase 0xf4) exits with status (code << 1) | 1. */
void arch_exit(int code)
{
	cli();
	outl(0xf4, (uint32_t)code);
	for (;;)
		__asm__ volatile("hlt");
}

/* ACPI soft-off: SLP_TYP of S5 with SLP_EN in PM1a (and PM1b) control; QEMU exits 0. */
void arch_poweroff(void)
{
	uint16_t v = (uint16_t)(acpi.s5_typ << 10 | 1 << 13);

	cli();
	if (acpi.pm1a_cnt)
		outw((uint16_t)acpi.pm1a_cnt, v);
	if (acpi.pm1b_cnt)
		outw((uint16_t)acpi.pm1b_cnt, v);
	/* QEMU acts on the request asynchronously: give it a second before giving up */
	for (uint64_t end = rdtsc() + tsc_hz(); rdtsc() < end;)
		pause();
	printk("poweroff: ACPI soft-off did not work\n");
	arch_exit(0);		/* at least stop, with a status that is not 0 */
}
