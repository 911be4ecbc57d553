/*
 * FPU/SSE for app code. Called on each core once, at bring-up (arch_main, ap_main), before
 * its first context switch. The kernel itself is compiled general-register-only, so no
 * interrupt, exception or NMI handler touches the x87/SSE registers: the only place their
 * contents change hands is the context switch (swtch.S), which saves the leaving thread's
 * state (fxsave) on its own stack and restores the arriving one's. A sample therefore costs
 * the same in app code as in kernel code.
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"

#define CR0_MP	(1ul << 1)
#define CR0_EM	(1ul << 2)
#define CR0_TS	(1ul << 3)
#define CR0_NE	(1ul << 5)
#define CR4_OSFXSR	(1ul << 9)
#define CR4_OSXMMEXCPT	(1ul << 10)

void fpu_init_cpu(void)
{
	uint64_t cr0, cr4;

	__asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
	cr0 = (cr0 & ~(CR0_EM | CR0_TS)) | CR0_MP | CR0_NE;
	__asm__ volatile("mov %0, %%cr0" :: "r"(cr0));
	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	cr4 |= CR4_OSFXSR | CR4_OSXMMEXCPT;
	__asm__ volatile("mov %0, %%cr4" :: "r"(cr4));
	__asm__ volatile("fninit");
}

/*
 * A new thread's first FPU image, as fxsave would lay it out: x87 control word 0x37f (all
 * exceptions masked, double-extended precision), MXCSR 0x1f80 (all masked, round to
 * nearest), every register zero. fx is 512 bytes, 16-byte aligned.
 */
void fpu_init_image(void *fx)
{
	uint8_t *p = fx;

	memset(p, 0, 512);
	*(uint16_t *)p = 0x37f;
	*(uint32_t *)(p + 24) = 0x1f80;
}
