/*
 * Late initialization, in the shell thread's context (threads, sleeping and allocation
 * all work): device files, name space, drivers, the profiler.
 */
void kernel_late_init(void)
{
}
