/*
 * Interrupt and exception entry. Every vector has an entry that pushes a zero error code
 * when the CPU pushes none, then the vector number, and joins trap_common, which saves
 * the general registers as a struct trapframe (arch_x86.h) and calls trap(tf).
 *
 * trap_common also builds a frame-pointer link (rbp -> the interrupted rbp, return address
 * the interrupted rip) so that backtraces from inside a handler continue into the
 * interrupted code.
 *
 * Everything runs in ring 0 on the interrupted stack (there is no user mode); the double
 * fault uses IST1 so a blown stack still gets a report.
 *
 * The timer vector (T_TIMER, 32) has an entry of its own, timer_entry, below.
 *
 * Every routine here is a typed, sized function (.type/.size): perf and hotspot's parser name
 * an address only by a sized function symbol that covers it, and samples land here
 * (tests/t/kernel-symbols).
 */
	.text

.macro VECTOR_NOERR n
	.align 16
	pushq $0
	pushq $\n
	jmp trap_common
.endm

.macro VECTOR_TIMER
	.align 16
	jmp timer_entry
.endm

.macro VECTOR_ERR n
	.align 16
	pushq $\n
	jmp trap_common
.endm

	.align 16
	.globl trap_vectors
	.type trap_vectors, @function
trap_vectors:
vec = 0
.rept 256
	.if vec == 8 || (vec >= 10 && vec <= 14) || vec == 17 || vec == 21 || vec == 29 || vec == 30
	VECTOR_ERR vec
	.elseif vec == 32		/* T_TIMER (arch_x86.h) */
	VECTOR_TIMER
	.else
	VECTOR_NOERR vec
	.endif
	vec = vec + 1
.endr
	.size trap_vectors, . - trap_vectors

	.globl trap_common
	.type trap_common, @function
trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rbp
	pushq %rsi
	pushq %rdi
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %rdi
	/* fake frame: [rbp] = interrupted rbp, [rbp+8] = interrupted rip */
	pushq 17*8(%rsp)		/* tf->rip */
	pushq 10*8+8(%rsp)		/* tf->rbp */
	movq %rsp, %rbp
	call trap
	addq $16, %rsp
	.size trap_common, . - trap_common
	.globl trap_return
	.type trap_return, @function
trap_return:
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rdi
	popq %rsi
	popq %rbp
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp			/* vector, error */
	iretq
	.size trap_return, . - trap_return

/*
 * The timer vector, the most frequent interrupt by far (sampling rides on it): the same
 * struct trapframe and frame-pointer link as trap_common, but the callee-saved registers
 * other than rbp (rbx, r12-r15) are neither saved nor restored -- timer_trap preserves
 * them as the C ABI does, and a context switch inside it saves them in swtch -- so their
 * slots in the frame hold whatever was there: nothing on the timer path may read them
 * (it reads rip, rsp, rbp, rflags; a redirect to arch_app_leave writes rip, rsp, rflags,
 * rdi and rsi, all restored from the frame). Calls timer_trap(tf), no dispatch on the
 * vector.
 */
	.globl timer_entry
	.type timer_entry, @function
timer_entry:
	pushq $0			/* error */
	pushq $32			/* vector: T_TIMER */
	pushq %rax
	subq $8, %rsp			/* rbx: not saved */
	pushq %rcx
	pushq %rdx
	pushq %rbp
	pushq %rsi
	pushq %rdi
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	subq $32, %rsp			/* r12-r15: not saved */
	cld
	movq %rsp, %rdi
	pushq 17*8(%rsp)		/* fake frame, as trap_common's */
	pushq 10*8+8(%rsp)
	movq %rsp, %rbp
	call timer_trap
	addq $16+32, %rsp		/* fake frame, r12-r15 */
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rdi
	popq %rsi
	popq %rbp
	popq %rdx
	popq %rcx
	addq $8, %rsp			/* rbx */
	popq %rax
	addq $16, %rsp			/* vector, error */
	iretq
	.size timer_entry, . - timer_entry
