/* setjmp.h for apps: jmp_buf = rbx rbp r12 r13 r14 r15 rsp rip. App code. */
	.text
	.globl libc_setjmp
	.type libc_setjmp, @function
libc_setjmp:
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rax
	movq %rax, 48(%rdi)
	movq (%rsp), %rax
	movq %rax, 56(%rdi)
	xorl %eax, %eax
	ret
	.size libc_setjmp, . - libc_setjmp

	.globl libc_longjmp
	.type libc_longjmp, @function
libc_longjmp:
	movl %esi, %eax
	testl %eax, %eax
	jnz 1f
	incl %eax
1:	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	jmpq *56(%rdi)
	.size libc_longjmp, . - libc_longjmp

	.section .note.GNU-stack, "", @progbits
