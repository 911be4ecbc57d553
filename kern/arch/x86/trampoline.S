/*
 * Application processor start-up code. smp.c copies [trampoline_start, trampoline_end) to
 * physical TRAMPOLINE_ADDR (0x8000) and sends INIT-SIPI-SIPI with vector 0x08. The AP starts
 * here in real mode at 0x0800:0000, loads a flat 32-bit GDT, enters protected mode and jumps
 * to enter_long_mode in boot.S, which finishes the way the boot core did and calls ap_main
 * on the stack that smp.c left in ap_boot_stack.
 *
 * Everything here is addressed as an offset from TRAMPOLINE_ADDR, since it runs at a copy.
 */
#define TRAMPOLINE_ADDR	0x8000
#define REL(x)		((x) - trampoline_start + TRAMPOLINE_ADDR)

	.section .rodata
	.code16
	.globl trampoline_start, trampoline_end
trampoline_start:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	lgdtl REL(tramp_gdt_desc)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $0x08, $REL(tramp_pm)

	.code32
tramp_pm:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl $enter_long_mode, %eax
	jmp *%eax

	.align 16
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff		/* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff		/* 0x10: data */
tramp_gdt_desc:
	.short tramp_gdt_desc - tramp_gdt - 1
	.long REL(tramp_gdt)
trampoline_end:
	.code64
