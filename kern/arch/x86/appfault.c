/*
 * An exception in an app instance is the instance's (trap context, from trap()): when the
 * current thread runs an app's main with interrupts on (so outside every interrupt handler
 * and spinlock), a page fault, divide error, invalid opcode, general protection, x87/SIMD
 * error or double fault prints a report with the instance's backtrace and ends the
 * instance with a non-zero status; the trap frame is redirected to the instance's way out
 * (arch_app_leave). Anything else stays fatal (trap_fatal).
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"
#include "app.h"
#include "cpu.h"

static const char *fault_what(struct app_inst *in, struct trapframe *tf, uintptr_t cr2,
			      int *status)
{
	*status = APP_ST_SEGV;
	switch (tf->vector) {
	case T_PF:
		if (app_in_guard(in, cr2))
			return "stack overflow";
		return cr2 < PGSIZE ? "NULL pointer dereference" : "page fault";
	case T_DF:	/* a push into the guard page */
		return app_in_guard(in, tf->rsp - 8) ? "stack overflow" : "double fault";
	case 13:
		return "general protection fault";
	case 0:
		*status = APP_ST_FPE;
		return "divide error";
	case 16:
	case 19:
		*status = APP_ST_FPE;
		return "floating-point exception";
	case 6:
		*status = APP_ST_ILL;
		return "invalid opcode";
	}
	return NULL;
}

bool app_trap(struct trapframe *tf)
{
	struct app_inst *in = app_current();
	uintptr_t cr2 = tf->vector == T_PF ? read_cr2() : 0;
	const char *what;
	int status;

	if (!in || !(tf->rflags & RFLAGS_IF) || nmi_in_handler(core_id()))
		return false;
	if (!(what = fault_what(in, tf, cr2, &status)))
		return false;
	printk("\napp %s on cpu %d: %s", app_inst_name(in), core_id(), what);
	if (tf->vector == T_PF)
		printk(" (%s at %016lx)", tf->error & 2 ? "write" : "read", cr2);
	printk("\n  rip %016lx rsp %016lx rbp %016lx\nbacktrace:\n", tf->rip, tf->rsp, tf->rbp);
	if (tf->vector == T_DF || !strcmp(what, "stack overflow"))
		backtrace_print(tf->rip, tf->rbp);	/* the stack pointer is in the guard */
	else
		backtrace_print_tf(tf);
	printk("app %s: ended with status %d\n", app_inst_name(in), status);
	arch_tf_app_leave(tf, app_fault_end(in, what, status), status);
	return true;
}

void arch_tf_app_leave(struct trapframe *tf, struct app_ctx *ctx, int status)
{
	tf->rip = (uintptr_t)arch_app_leave;
	tf->rdi = (uintptr_t)ctx;
	tf->rsi = (uint64_t)status;
	tf->rsp = ((ctx->rsp - 256) & ~15ul) - 8;	/* below the saved registers: unused */
	tf->rflags = RFLAGS_IF | 0x2;
}
