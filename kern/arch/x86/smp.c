/*
 * Starting the application processors (arch_start_cores). The boot core copies the
 * trampoline to 0x8000 and starts the cores the MADT lists one at a time (INIT-SIPI-SIPI),
 * handing each its stack (static: the arch allocates nothing) through ap_boot_stack and
 * waiting until it reports in, so one stack variable suffices.
 * Each AP then runs ap_main: its own GDT/TSS, IDT, GS, LAPIC, and the portable per-core
 * start. The TSS comes first so that an NMI taken as soon as the IDT is loaded already
 * has its own stack, which names the core (nmi.c): such an NMI needs nothing else.
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"
#include "init.h"

#define TRAMPOLINE_ADDR	0x8000
#define AP_STACK_PAGES	4

extern char trampoline_start[], trampoline_end[];
extern uint64_t ap_boot_stack;
extern int ncpus_online;
static volatile int ap_started;
static volatile int ap_core;
/* Each AP's stack until its idle thread runs (and for its interrupts before that). */
static uint8_t ap_stacks[MAX_CPUS][AP_STACK_PAGES * PGSIZE] __aligned(PGSIZE);


__noreturn void ap_main(void)
{
	int core = ap_core;

	gdt_init_cpu(core);			/* GDT; TSS with the double fault's and NMI's stacks */
	idt_load();				/* exceptions and NMIs are handled from here */
	fpu_init_cpu();				/* SSE for apps; saved at each switch */
	nmi_cpu_armed(core, lapic_id());	/* the NMI boot test may target it */
	cpu_setup_this(core);			/* GS -> cpus[core] */
	lapic_init_cpu();
	turns_start_cpu(core);			/* under -icount: its turns (turns.c) */
	cpus[core].apic_id = lapic_id();
	cpus[core].irq_stack_hi = ap_boot_stack;
	cpus[core].irq_stack_lo = ap_boot_stack - AP_STACK_PAGES * PGSIZE;
	__atomic_store_n(&ap_started, 1, __ATOMIC_RELEASE);
	kernel_ap_main();
	panic("kernel_ap_main returned");
}

static bool start_one(int core, uint32_t apic_id)
{
	uint8_t *stack = ap_stacks[core];
	uint64_t deadline;

	ap_core = core;
	ap_started = 0;
	ap_boot_stack = (uintptr_t)stack + AP_STACK_PAGES * PGSIZE;
	lapic_send_init_sipi(apic_id, TRAMPOLINE_ADDR >> 12);
	deadline = rdtsc() + tsc_hz();		/* one second */
	while (!__atomic_load_n(&ap_started, __ATOMIC_ACQUIRE))
		if (rdtsc() > deadline)
			return false;
	return true;
}

void arch_start_cores(void)
{
	uint32_t me = lapic_id();
	int core = 1;

	memcpy((void *)TRAMPOLINE_ADDR, trampoline_start, trampoline_end - trampoline_start);
	for (int i = 0; i < acpi.ncpus && core < MAX_CPUS; i++) {
		if (acpi.apic_ids[i] == me)
			continue;
		if (!start_one(core, acpi.apic_ids[i])) {
			printk("smp: cpu with apic id %u did not start\n", acpi.apic_ids[i]);
			continue;
		}
		core++;
		__atomic_store_n(&ncpus_online, core, __ATOMIC_RELEASE);
	}
	nmi_boot_test_hold();			/* boot test: every core took NMIs by now */
	/* the boot core counts as online from here, as kernel_ap_main marks the others */
	WRITE_ONCE(cpus[0].online, true);
}
