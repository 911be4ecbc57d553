/*
 * Interfaces between the files of kern/arch/x86 (not for portable code: see arch.h).
 */
#ifndef ARCH_X86_H
#define ARCH_X86_H

#include "kernel.h"

/* Interrupt vectors */
#define T_NMI		2
#define T_DF		8
#define T_PF		14
#define IRQ_BASE	32
#define T_TIMER		32	/* LAPIC timer, every core */
#define T_UART		36	/* COM1 through the IOAPIC */
#define T_PCI_BASE	40	/* 40..47: PCI INTx lines routed through the IOAPIC */
#define T_IPI_WAKE	0xf0	/* wake a core from hlt (scheduler) */
#define T_IRQ_WORK	0xf2	/* self-IPI: arch_irq_work_raise, from NMI context too */
#define T_SPURIOUS	0xff

/* This core's struct cpu (cpu.h), inline: GS holds it once cpu_setup_this ran. */
static inline struct cpu *cpu_here(void)
{
	struct cpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
}

struct trapframe {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rdi, rsi, rbp, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	/* pushed by the CPU */
	uint64_t rip, cs, rflags, rsp, ss;
};

/* uart.c */
void uart_init(void);
void uart_putc(char c);
void uart_irq(void);
void uart_enable_irq(void);

/* multiboot.c */
struct mb_info {
	uintptr_t rsdp;		/* ACPI RSDP copy inside the boot info, 0 if none */
	char cmdline[128];
};
void multiboot_parse(uint32_t mbi, struct mb_info *out);

/* gdt.c */
void gdt_init_cpu(int core);

/* fpu.c */
void fpu_init_cpu(void);
void fpu_init_image(void *fx);

/* mmu.c */
void mmu_init(void);

/* appfault.c: an exception in an app instance ends the instance (true) or is fatal */
bool app_trap(struct trapframe *tf);

/* trap.c */
void idt_init(void);
void idt_load(void);
typedef void (*irq_handler)(struct trapframe *tf, void *arg);
void irq_register(int vector, irq_handler fn, void *arg);
void backtrace_print(uintptr_t pc, uintptr_t fp);
void print_frame(int depth, uintptr_t pc);		/* "  #depth pc symbol+off", any context */
void backtrace_print_tf(struct trapframe *tf);	/* the faulting frame first, then its chain */

/* acpi.c */
struct acpi_info {
	int ncpus;			/* cores this kernel may start (at most 64) */
	int lapics;			/* every enabled or online-capable LAPIC listed */
	uint32_t apic_ids[64];
	uintptr_t lapic_addr;
	uintptr_t ioapic_addr;
	uint32_t ioapic_gsi_base;
	/* ISA IRQ -> GSI and flags from interrupt source overrides */
	uint32_t isa_gsi[16];
	uint16_t isa_flags[16];
	uint64_t hpet_addr;		/* HPET table: the event timer block, 0 if none */
	uint32_t pm1a_cnt, pm1b_cnt;	/* FADT: PM1 control ports, for soft-off */
	uint8_t s5_typ;			/* DSDT \_S5: SLP_TYP for soft-off */
};
extern struct acpi_info acpi;
void acpi_init(uintptr_t rsdp);

/* lapic.c */
void lapic_init_cpu(void);
uint32_t lapic_id(void);
extern volatile uint32_t *lapic_mmio;	/* this core's local APIC registers (lapic.c) */
/* End of interrupt: one write, nothing read back (see lapic.c on the timer path). */
static inline void lapic_eoi(void) { lapic_mmio[0x0b0 / 4] = 0; }
void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low);
void lapic_send_init_sipi(uint32_t apic_id, uint8_t vector_page);
void lapic_timer_calibrate(void);
void lapic_send_nmi(uint32_t apic_id);	/* NMI-safe: an NMI to one core */
void lapic_send_self(uint32_t vector);	/* NMI-safe: a fixed interrupt to this core */

/* ioapic.c */
void pic_disable(void);
void ioapic_init(void);
/* Route GSI to vector on the boot core; level/active-low from flags (MADT MPS INTI). */
void ioapic_route(uint32_t gsi, int vector, bool level, bool active_low);
void ioapic_route_isa(int irq, int vector);
/* Physical destination FFh: every local APIC (xAPIC; SDM Vol. 3A, 10.6.2.1). */
#define IOAPIC_DEST_BROADCAST	0xffu
void ioapic_route_nmi(uint32_t gsi, uint32_t dest, bool active_low);
void ioapic_mask(uint32_t gsi);

