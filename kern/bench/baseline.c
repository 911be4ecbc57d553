/*
 * The design the profiler replaced, kept only as the benchmarks' baseline (the kernel's
 * opbench and tests/host/oprof_bench.c): every sample gets a block of its own, appended to
 * one global list under one global lock. Any context that may allocate; baseline_drain
 * frees what was recorded (thread context).
 */
#include "abi/oprofile.h"
#include "block.h"
#include "lock.h"
#include "oprofile_bench.h"

static struct spinlock baseline_lock = SPINLOCK_INIT("oprof-baseline");
static struct block *baseline_head, *baseline_tail;

void oprof_baseline_record(int core, uint64_t tsc, uint64_t pc, const uint64_t *frames,
			   unsigned nframes)
{
	uint32_t len = opf_sample_len(nframes);
	struct block *b = block_alloc(len);
	struct opf_sample *s;

	if (!b)
		return;
	s = (struct opf_sample *)b->wp;
	s->h = (struct opf_rec){ .type = OPF_SAMPLE, .len = len };
	s->core = (uint16_t)core;
	s->nframes = (uint16_t)nframes;
	s->tid = 1;
	s->tsc = tsc;
	s->pc = pc;
	memcpy(s->frames, frames, 8 * (size_t)nframes);
	b->wp += len;
	spin_lock(&baseline_lock);
	if (baseline_tail)
		baseline_tail->next = b;
	else
		baseline_head = b;
	baseline_tail = b;
	spin_unlock(&baseline_lock);
}

void oprof_baseline_drain(void)
{
	struct block *b;

	spin_lock(&baseline_lock);
	b = baseline_head;
	baseline_head = baseline_tail = NULL;
	spin_unlock(&baseline_lock);
	block_free_list(b);
}
