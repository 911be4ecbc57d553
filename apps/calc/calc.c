/*
 * calc: an interpreter for a small expression language, run on programs it writes itself.
 *
 *	calc [STATEMENTS [ROUNDS]]	(default 400 statements, 20 rounds)
 *	calc -e 'let x = 2; print x * sqrt(x) + 1'
 *
 * The language: statements separated by ';', each "let NAME = EXPR" or "print EXPR"; an
 * expression has numbers, variables, + - * / % ^ (power), unary minus, parentheses and the
 * functions sqrt, sin, cos, abs, min, max. Numbers are doubles.
 *
 * Each round writes a program (gen_program), parses it into a tree (parse_program: a
 * recursive-descent parser over a tokenizer) and evaluates the tree 20 times
 * (eval_program: a tree walk with variables in an array, each value kept below 1000). It times the three phases with
 * clock_gettime and prints their shares, for comparison with a profile. The result of
 * the last evaluation is printed: every instance and every build computes the same one.
 */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXVARS	64
#define EVALS	20

enum kind { NUM, VAR, NEG, ADD, SUB, MUL, DIV, MOD, POW, CALL };

struct node {
	enum kind kind;
	double num;		/* NUM */
	int var;		/* VAR; CALL: which function */
	struct node *a, *b;
};

struct stmt {
	bool print;
	int var;
	struct node *e;
};

struct parser {
	const char *p;
	char names[MAXVARS][16];
	int nvars;
	struct node *pool;	/* nodes come from one array, freed at once */
	int nnodes, cap;
	jmp_buf fail;
	const char *why;
};