/* hpet.c: timer 0 periodic, or timers 0 and 1 one-shot, on ISA IRQ 0 and 8 (legacy route) */
#define HPET_MAIN_LO	0x0f0
extern volatile uint32_t *hpet;
void hpet_init(void);
bool hpet_present(void);
uint64_t hpet_hz(void);
uint32_t hpet_ticks_per_period(uint32_t hz);
bool hpet_start_periodic(uint32_t period);
void hpet_start(uint32_t at0, uint32_t at1);
uint32_t hpet_counter(void);
void hpet_stop(void);
/* hpet_counter inlined, for the NMI handler. */
static inline uint32_t hpet_now(void) { return hpet[HPET_MAIN_LO / 4]; }
/*
 * NMI context (nmi.c's claiming core) or any other: timer (0 or 1), one-shot since
 * hpet_start, interrupts once more when the counter reaches at. One register write, nothing
 * read back; inlined into the NMI handler's claim.
 */
#define HPET_TN_CMP(n)	(0x108 + 0x20 * (n))
static inline void hpet_arm(int timer, uint32_t at) { hpet[HPET_TN_CMP(timer) / 4] = at; }

/* nmi.c */
uintptr_t nmi_stack_top(int core);
void nmi_stack_bounds(int core, uintptr_t *lo, uintptr_t *hi, uintptr_t sp);
void nmi_cpu_armed(int core, uint32_t apic_id);
void nmi_trap(struct trapframe *tf);
bool nmi_in_handler(int core);
void nmi_panic(void);
void nmi_boot_test(void);
void nmi_boot_test_hold(void);

/* turns.c: sharing QEMU's -icount round robin among the cores */
struct turns_core {
	uint64_t next_slice;	/* TSC of the next slice boundary (UINT64_MAX: turns are off) */
	int owner;		/* the core whose slice it is (decided at next_slice's start) */
	bool hold;		/* this slice is another core's: hold at its timer interrupts */
} __aligned(CACHELINE);
extern struct turns_core turns_cores[];
extern const struct trapframe *turns_standing[];
void turns_start_cpu(int core);
void turns_slice(struct turns_core *t, int core, uint64_t now);
void turns_hold(struct trapframe *tf, struct cpu *c);
/* timer_trap on core, before its alarms: hold in this slice? (decided at each boundary) */
static inline bool turns_due(int core, uint64_t now)
{
	struct turns_core *t = &turns_cores[core];

	if (unlikely(now >= t->next_slice))
		turns_slice(t, core, now);
	return t->hold;
}
uint64_t turns_busy_deadline(int core, uint64_t deadline);
/*
 * arch_timer_set, own core: deadline, or the next slice boundary if that comes first and
 * the core is busy (turns_busy_deadline)
 */
static inline uint64_t turns_deadline(int core, uint64_t deadline)
{
	return deadline && turns_cores[core].next_slice < deadline ?
		turns_busy_deadline(core, deadline) : deadline;
}
/* NMI context on core: the frame a sample takes, where the core stands while it holds. */
static inline const struct trapframe *turns_frame(int core, const struct trapframe *tf)
{
	const struct trapframe *f = READ_ONCE(turns_standing[core]);

	return f ? f : tf;
}

/* fwcfg.c */
int fwcfg_read_file(const char *name, char *buf, size_t len);

/* machine.c */
void machine_identify(void);

/* tsc.c */
void tsc_calibrate(void);

/* cpu.c: the address of cpu_halt's hlt instruction */
extern const uintptr_t cpu_halt_hlt;

/* smp.c, cpu.c */
void cpu_setup_this(int core);

/* ksyms.c */
void ksyms_init(void);
/* pc lies in a function that builds no frame; its bounds [start, end) */
bool ksym_frameless_leaf(uintptr_t pc, uintptr_t *start, uintptr_t *end);

/* Entry points called from assembly: boot.S, trampoline.S, trapentry.S */
__noreturn void arch_main(uint32_t mbi);
__noreturn void ap_main(void);
void trap(struct trapframe *tf);
void timer_trap(struct trapframe *tf);	/* the timer vector (timer_entry) */

/* misc */
extern uint32_t boot_mbi;
void arch_console_write(const char *s, size_t n);

#endif
