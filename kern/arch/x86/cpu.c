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
	struct cpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
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

/* sti takes effect after the next instruction, so no interrupt slips in before hlt. */
void cpu_halt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }

/* QEMU's isa-debug-exit device (iobase 0xf4) exits with status (code << 1) | 1. */
void arch_exit(int code)
{
	cli();
	outl(0xf4, (uint32_t)code);
	for (;;)
		__asm__ volatile("hlt");
}

/* ACPI soft-off through the PM1a control block QEMU puts at 0x604 (pc and q35). */
void arch_poweroff(void)
{
	cli();
	outw(0x604, 0x2000);
	arch_exit(0);	/* not QEMU's pc or q35: at least stop */
}
