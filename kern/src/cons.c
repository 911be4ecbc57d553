/*
 * Console input: a byte ring between the UART receive interrupt and one reader.
 *
 * The interrupt handler (any core the IOAPIC routes it to) appends with cons_input_irq;
 * a full ring drops the new byte, so a flood of input costs bytes, never memory or time.
 * The reader (the shell thread) takes bytes with cons_getc and, when the ring is empty,
 * waits in cons_wait_input, the one place that knows how to wait. For now that is halting
 * the core until an interrupt; once threads exist it becomes a rendez the irq wakes.
 *
 * cons_lock (a spinlock, so interrupts are off while it is held) orders the two sides.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "cons.h"

#define CONS_RING	1024	/* bytes buffered; a power of two */
#define CTRL_C		0x03

static struct {
	struct spinlock lock;
	uint8_t buf[CONS_RING];
	uint32_t rp;		/* next byte to read; free-running, index mod CONS_RING */
	uint32_t wp;		/* next byte to write; wp - rp bytes are queued */
	uint64_t dropped;	/* bytes lost to a full ring */
} cons = { .lock = SPINLOCK_INIT("cons") };

static void (*intr_hook)(void);

void cons_set_intr_hook(void (*fn)(void))
{
	__atomic_store_n(&intr_hook, fn, __ATOMIC_RELEASE);
}

/* Interrupt context. The Ctrl-C hook runs after the byte is queued and the lock dropped. */
void cons_input_irq(int c)
{
	void (*hook)(void);

	spin_lock(&cons.lock);
	if (cons.wp - cons.rp < CONS_RING)
		cons.buf[cons.wp++ % CONS_RING] = (uint8_t)c;
	else
		cons.dropped++;
	spin_unlock(&cons.lock);
	hook = __atomic_load_n(&intr_hook, __ATOMIC_ACQUIRE);
	if ((c & 0xff) == CTRL_C && hook)
		hook();
}

int cons_trygetc(void)
{
	int c = -1;

	spin_lock(&cons.lock);
	if (cons.rp != cons.wp)
		c = cons.buf[cons.rp++ % CONS_RING];
	spin_unlock(&cons.lock);
	return c;
}

static bool cons_empty(void)
{
	return READ_ONCE(cons.rp) == READ_ONCE(cons.wp);
}

/*
 * Hazard (lost wakeup): testing "empty" with interrupts on and then halting would sleep
 * through a byte that arrived between the test and the hlt, until some later interrupt.
 * So the test runs with interrupts off, and cpu_halt enables them and halts atomically
 * (sti takes effect after the next instruction, hlt): an interrupt pending at that point
 * ends the halt rather than being taken before it.
 *
 * If the UART interrupt is routed to another core, this core still wakes on its own next
 * interrupt (the timer), so input is seen within one tick. Returns with the caller's
 * interrupt state restored.
 */
void cons_wait_input(void)
{
	unsigned long flags = irq_save();

	if (cons_empty())
		cpu_halt();
	irq_restore(flags);
}

int cons_getc(void)
{
	int c;

	while ((c = cons_trygetc()) < 0)
		cons_wait_input();
	return c;
}

void cons_write(const char *s, size_t n)
{
	printk_write(s, n);
}
