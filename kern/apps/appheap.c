/*
 * An app run's heap: libc's malloc and free (app code, the instance's thread) take blocks
 * from the kernel heap through app_malloc/app_free, and each block is linked into the heap
 * of the run that allocated it. Instances of one run share globals, so a block outlives
 * the instance that allocated it; when the run's last instance has ended (returned, exited,
 * faulted or was stopped), the shell's `run` calls app_heap_free, which returns every block
 * still linked, as a process's exit returns its memory. A block freed by another run than
 * its own is unlinked from its own run's heap (the header names it); one kept in an app's
 * globals past its run's end is as dangling as after a process's exit.
 *
 * Locking: each heap's spinlock guards its list; held only for the link or unlink, never
 * around kmalloc/kfree.
 */
#include "app.h"
#include "kmalloc.h"
#include "lock.h"

struct app_blk {
	struct app_blk *next, *prev;
	struct app_heap *heap;
	size_t bytes;			/* asked for; the header is not counted */
};

struct app_heap {
	struct spinlock lock;
	struct app_blk head;		/* circular list of live blocks */
};

_Static_assert(sizeof(struct app_blk) % 16 == 0, "blocks after the header stay 16-aligned");

struct app_heap *app_heap_new(void)
{
	struct app_heap *h = kzmalloc(sizeof(*h));

	if (!h)
		return NULL;
	spinlock_init(&h->lock, "app heap");
	h->head.next = h->head.prev = &h->head;
	return h;
}

void *app_malloc(size_t n)
{
	struct app_inst *in = app_current();
	struct app_heap *h = in ? app_inst_heap(in) : NULL;
	struct app_blk *b;

	if (!h || n > ((size_t)1 << 40) || !(b = kmalloc(sizeof(*b) + n)))
		return NULL;
	b->heap = h;
	b->bytes = n;
	spin_lock(&h->lock);
	b->next = h->head.next;
	b->prev = &h->head;
	h->head.next->prev = b;
	h->head.next = b;
	spin_unlock(&h->lock);
	return b + 1;
}

void app_free(void *p)
{
	struct app_blk *b = (struct app_blk *)p - 1;
	struct app_heap *h;

	if (!p)
		return;
	h = b->heap;
	spin_lock(&h->lock);
	b->prev->next = b->next;
	b->next->prev = b->prev;
	spin_unlock(&h->lock);
	kfree(b);
}

/* Shell (thread context), after every instance of the run has ended: frees what is left. */
void app_heap_free(struct app_heap *h, size_t *blocks, size_t *bytes)
{
	*blocks = *bytes = 0;
	if (!h)
		return;
	while (h->head.next != &h->head) {
		struct app_blk *b = h->head.next;

		h->head.next = b->next;
		++*blocks;
		*bytes += b->bytes;
		kfree(b);
	}
	kfree(h);
}
