/*
 * kernels.c: the kernels a stream's sessions name, and the profile sink restricted to one of
 * them. Called by opreport.c: kernels_of on every stream of a report first, then, when they
 * name several kernels, a parse per kernel through kernels_sink (each part read against its
 * own ELF, functions matched by name afterwards: model/ctx.c's ctx_merge).
 */
#include <string.h>

#include "ingest/kernels.h"

static int on_session(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct kernels *k = arg;
	const struct opf_session *h = &v->r->session;
	uint32_t len = h->build_id_len <= OPF_MAX_BUILD_ID ? h->build_id_len : OPF_MAX_BUILD_ID;

	for (uint32_t i = 0; i < k->n; i++)
		if (k->len[i] == len && !memcmp(k->id[i], h->build_id, len))
			return 0;
	if (k->n == KERNELS_MAX) {
		snprintf(err, errlen, "its sessions name more than %d kernels", KERNELS_MAX);
		return -1;
	}
	memcpy(k->id[k->n], h->build_id, len);
	k->len[k->n++] = (uint8_t)len;
	return 0;
}

int kernels_of(const char *path, struct kernels *k, char *err, size_t errlen)
{
	static const struct opf_sink sink = { .on = { [OPF_SESSION] = on_session } };
	struct opf_parser ps;

	opf_parser_init(&ps, &sink, k);
	if (opf_parse_file(&ps, path)) {
		snprintf(err, errlen, "%s", ps.err);
		return -1;
	}
	return 0;
}

/* Any record: to profile_sink's handler, unless it belongs to another kernel's session. */
static int one_kernel(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	uint16_t type = v->r->h.type;
	opf_handler h = type < OPF_NTYPES ? profile_sink.on[type] : NULL;

	if (type == OPF_SESSION)
		p->skipping = v->r->session.build_id_len != p->only_len ||
			      memcmp(v->r->session.build_id, p->only_id, p->only_len);
	if (p->skipping)
		return 0;
	return h ? h(arg, v, err, errlen) : 0;
}

static int unknown_one(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;

	return p->skipping ? 0 : profile_sink.unknown(arg, v, err, errlen);
}

static int every_one(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;

	return p->skipping ? 0 : profile_sink.every(arg, v, err, errlen);
}

void kernels_sink(struct opf_sink *out)
{
	*out = profile_sink;
	for (unsigned t = 0; t < OPF_NTYPES; t++)
		if (profile_sink.on[t])
			out->on[t] = one_kernel;
	out->unknown = unknown_one;
	out->every = every_one;
}
