/*
 * swtch(save_rsp, new_rsp): save the callee-saved registers on the current stack, store
 * the stack pointer in *save_rsp, load new_rsp and pop the registers the other thread
 * saved the same way. Called by the scheduler with interrupts off.
 */
	.text
	.globl swtch
swtch:
	pushq %rbp
	movq %rsp, %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
