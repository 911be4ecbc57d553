/*
 * Console input: a byte ring between the UART receive interrupt and one reader.
 *
 * The interrupt handler (any core the IOAPIC routes it to) appends with cons_input_irq;
 * a full ring drops the new byte, so a flood of input costs bytes, never memory or time.
 * The reader (the shell thread) takes bytes with cons_getc and, when the ring is empty,
 * sleeps on a rendez that the interrupt handler wakes (before the scheduler runs, it halts
 * instead; see cons_wait_input).
 *
 * cons_lock (a spinlock, so interrupts are off while it is held) orders the two sides.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "cons.h"
#include "error.h"
#include "rendez.h"
#include "thread.h"

#define CONS_RING	CONS_INPUT_RING
#define CTRL_C		0x03

static struct {
	struct spinlock lock;
	uint8_t buf[CONS_RING];
	uint32_t rp;		/* next byte to read; free-running, index mod CONS_RING */
	uint32_t wp;		/* next byte to write; wp - rp bytes are queued */
	uint64_t dropped;	/* bytes lost to a full ring */
	uint32_t after_ctrl_c;	/* wp just after the last Ctrl-C queued (free-running) */
	struct rendez r;	/* the reader sleeps here while the ring is empty */
	bool r_ready;		/* r initialized (cons_init) */
} cons = { .lock = SPINLOCK_INIT("cons") };

/* Boot, before the UART interrupt is enabled. */
void cons_init(void)
{
	rendez_init(&cons.r);
	WRITE_ONCE(cons.r_ready, true);
}

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
	if (cons.wp - cons.rp < CONS_RING) {
		cons.buf[cons.wp++ % CONS_RING] = (uint8_t)c;
		if ((c & 0xff) == CTRL_C)
			cons.after_ctrl_c = cons.wp;
	} else {
		cons.dropped++;
	}
	spin_unlock(&cons.lock);
	if (READ_ONCE(cons.r_ready))
		rendez_wakeup(&cons.r);
	hook = __atomic_load_n(&intr_hook, __ATOMIC_ACQUIRE);
	if ((c & 0xff) == CTRL_C && hook)
		hook();
}

uint64_t cons_lost(void)
{
	return READ_ONCE(cons.dropped);
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
static bool cons_nonempty(void *arg)
{
	(void)arg;
	return !cons_empty();
}

void cons_wait_input(void)
{
	unsigned long flags;

	if (current()) {
		rendez_sleep(&cons.r, cons_nonempty, NULL);
		return;
	}
	flags = irq_save();
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

int cons_getc_intr(void)
{
	int c;

	while ((c = cons_trygetc()) < 0)
		if (rendez_sleep_intr(&cons.r, cons_nonempty, NULL) == -EINTR)
			return -EINTR;
	return c;
}

void cons_write(const char *s, size_t n)
{
	printk_write(s, n);
}

/*
 * Thread context: drop the queued input up to and including the last Ctrl-C. Bytes that
 * arrived after it stay queued. A Ctrl-C already read (or none at all) drops nothing: the
 * mark then lies outside [rp, wp], which the unsigned distances below tell apart.
 */
void cons_flush_through_ctrl_c(void)
{
	spin_lock(&cons.lock);
	if (cons.after_ctrl_c - cons.rp <= cons.wp - cons.rp)
		cons.rp = cons.after_ctrl_c;
	spin_unlock(&cons.lock);
}
