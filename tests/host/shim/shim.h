/*
 * Host shim: lets portable kernel files (blocks, queues, the profiler's buffers) compile
 * and run as a host program, with pthreads standing in for cores. Kernel sources are
 * compiled with -DHOST_SHIM -I kern/include and linked with shim.c; tests include this
 * header to steer the shim.
 */
#ifndef HOST_SHIM_H
#define HOST_SHIM_H

/* Pretend the calling pthread is this core (core_id() returns it). Default 0. */
void shim_set_core(int core);
/* What ncpus() returns. Default 1. */
void shim_set_ncpus(int n);
/* Live kmalloc allocations (and pages_alloc runs), for leak checks. */
long shim_live_allocs(void);
/*
 * What arch_mem_foreach reports (default 8 MiB in 2 regions): bytes of host memory below
 * 2 GiB, split into nregions ranges. Call before pages_init.
 */
void shim_set_mem(size_t bytes, int nregions);
/* What the stand-in pages_free_count() reports, in bytes. Default 1 GiB. */
void shim_set_free_memory(size_t bytes);
/*
 * Called at every NMI point of the profiler's hot path (kern/src/oprofile/internal.h), on
 * the thread that is there: a test lands its "NMI" there, and fn runs as one (arch_in_nmi
 * true, irq_enabled false). NULL: nothing.
 */
void shim_set_nmi_hook(void (*fn)(void));
/*
 * Model interrupts (call once, before any thread uses them): a core runs one thing with
 * interrupts off at a time -- irq_save on core N waits while another thread has them off
 * there -- and shim_on_core(N, fn, arg) runs fn as a kernel thread on N would, once nothing
 * there has interrupts off (fn runs with them off, as core N). Default: not modelled.
 */
void shim_model_irqs(int on);
void shim_on_core(int core, void (*fn)(void *), void *arg);

#endif
