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
 * The timer vector (T_TIMER, 32) has an entry of its own, timer_entry, below; so has the
 * NMI (T_NMI, 2), nmi_entry, at the end.
 *
 * Every routine here is a typed, sized function (.type/.size): perf and hotspot's parser name
 * an address only by a sized function symbol that covers it, and samples land here
 * (tests/t/kernel-symbols).
 */
#include "nmi_entry.h"

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

.macro VECTOR_NMI
	.align 16
	jmp nmi_entry
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
	.elseif vec == NMI_T_NMI
	VECTOR_NMI
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
 * The lean entries' common part (timer_entry, nmi_trap_entry, nmi_period_entry), once
 * error, vector, rax, an rbx slot, rcx and rdx are pushed: the rest of the frame from rbp
 * down, as trap_common builds it (struct trapframe, the fake frame-pointer link), but rbx
 * and r12-r15 neither saved nor restored: the C handler keeps them as the C ABI does (a
 * context switch inside it saves them in swtch), and nothing on these paths reads their
 * slots (the timer path, the sampler, the crash recorder, the watchdog and a panic's park
 * read rip, rsp, rbp and rflags; a redirect to arch_app_leave writes rip, rsp, rflags, rdi
 * and rsi, all restored from the frame; the registers a fault report prints are the fault's
 * own frame's). Then fn(tf), or with late set fn(tf, edx), the frame taken down, the iretq.
 */
.macro LEAN_FRAME_CALL fn, late=0
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
	.if \late
	movl %edx, %esi			/* late: edx is not yet restored */
	.endif
	pushq 17*8(%rsp)		/* fake frame, as trap_common's */
	pushq 10*8+8(%rsp)
	movq %rsp, %rbp
	call \fn
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
.endm

/*
 * The timer vector, the most frequent interrupt by far (sampling rides on it): the lean
 * frame (LEAN_FRAME_CALL: rbx and r12-r15 not saved, so nothing on the timer path may
 * read their slots) and timer_trap(tf), no dispatch on the vector.
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
	LEAN_FRAME_CALL timer_trap
	.size timer_entry, . - timer_entry

/*
 * The NMI vector, on the core's NMI stack (IST2), NMIs held by the CPU until the iretq.
 * Its first instructions dismiss, with two scratch registers, the NMI that needs nothing
 * but counting: one that begins no period for this core (nmi.c, "Periods": held across a
 * restart, QEMU's pulse at the counter's wrap). Every NMI whose handling could be more
 * than that goes the full way (nmi_trap_entry: nmi_trap, as from trap_common before), so
 * what the test below checks must be every reason nmi_trap would do anything else:
 *  - the record above the CPU's frame (struct nmi_top) has the magic: else a stray;
 *  - no panic under way (nmi_quiet; set before a panic's stop_by and before its stop NMI
 *    is sent, so a stop NMI coalesced with this one, or held until its iretq, is seen by
 *    this test or by the next NMI's);
 *  - not nested (depth 0: nmi_trap panics on a nested NMI, so that one goes there);
 *  - not the idle loop's hlt (nmi_trap moves the saved rip past it);
 *  - a source running (nmi_fanout), read after in_fn is set with a full fence: the same
 *    Dekker as act's against source_stop, so next_period is the running source's;
 *  - the HPET counter not yet at the core's next_period: (int32_t)(counter - next_period)
 *    < 0, the 32-bit arithmetic of new_period, which follows the comparator's wrap.
 * Then it counts what nmi_trap would: the NMI, interrupts off if so, and an extra, and
 * clears in_fn. The scratch registers are kept in the record's two spare words (the record
 * is the core's alone, and no NMI nests), written only once the magic matched.
 *
 * A new period (the counter at or past next_period: edx holds how far, rax the core's
 * struct nmi_cpu, in_fn still set) goes on to nmi_period_entry below, which skips the
 * tests already made. Nothing in the dismissal can fault (static data, the mapped HPET).
 */
	.globl nmi_entry
	.type nmi_entry, @function
nmi_entry:
	cmpl $NMI_TOP_MAGIC, 40(%rsp)
	jne nmi_trap_entry
	cmpb $0, nmi_quiet(%rip)
	jne nmi_trap_entry
	movq %rax, 40+NMI_TOP_SAVE_RAX(%rsp)
	movq %rdx, 40+NMI_TOP_SAVE_RDX(%rsp)
	movq 40+NMI_TOP_CPU(%rsp), %rax
	cmpl $0, NMI_CPU_DEPTH(%rax)
	jne .Lnmi_slow_restore
	movq (%rsp), %rdx		/* interrupted rip */
	cmpq cpu_halt_hlt(%rip), %rdx
	je .Lnmi_slow_restore
	movl $1, NMI_CPU_IN_FN(%rax)
	mfence
	cmpl $NMI_FAN_NONE, nmi_fanout(%rip)
	je .Lnmi_slow_out
	movq hpet(%rip), %rdx
	movl NMI_HPET_MAIN_LO(%rdx), %edx
	subl NMI_CPU_NEXT_PERIOD(%rax), %edx
	jns nmi_period_entry		/* a period begins */
	incq NMI_CPU_EXTRA(%rax)
	incq NMI_CPU_COUNT(%rax)
	testl $NMI_RFLAGS_IF, 16(%rsp)	/* interrupted rflags */
	jnz 1f
	incq NMI_CPU_IRQOFF(%rax)
1:	movl $0, NMI_CPU_IN_FN(%rax)
	movq 40+NMI_TOP_SAVE_RDX(%rsp), %rdx
	movq 40+NMI_TOP_SAVE_RAX(%rsp), %rax
	iretq
.Lnmi_slow_out:
	movl $0, NMI_CPU_IN_FN(%rax)
.Lnmi_slow_restore:
	movq 40+NMI_TOP_SAVE_RDX(%rsp), %rdx
	movq 40+NMI_TOP_SAVE_RAX(%rsp), %rax
	jmp nmi_trap_entry
	.size nmi_entry, . - nmi_entry


/* Every NMI nmi_entry does not finish or take to nmi_period: nmi_trap(tf). */
	.type nmi_trap_entry, @function
nmi_trap_entry:
	pushq $0			/* error */
	pushq $NMI_T_NMI		/* vector */
	pushq %rax
	subq $8, %rsp			/* rbx: not saved */
	pushq %rcx
	pushq %rdx
	LEAN_FRAME_CALL nmi_trap
	.size nmi_trap_entry, . - nmi_trap_entry

/*
 * A new period on this core (from nmi_entry: edx how far the counter is past its
 * next_period, the saved rax and rdx in the record, in_fn set): nmi_period(tf, late).
 */
	.type nmi_period_entry, @function
nmi_period_entry:
	pushq $0			/* error */
	pushq $NMI_T_NMI		/* vector */
	pushq 40+16+NMI_TOP_SAVE_RAX(%rsp)	/* rax (the address uses rsp before the push) */
	subq $8, %rsp			/* rbx: not saved */
	pushq %rcx
	pushq 40+40+NMI_TOP_SAVE_RDX(%rsp)	/* rdx */
	LEAN_FRAME_CALL nmi_period, late=1
	.size nmi_period_entry, . - nmi_period_entry
