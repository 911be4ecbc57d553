/*
 * x86 bring-up on the boot core, in dependency order; then the portable kernel_main, which
 * sets up memory and the console and starts the other cores (arch_start_cores).
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"
#include "init.h"


extern char boot_stack[];
static struct mb_info mb;

static void uart_irq_handler(struct trapframe *tf, void *arg)
{
	(void)tf;
	(void)arg;
	uart_irq();
}

__noreturn void arch_main(uint32_t mbi)
{
	uart_init();				/* COM1: printk works from here */
	pic_disable();				/* legacy 8259s off, before the LAPIC */
	gdt_init_cpu(0);			/* our GDT and TSS */
	fpu_init_cpu();				/* SSE for apps; saved at each switch */
	cpu_setup_this(0);			/* GS -> cpus[0] */
	cpus[0].irq_stack_lo = (uintptr_t)boot_stack;
	cpus[0].irq_stack_hi = (uintptr_t)boot_stack + 16384;
	idt_init();				/* every vector has an entry */
	idt_load();
	mmu_init();				/* page 0 unmapped: NULL faults */
	multiboot_parse(mbi, &mb);		/* memory map, kept for the page allocator */
	acpi_init(mb.rsdp);			/* MADT: cores, IOAPIC; HPET */
	hpet_init();				/* the NMI timer, if the machine has one */
	tsc_calibrate();			/* the clock every core shares (HPET, or PIT) */
	machine_identify();			/* hypervisor (CPUID); time = instructions? */
	lapic_init_cpu();			/* this core's LAPIC */
	cpus[0].apic_id = lapic_id();
	nmi_cpu_armed(0, cpus[0].apic_id);
	lapic_timer_calibrate();
	turns_start_cpu(0);			/* under -icount: cores take turns (turns.c) */
	ioapic_init();				/* every pin masked */
	irq_register(T_UART, uart_irq_handler, NULL);
	ioapic_route_isa(4, T_UART);		/* COM1 receive -> core 0 */
	uart_enable_irq();			/* input waits until interrupts are on */
	nmi_boot_test();			/* NMIs from here on if QEMU asks (fw_cfg) */
	kernel_main();				/* the portable kernel takes over */
	panic("kernel_main returned");
}
