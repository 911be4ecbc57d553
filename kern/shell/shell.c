/*
 * The kernel shell: read a line, parse it, run it.
 *
 *	shell_readline	console bytes -> one edited line (echo, erase, kill, cancel)
 *	shell_parse	line -> struct shell_job: argv, redirection, background
 *	shell_exec_job	job -> the command's function, then report its error
 *
 * Commands are rows of the shell_cmds table (see shell.h), contributed by any file.
 * The line editor never trusts its input: every byte value is handled (control bytes are
 * ignored, terminal escape sequences are swallowed whole, bytes >= 0x80 are kept: UTF-8
 * passes through, and backspace erases a whole character). A line is run whole or not at
 * all: one longer than the buffer (SHELL_LINE_MAX), or one the console lost bytes of
 * (typed faster than read), is refused with a message when it ends.
 *
 * Foreground commands run in the shell's own thread, so `cd` changes the shell's
 * directory and Ctrl-C (the console's interrupt hook) interrupts exactly the command:
 * its interruptible sleeps return -EINTR. "> FILE" points descriptor 1 at the file for
 * the command's duration; shell_write sends output to descriptor 1 when it is open and to
 * the console otherwise. A trailing "&" runs the command in a new thread (which copies
 * the shell's descriptors and directory) and returns the prompt at once.
 */
#include "kernel.h"
#include "error.h"
#include "kmalloc.h"
#include "cons.h"
#include "shell.h"
#include "arch.h"
#include "dev.h"
#include "thread.h"

#define CTRL_C		0x03
#define CTRL_U		0x15
#define BS		0x08
#define ESC		0x1b
#define DEL		0x7f
#define PROMPT		"kern> "

/* ---- output ---- */

static void console_puts(const char *s)
{
	cons_write(s, strlen(s));
}

/* Command output: descriptor 1 when a redirection opened it, else the console. */
void shell_write(const char *s, size_t n)
{
	long r = kwrite(1, s, n);

	/* other errors stay on the descriptor (kwerror) for run_job to report */
	if (r == -EBADF)
		cons_write(s, n);
}

/* Formats on the stack; a longer message is formatted again into a heap buffer. */
static int shell_vformat(void (*put)(const char *, size_t), const char *fmt, va_list ap)
{
	char small[256];
	char *big;
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < (int)sizeof(small) || !(big = kmalloc((size_t)n + 1))) {
		put(small, MIN((size_t)n, sizeof(small) - 1));
	} else {
		vsnprintf(big, (size_t)n + 1, fmt, ap2);
		put(big, (size_t)n);
		kfree(big);
	}
	va_end(ap2);
	return n;
}

int shell_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = shell_vformat(shell_write, fmt, ap);
	va_end(ap);
	return n;
}

int shell_eprintf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = shell_vformat(cons_write, fmt, ap);
	va_end(ap);
	return n;
}

/* ---- line editor ---- */

enum esc_state {
	ESC_NONE,	/* ordinary input */
	ESC_START,	/* after ESC */
	ESC_SEQ,	/* after ESC [ or ESC O: parameters until a final byte 0x40..0x7e */
};

static bool ended_by_cr;	/* the last line ended with CR: a following LF is its tail */

/* Swallows escape sequences (arrow keys and the like); returns true if c was eaten. */
static bool esc_eat(enum esc_state *st, int c)
{
	switch (*st) {
	case ESC_START:
		if (c == ESC)
			return true;	/* ESC ESC: still the start of one sequence */
		*st = c == '[' || c == 'O' ? ESC_SEQ : ESC_NONE;
		return *st == ESC_SEQ;
	case ESC_SEQ:
		if (c < 0x20) {		/* a control byte aborts the sequence and counts */
			*st = ESC_NONE;
			return false;
		}
		if (c >= 0x40 && c <= 0x7e)
			*st = ESC_NONE;
		return true;
	default:
		if (c != ESC)
			return false;
		*st = ESC_START;
		return true;
	}
}

static void erase_chars(size_t n)
{
	while (n--)
		console_puts("\b \b");
}

/* UTF-8: a byte 10xxxxxx continues a character; the terminal shows the whole as one column. */
static bool utf8_cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* Erase the line's last character: its bytes, one column on the screen. */
static void erase_last(const char *buf, size_t *len)
{
	if (!*len)
		return;
	while (--*len && utf8_cont(buf[*len]))
		;
	erase_chars(1);
}

/*
 * A byte of the line: append and echo; past the buffer, count it instead (the line is
 * refused when it ends, never cut).
 */
static void line_add(char *buf, size_t cap, size_t *len, size_t *over, int c)
{
	char ch = (char)c;

	if (*len + 1 >= cap) {
		if (!(*over)++)
			console_puts("\a");
		return;
	}
	buf[(*len)++] = ch;
	cons_write(&ch, 1);
}

