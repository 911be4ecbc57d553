/*
 * The console: bytes in from the UART's receive interrupt, bytes out to the UART.
 *
 * Input is a ring buffer filled in interrupt context (cons_input_irq) and drained by one
 * reader (cons_getc, thread context: the shell). Output goes through the printk lock so
 * that a line written here never interleaves with a printk from another core.
 */
#ifndef CONS_H
#define CONS_H

#include "kernel.h"

/* Provided by kern/arch: write bytes to the serial console, LF as CRLF. Any context. */
void arch_console_write(const char *s, size_t n);

/*
 * Input bytes the ring holds (a power of two): room for a pasted line of the shell's
 * longest twice over while the shell, echoing every byte, is slower than the UART.
 */
#define CONS_INPUT_RING	16384
/* Interrupt context: one received byte. Queued (dropped, and counted, when the ring is full). */
void cons_input_irq(int c);
/* Any context: input bytes dropped since boot (a reader compares two readings). */
uint64_t cons_lost(void);
/* Thread context: next input byte (0..255), waiting until there is one. */
int cons_getc(void);
/* As cons_getc, but -EINTR when the calling thread is interrupted (Ctrl-C). */
int cons_getc_intr(void);
/*
 * Thread context, after Ctrl-C interrupted a command: drop the queued input up to and
 * including the last Ctrl-C (what was typed for the command, and the ^C itself). What was
 * typed after the ^C is the next line's and stays queued, as a terminal keeps type-ahead.
 */
void cons_flush_through_ctrl_c(void);
/* Boot: input wakeups may use a rendez from now on. */
void cons_init(void);
/* Any context: next input byte, or -1 when none is queued. */
int cons_trygetc(void);
/* Thread context: return once input may be queued (may return early; callers loop). */
void cons_wait_input(void);
/*
 * fn is called in interrupt context when Ctrl-C (0x03) arrives, after the byte is queued
 * (the line editor still sees it). It must not sleep or take a lock held around
 * cons_input_irq's caller. NULL removes the hook.
 */
void cons_set_intr_hook(void (*fn)(void));
/* Any context: write bytes to the console, not interleaved with printk output. */
void cons_write(const char *s, size_t n);

/* printf.c: raw bytes under the printk lock (what cons_write uses). */
void printk_write(const char *s, size_t n);
/*
 * printf.c: for panic. From now on printk ignores its lock, so a core that stopped while
 * holding it (or a fault inside printk) cannot silence the panic message. Never undone.
 */
void printk_panic_unlock(void);

#endif
