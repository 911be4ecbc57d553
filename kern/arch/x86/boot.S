/*
 * Boot: GRUB (multiboot2) enters _start in 32-bit protected mode with paging off,
 * eax = 0x36d76289 and ebx = the physical address of the boot information.
 *
 * We build page tables that identity-map the first 4 GiB with 2 MiB pages (RAM, the LAPIC
 * and IOAPIC all live there), enable PAE and long mode, load a 64-bit GDT and jump to
 * arch_main(mbi) on the boot stack. Application processors reuse boot_pml4 (see
 * trampoline.S), so it must stay below 4 GiB: it is in .bss at ~1 MiB.
 *
 * Early failures print a letter on COM1 directly (no C yet) and halt.
 */
#define MB2_MAGIC	0xe85250d6
#define MB2_ARCH	0		/* i386 protected mode */
#define MB2_LOADER_MAGIC 0x36d76289
#define STACK_SIZE	16384

	.section .multiboot, "a"
	.align 8
mb2_header:
	.long MB2_MAGIC
	.long MB2_ARCH
	.long mb2_header_end - mb2_header
	.long -(MB2_MAGIC + MB2_ARCH + (mb2_header_end - mb2_header))
	/* end tag */
	.align 8
	.short 0
	.short 0
	.long 8
mb2_header_end:

	.section .text.boot, "ax"
	.code32
	.globl _start
_start:
	cli
	cld
	movl $(boot_stack + STACK_SIZE), %esp
	cmpl $MB2_LOADER_MAGIC, %eax
	jne no_multiboot
	movl %ebx, boot_mbi

	/* long mode needs CPUID leaf 0x80000001 with the LM bit */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode

	/* PML4[0] -> PDPT; PDPT[0..3] -> PD0..PD3; each PD maps 1 GiB in 2 MiB pages */
	movl $boot_pdpt, %eax
	orl $0x3, %eax
	movl %eax, boot_pml4
	movl $boot_pd, %eax
	orl $0x3, %eax
	xorl %ecx, %ecx
1:	movl %eax, boot_pdpt(,%ecx,8)
	addl $4096, %eax
	incl %ecx
	cmpl $4, %ecx
	jne 1b
	/* 2048 entries: physical address i * 2 MiB, present | writable | huge */
	xorl %ecx, %ecx
2:	movl %ecx, %eax
	shll $21, %eax
	orl $0x83, %eax
	movl %eax, boot_pd(,%ecx,8)
	movl %ecx, %eax
	shrl $11, %eax			/* high half of i * 2 MiB */
	movl %eax, boot_pd+4(,%ecx,8)
	incl %ecx
	cmpl $2048, %ecx
	jne 2b

	.globl enter_long_mode
enter_long_mode:
	/* shared with the AP trampoline from here: PAE, CR3, EFER.LME|NXE, paging */
	movl %cr4, %eax
	orl $0x20, %eax			/* PAE */
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx		/* EFER */
	rdmsr
	orl $0x100, %eax		/* LME */
	wrmsr
	movl %cr0, %eax
	orl $0x80010001, %eax		/* PG | WP | PE */
	movl %eax, %cr0
	lgdt boot_gdt_desc
	ljmp $0x08, $long_mode_entry

no_multiboot:
	movb $'M', %al
	jmp early_die
no_long_mode:
	movb $'L', %al
early_die:
	movw $0x3f8, %dx
	outb %al, %dx
3:	hlt
	jmp 3b

	.code64
long_mode_entry:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	/* an AP arrives here too: it finds its stack in ap_boot_stack (set by smp.c) */
	movq ap_boot_stack(%rip), %rsp
	testq %rsp, %rsp
	jnz ap_long_mode
	movabsq $(boot_stack + STACK_SIZE), %rsp
	xorq %rbp, %rbp			/* backtraces end here */
	movl boot_mbi(%rip), %edi
	call arch_main
4:	hlt
	jmp 4b

ap_long_mode:
	xorq %rbp, %rbp
	call ap_main
5:	hlt
	jmp 5b

	.section .rodata
	.align 16
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff		/* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff		/* 0x10: data */
boot_gdt_end:
	.globl boot_gdt_desc
boot_gdt_desc:
	.short boot_gdt_end - boot_gdt - 1
	.long boot_gdt

	.data
	.align 8
	.globl boot_mbi
boot_mbi:	.long 0
	.align 8
	.globl ap_boot_stack
ap_boot_stack:	.quad 0

	.bss
	.align 4096
	.globl boot_pml4
boot_pml4:	.space 4096
boot_pdpt:	.space 4096
boot_pd:	.space 4 * 4096
	.globl boot_stack
boot_stack:	.space STACK_SIZE