/* The end of a line: its length, or an error (said) when it is not whole. */
static int line_end(char *buf, size_t cap, size_t len, size_t over, uint64_t lost)
{
	console_puts("\n");
	buf[len] = '\0';
	if (over) {
		shell_eprintf("shell: line of %zu bytes is longer than %zu: not run\n", len + over,
			      cap - 1);
		return -E2BIG;
	}
	if (lost) {
		shell_eprintf("shell: %lu bytes of this line were lost (typed faster than read): "
			      "not run\n", (unsigned long)lost);
		return -EIO;
	}
	return (int)len;
}

/* a whole line, pasted at once, fits in the console's ring even if none of it was read */
_Static_assert(CONS_INPUT_RING >= 2 * SHELL_LINE_MAX, "the console ring holds a pasted line");

int shell_readline(char *buf, size_t cap)
{
	static uint64_t lost_seen;	/* cons_lost() when the previous line ended */
	enum esc_state esc = ESC_NONE;
	size_t len = 0, over = 0;

	for (;;) {
		int c = cons_getc() & 0xff;

		if (ended_by_cr && c == '\n') {
			ended_by_cr = false;
			continue;
		}
		ended_by_cr = false;
		if (esc_eat(&esc, c))
			continue;
		switch (c) {
		case '\r':
			ended_by_cr = true;
			/* fall through */
		case '\n': {
			uint64_t lost = cons_lost() - lost_seen;

			lost_seen += lost;
			return line_end(buf, cap, len, over, lost);
		}
		case DEL:
		case BS:
			if (!over)
				erase_last(buf, &len);
			break;
		case CTRL_U:
			erase_chars(len);
			len = over = 0;
			break;
		case CTRL_C:
			console_puts("^C\n");
			buf[0] = '\0';
			lost_seen = cons_lost();
			return -EINTR;
		default:
			/* printable ASCII and every byte >= 0x80 (UTF-8) are the line's */
			if (c >= 0x20 && c != DEL)
				line_add(buf, cap, &len, &over, c);
			break;	/* other control bytes: ignored */
		}
	}
}

/* ---- parsing ---- */

enum token { T_END, T_WORD, T_GT, T_GTGT, T_AMP, T_ERR };

/*
 * Words are copied down in place as quotes are removed: w never passes r except by the
 * one byte of a word's NUL that overwrote an operator directly after it ("a>b"); that
 * operator byte is kept in pend and read from there instead.
 */
struct lexer {
	char *r;	/* next byte to read */
	char *w;	/* where the next word's bytes go */
	char pend;	/* operator byte at r that a NUL overwrote, or 0 */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_op(char c)
{
	return c == '>' || c == '&';
}

static char lx_peek(const struct lexer *lx)
{
	return lx->pend ? lx->pend : *lx->r;
}

static enum token lex_op(struct lexer *lx)
{
	char c = lx_peek(lx);

	lx->pend = 0;
	lx->r++;
	if (c == '&')
		return T_AMP;
	if (*lx->r == '>') {
		lx->r++;
		return T_GTGT;
	}
	return T_GT;
}

static enum token lex_word(struct lexer *lx, char **word, const char **why)
{
	bool quoted = false;
	char c;