static const char *const funcs[] = { "sqrt", "sin", "cos", "abs", "min", "max" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(struct parser *ps, const char *why)
{
	ps->why = why;
	longjmp(ps->fail, 1);
}

static struct node *node(struct parser *ps, enum kind k, struct node *a, struct node *b)
{
	struct node *n;

	if (ps->nnodes == ps->cap)
		fail(ps, "program too large");
	n = &ps->pool[ps->nnodes++];
	*n = (struct node){ .kind = k, .a = a, .b = b };
	return n;
}

static void skip(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static bool eat(struct parser *ps, char c)
{
	skip(ps);
	if (*ps->p != c)
		return false;
	ps->p++;
	return true;
}

/* a name: index of a variable (made on first use) or, with want_func, of a function */
static int name(struct parser *ps, bool want_func)
{
	char id[16];
	int n = 0;

	skip(ps);
	while ((isalnum((unsigned char)*ps->p) || *ps->p == '_') && n < 15)
		id[n++] = *ps->p++;
	id[n] = 0;
	if (!n)
		fail(ps, "name expected");
	if (want_func) {
		for (int i = 0; i < (int)(sizeof(funcs) / sizeof(funcs[0])); i++)
			if (!strcmp(id, funcs[i]))
				return i;
		return -1;
	}
	for (int i = 0; i < ps->nvars; i++)
		if (!strcmp(id, ps->names[i]))
			return i;
	if (ps->nvars == MAXVARS)
		fail(ps, "too many variables");
	strcpy(ps->names[ps->nvars], id);
	return ps->nvars++;
}

static struct node *parse_expr(struct parser *ps);

static struct node *parse_call(struct parser *ps, int f)
{
	struct node *n = node(ps, CALL, parse_expr(ps), NULL);

	n->var = f;
	if (f >= 4) {		/* min, max: two arguments */
		if (!eat(ps, ','))
			fail(ps, "',' expected");
		n->b = parse_expr(ps);
	}
	if (!eat(ps, ')'))
		fail(ps, "')' expected");
	return n;
}

static struct node *parse_atom(struct parser *ps)
{
	const char *save;
	struct node *n;
	int f;

	skip(ps);
	if (eat(ps, '(')) {
		n = parse_expr(ps);
		if (!eat(ps, ')'))
			fail(ps, "')' expected");
		return n;
	}
	if (eat(ps, '-'))
		return node(ps, NEG, parse_atom(ps), NULL);
	if (isdigit((unsigned char)*ps->p) || *ps->p == '.') {
		char *end;

		n = node(ps, NUM, NULL, NULL);
		n->num = strtod(ps->p, &end);
		ps->p = end;
		return n;
	}
	save = ps->p;
	if ((f = name(ps, true)) >= 0 && eat(ps, '('))
		return parse_call(ps, f);
	ps->p = save;
	n = node(ps, VAR, NULL, NULL);
	n->var = name(ps, false);
	return n;
}

static struct node *parse_power(struct parser *ps)
{
	struct node *n = parse_atom(ps);

	return eat(ps, '^') ? node(ps, POW, n, parse_power(ps)) : n;
}

static struct node *parse_term(struct parser *ps)
{
	struct node *n = parse_power(ps);

	for (;;) {
		if (eat(ps, '*'))
			n = node(ps, MUL, n, parse_power(ps));
		else if (eat(ps, '/'))
			n = node(ps, DIV, n, parse_power(ps));
		else if (eat(ps, '%'))
			n = node(ps, MOD, n, parse_power(ps));
		else
			return n;
	}
}

static struct node *parse_expr(struct parser *ps)
{
	struct node *n = parse_term(ps);

	for (;;) {
		if (eat(ps, '+'))
			n = node(ps, ADD, n, parse_term(ps));
		else if (eat(ps, '-'))
			n = node(ps, SUB, n, parse_term(ps));
		else
			return n;
	}
}

/* Statements into st (at most max); their count, or -1 with ps->why set. */
__attribute__((noinline)) int parse_program(struct parser *ps, const char *src,
					   struct stmt *st, int max)
{
	volatile int n = 0;	/* kept across longjmp */

	ps->p = src;
	ps->nnodes = 0;
	if (setjmp(ps->fail))
		return -1;
	for (skip(ps); *ps->p; skip(ps)) {
		if (n == max)
			fail(ps, "too many statements");
		st[n].print = !strncmp(ps->p, "print", 5) && !isalnum((unsigned char)ps->p[5]);
		if (st[n].print)
			ps->p += 5;
		else if (!strncmp(ps->p, "let", 3) && isspace((unsigned char)ps->p[3])) {
			ps->p += 3;
			st[n].var = name(ps, false);
			if (!eat(ps, '='))
				fail(ps, "'=' expected");
		} else
			fail(ps, "'let' or 'print' expected");
		st[n++].e = parse_expr(ps);
		if (!eat(ps, ';') && (skip(ps), *ps->p))
			fail(ps, "';' expected");
	}
	return n;
}

static double call(int f, double x, double y)
{
	switch (f) {
	case 0: return sqrt(fabs(x));
	case 1: return sin(x);
	case 2: return cos(x);
	case 3: return fabs(x);
	case 4: return x < y ? x : y;
	}
	return x > y ? x : y;
}

static double eval(const struct node *n, const double *vars)
{
	switch (n->kind) {
	case NUM: return n->num;
	case VAR: return vars[n->var];
	case NEG: return -eval(n->a, vars);
	case ADD: return eval(n->a, vars) + eval(n->b, vars);
	case SUB: return eval(n->a, vars) - eval(n->b, vars);
	case MUL: return eval(n->a, vars) * eval(n->b, vars);
	case DIV: return eval(n->a, vars) / eval(n->b, vars);
	case MOD: return fmod(eval(n->a, vars), eval(n->b, vars));
	case POW: return pow(fabs(eval(n->a, vars)), eval(n->b, vars));
	case CALL: return call(n->var, eval(n->a, vars), n->b ? eval(n->b, vars) : 0);
	}
	return 0;
}

/* Runs the statements; prints what print says when loud. Returns the sum of all values. */
__attribute__((noinline)) double eval_program(const struct stmt *st, int n, bool loud)
{
	double vars[MAXVARS] = { 0 }, sum = 0;

	for (int i = 0; i < n; i++) {
		double v = eval(st[i].e, vars);

		if (st[i].print && loud)
			printf("%.10g\n", v);
		else if (!st[i].print)
			vars[st[i].var] = v;
		sum += v;
	}
	return sum;
}

/* A program of n statements over 8 variables, the same for the same seed. */
__attribute__((noinline)) size_t gen_program(char *buf, size_t cap, int n, uint32_t seed)
{
	static const char *const ops[] = { " + ", " - ", " * ", " * 0.5 + " };
	size_t len = 0;

	for (int i = 0; i < n && len + 120 < cap; i++) {
		seed = seed * 1103515245u + 12345u;
		len += (size_t)snprintf(buf + len, cap - len,
			"let v%u = ((v%u%s%u.%02u)%sv%u + sqrt(v%u * v%u + %u) - max(v%u, %u.5) / 7) %% 1000; ",
			i % 8, seed >> 8 & 7, ops[seed >> 11 & 3], seed >> 13 & 15, seed >> 17 & 99,
			ops[seed >> 24 & 1], seed >> 25 & 7, seed >> 28 & 7, i % 8, seed >> 3 & 31,
			seed >> 20 & 7, seed & 7);
	}
	return len;
}

struct run {
	struct parser ps;
	struct stmt *st;
	char *src;
	size_t cap;
};

static int run_source(struct run *r, const char *src, bool loud, double *sum)
{
	int n = parse_program(&r->ps, src, r->st, 4096);

	if (n < 0) {
		fprintf(stderr, "calc: %s near '%.20s'\n", r->ps.why, r->ps.p);
		return -1;
	}
	*sum = eval_program(r->st, n, loud);
	return n;
}

/* ROUNDS rounds of gen, parse and EVALS evaluations, each phase timed. */
static int bench(struct run *r, int stmts, int rounds)
{
	uint64_t ns[3] = { 0 }, t0, t1, t2, total;
	double sum = 0;
	int n = 0;

	for (int k = 0; k < rounds; k++) {
		t0 = now_ns();
		gen_program(r->src, r->cap, stmts, 777u + (uint32_t)k);
		t1 = now_ns();
		if ((n = parse_program(&r->ps, r->src, r->st, 4096)) < 0)
			return fprintf(stderr, "calc: generated program: %s\n", r->ps.why), 1;
		t2 = now_ns();
		for (int e = 0; e < EVALS; e++)
			sum += eval_program(r->st, n, false);
		ns[0] += t1 - t0, ns[1] += t2 - t1, ns[2] += now_ns() - t2;
	}
	total = ns[0] + ns[1] + ns[2];
	printf("calc: %d rounds of %d statements, result %.6e\n", rounds, n, sum);
	printf("calc: share gen_program %.1f%%\ncalc: share parse_program %.1f%%\n"
	       "calc: share eval_program %.1f%%\n", 100.0 * (double)ns[0] / (double)total,
	       100.0 * (double)ns[1] / (double)total, 100.0 * (double)ns[2] / (double)total);
	return 0;
}

int main(int argc, char **argv)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	if (!r || !(r->st = malloc(4096 * sizeof(*r->st))) ||
	    !(r->ps.pool = malloc(65536 * sizeof(struct node))) || !(r->src = malloc(1 << 20)))
		return fprintf(stderr, "calc: out of memory\n"), 2;
	r->ps.cap = 65536;
	r->cap = 1 << 20;
	if (argc > 2 && !strcmp(argv[1], "-e")) {
		double sum;

		rc = run_source(r, argv[2], true, &sum) < 0;
	} else {
		rc = bench(r, argc > 1 ? atoi(argv[1]) : 400, argc > 2 ? atoi(argv[2]) : 20);
	}
	free(r->src), free(r->ps.pool), free(r->st), free(r);
	return rc;
}
