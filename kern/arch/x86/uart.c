/*
 * COM1, a 16550 UART at 115200 8N1: the console. Output polls the transmitter (any
 * context, even before memory or interrupts exist); input arrives by interrupt (IOAPIC
 * pin of IRQ 4) and is handed to cons_input_irq.
 */
#include "x86.h"
#include "cons.h"
#include "arch_x86.h"

#define COM1	0x3f8
#define THR	0	/* transmit holding (write) */
#define RBR	0	/* receive buffer (read) */
#define IER	1	/* interrupt enable */
#define FCR	2	/* FIFO control */
#define LCR	3	/* line control */
#define MCR	4	/* modem control */
#define LSR	5	/* line status */
#define LSR_DR	0x01	/* data ready */
#define LSR_THRE 0x20	/* transmitter holding register empty */

void uart_init(void)
{
	outb(COM1 + IER, 0);
	outb(COM1 + LCR, 0x80);		/* DLAB: set the divisor */
	outb(COM1 + 0, 1);		/* 115200 / 1 */
	outb(COM1 + 1, 0);
	outb(COM1 + LCR, 0x03);		/* 8N1 */
	/*
	 * FIFOs on, cleared, receive interrupt at 14 bytes or after four character times of
	 * quiet (the FIFO timeout). A trigger of 1 made every byte a round trip: QEMU hands
	 * the UART only as many bytes as the trigger asks for, so a typed line took one
	 * device-model turn per byte, and with every virtual CPU busy under -icount each turn
	 * could cost a whole round-robin slice (a 20-byte line arrived seconds late).
	 */
	outb(COM1 + FCR, 0xc7);
	outb(COM1 + MCR, 0x0b);		/* DTR, RTS, OUT2 (OUT2 gates the IRQ line) */
}

void uart_putc(char c)
{
	for (int i = 0; i < 100000 && !(inb(COM1 + LSR) & LSR_THRE); i++)
		pause();
	outb(COM1 + THR, (uint8_t)c);
}

/* Console output: LF becomes CRLF for terminals. */
void arch_console_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

/* Interrupt context: move every received byte to the console layer. */
void uart_irq(void)
{
	while (inb(COM1 + LSR) & LSR_DR)
		cons_input_irq(inb(COM1 + RBR));
}

/* Called once the IOAPIC routes IRQ 4: ask for receive interrupts. */
void uart_enable_irq(void)
{
	outb(COM1 + IER, 0x01);
	(void)inb(COM1 + RBR);
}
