/*
 * swtch(save_rsp, new_rsp): save the callee-saved registers and the FPU/SSE state
 * (fxsave, 512 bytes, 16-byte aligned) on the current stack, store the stack pointer in
 * *save_rsp, load new_rsp and restore what the other thread saved the same way. Called by
 * the scheduler with interrupts off. Layout from the saved stack pointer up:
 * [0] unused, [8] the stack pointer before the FPU area, [16..528) the fxsave image, then
 * r15 r14 r13 r12 rbx rbp and the return address (arch_thread_stack_init builds the same).
 */
	.text
	.globl swtch
	.type swtch, @function
swtch:
	pushq %rbp
	movq %rsp, %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, %rax
	subq $528, %rsp
	andq $-16, %rsp
	movq %rax, 8(%rsp)
	fxsave64 16(%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	fxrstor64 16(%rsp)
	movq 8(%rsp), %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size swtch, . - swtch