	*word = lx->w;
	for (;; lx->r++) {
		c = *lx->r;
		if (!c && quoted) {
			*why = "unterminated quote";
			return T_ERR;
		}
		if (!c || (!quoted && (is_blank(c) || is_op(c))))
			break;
		if (c == '"')
			quoted = !quoted;
		else
			*lx->w++ = c;
	}
	if (is_blank(c))
		lx->r++;	/* consumed: the NUL may overwrite it */
	else if (is_op(c) && lx->w == lx->r)
		lx->pend = c;	/* the NUL overwrites it: keep it for lex_op */
	*lx->w++ = '\0';
	return T_WORD;
}

static enum token lex(struct lexer *lx, char **word, const char **why)
{
	if (!lx->pend)
		while (is_blank(*lx->r))
			lx->r++;
	if (!lx_peek(lx))
		return T_END;
	if (is_op(lx_peek(lx)))
		return lex_op(lx);
	return lex_word(lx, word, why);
}

static int parse_redirect(struct lexer *lx, struct shell_job *job, bool append, const char **why)
{
	char *file;

	if (job->redirect) {
		*why = "more than one redirection";
		return -EINVAL;
	}
	if (lex(lx, &file, why) != T_WORD) {
		*why = *why ? *why : "redirection needs a file name";
		return -EINVAL;
	}
	job->redirect = file;
	job->append = append;
	return 0;
}

int shell_parse(char *line, struct shell_job *job, const char **why)
{
	struct lexer lx = { .r = line, .w = line };
	enum token t;
	char *word;

	*job = (struct shell_job){ 0 };
	*why = NULL;
	while ((t = lex(&lx, &word, why)) != T_END) {
		if (t == T_ERR)
			return -EINVAL;
		if (job->background) {
			*why = "& must come last";
			return -EINVAL;
		}
		if (t == T_AMP) {
			job->background = true;
		} else if (t == T_GT || t == T_GTGT) {
			if (parse_redirect(&lx, job, t == T_GTGT, why) < 0)
				return -EINVAL;
		} else if (job->argc == SHELL_MAXARGS) {
			*why = "too many arguments (at most 32)";
			return -EINVAL;
		} else {
			job->argv[job->argc++] = word;
		}
	}
	job->argv[job->argc] = NULL;
	if (!job->argc && (job->redirect || job->background)) {
		*why = "missing command";
		return -EINVAL;
	}
	return 0;
}

/* ---- running ---- */

const struct cmd *shell_lookup(const char *name)
{
	for (const struct cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void shell_report(const struct cmd *c, int r)
{
	if (r == -EINVAL)
		shell_eprintf("usage: %s\n", c->usage);
	else if (r < 0)
		shell_eprintf("%s: %s\n", c->name, strerror(r));
}

/* Point descriptor 1 at the job's redirection; returns 0 or -err (reported). */
static int redirect_begin(struct shell_job *job)
{
	int fd, r;

	if (!job->redirect)
		return 0;
	fd = kcreate(job->redirect, OWRITE | (job->append ? OAPPEND : OTRUNC), 0644);
	if (fd < 0) {
		shell_eprintf("shell: %s: %s\n", job->redirect, strerror(fd));
		return fd;
	}
	r = kdup2(fd, 1);
	kclose(fd);
	return r < 0 ? r : 0;
}

static void redirect_end(struct shell_job *job)
{
	if (job->redirect)
		kclose(1);
}

static int run_job(const struct cmd *c, struct shell_job *job)
{
	int r = redirect_begin(job), werr;

	if (r < 0)
		return r;
	r = c->fn(job->argc, job->argv);
	werr = job->redirect ? kwerror(1) : 0;
	redirect_end(job);
	shell_report(c, r);
	if (werr) {
		shell_eprintf("%s: %s: %s\n", c->name, job->redirect, strerror(werr));
		r = r ? r : werr;
	}
	return r;
}

/* A background job owns a copy of its line and parse (the shell's buffer is reused). */
struct bg_job {
	char line[SHELL_LINE_MAX];
	struct shell_job job;
	const struct cmd *c;
};

static void bg_thread(void *arg)
{
	struct bg_job *bg = arg;

	run_job(bg->c, &bg->job);
	kfree(bg);
}

static int start_background(const struct cmd *c, struct shell_job *job)
{
	struct bg_job *bg = kzmalloc(sizeof(*bg));
	struct thread *t;
	size_t o = 0;

	if (!bg)
		return -ENOMEM;
	bg->c = c;
	bg->job = *job;
	/* copy the words and the redirect target into the job's own buffer */
	for (int i = 0; i < job->argc; i++) {
		bg->job.argv[i] = bg->line + o;
		o += strlcpy(bg->line + o, job->argv[i], sizeof(bg->line) - o) + 1;
	}
	if (job->redirect) {
		bg->job.redirect = bg->line + o;
		strlcpy(bg->line + o, job->redirect, sizeof(bg->line) - o);
	}
	t = kthread_create(c->name, core_id(), bg_thread, bg);
	if (!t) {
		kfree(bg);
		return -ENOMEM;
	}
	kthread_detach(t);
	shell_eprintf("[%d] %s\n", thread_tid(t), c->name);
	return 0;
}

static int shell_exec_job(struct shell_job *job)
{
	const struct cmd *c = shell_lookup(job->argv[0]);
	int r;

	if (!c) {
		shell_eprintf("unknown command: %s (try help)\n", job->argv[0]);
		return -ENOENT;
	}
	if (job->background)
		return start_background(c, job);
	thread_interrupted();		/* a Ctrl-C typed at the prompt is not for this command */
	r = run_job(c, job);
	if (thread_interrupted())
		cons_flush_through_ctrl_c();	/* the ^C, and what came before it, was the command's */
	return r;
}

int shell_exec_line(char *line)
{
	struct shell_job job;
	const char *why;

	if (shell_parse(line, &job, &why) < 0) {
		shell_eprintf("shell: %s\n", why);
		return -EINVAL;
	}
	if (!job.argc)
		return 0;
	return shell_exec_job(&job);
}

static struct thread *shell_thread;
static int last_status;	/* the last line's result: written and read by the shell thread only */

int shell_last_status(void)
{
	return last_status;
}

/* Console interrupt hook (interrupt context): Ctrl-C interrupts the foreground command. */
static void shell_ctrl_c(void)
{
	if (shell_thread)
		thread_interrupt(shell_thread);
}

void shell_run(void)
{
	static char line[SHELL_LINE_MAX];	/* one shell thread; too big for its stack */

	shell_thread = current();
	cons_set_intr_hook(shell_ctrl_c);
	for (;;) {
		console_puts(PROMPT);
		int r = shell_readline(line, sizeof(line));

		if (r >= 0)
			last_status = shell_exec_line(line);
		else if (r != -EINTR)
			last_status = r;	/* refused, and said: `status` says so too */
	}
}
