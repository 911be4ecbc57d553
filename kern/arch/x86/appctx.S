/*
 * Entering and leaving an app's main on the app instance's own stack (kern/apps/app.c).
 *
 * int arch_app_enter(struct app_ctx *ctx, int (*main)(int, char **), int argc, char **argv,
 *		      uintptr_t stack_top): thread context. Saves the callee-saved registers on
 * the thread's stack and that stack pointer in ctx->rsp, switches to stack_top (16-byte
 * aligned) with a zero frame pointer (backtraces end at main) and calls main(argc, argv).
 * Returns main's result, or the status given to arch_app_leave(ctx, status), which may be
 * called from anywhere inside main (exit, abort) or reached from a trap frame that a fault
 * or Ctrl-C redirected to it (arch_tf_app_leave): it drops everything main had on its stack.
 */
	.text
	.globl arch_app_enter
	.type arch_app_enter, @function
arch_app_enter:
	pushq %rbp
	movq %rsp, %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rdi, %rbx
	movq %r8, %rsp
	xorl %ebp, %ebp
	movq %rsi, %rax
	movl %edx, %edi
	movq %rcx, %rsi
	callq *%rax
	movq %rbx, %rdi
	movl %eax, %esi
	.size arch_app_enter, . - arch_app_enter
	/* fall through */
	.globl arch_app_leave
	.type arch_app_leave, @function
arch_app_leave:
	movq (%rdi), %rsp
	movl %esi, %eax
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size arch_app_leave, . - arch_app_leave
