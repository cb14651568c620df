/* nodes.c - builds the node descriptor table from Nodes.def. */
#include "graph/attr_rows.h"
#include "graph/graph.h"
#include "graph/typerules.h"
#include "support/util.h"

#include <string.h>

static const struct {
	const char *name, *ops, *res;
	const struct attr_desc *attrs;
	unsigned flags;
	type_rule_fn rule;
} rows[] = {
#define NODE(K, O, R, A, F, T) {#K, O, R, A, F, T},
#include "graph/Nodes.def"
#undef NODE
};

_Static_assert(sizeof(rows) / sizeof(rows[0]) == NK_COUNT, "Nodes.def rows and enum out of step");

static struct node_desc descs[NK_COUNT];
const struct node_desc *node_descs = descs;
static struct strmap kind_map;

/* Splits "A B C..." into an array of names; *variadic set by a trailing "...". */
static const char *const *split_names(const char *s, unsigned *count, bool *variadic)
{
	unsigned n = 0;
	const char *names[16];
	*variadic = false;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		const char *b = s;
		while (*s && *s != ' ')
			s++;
		size_t len = (size_t)(s - b);
		if (len > 3 && memcmp(s - 3, "...", 3) == 0) {
			len -= 3;
			*variadic = true;
		}
		glow_assert(n < GLOW_ARRAY_SIZE(names));
		names[n++] = xstrndup(b, len);
	}
	const char **out = xcalloc(n + 1, sizeof(*out));
	memcpy(out, names, n * sizeof(*out));
	*count = n;
	return out;
}

/* The text spelling of row names: a backend-specific kind's row name
 * BACKEND_Kind is written BACKEND.Kind (Nodes.def's last block). */
static char dotted_names[NK_COUNT][48];

static const char *text_name(unsigned k)
{
	const char *s = rows[k].name, *u = strchr(s, '_');
	if (!u || strlen(s) >= sizeof dotted_names[k])
		return s;
	strcpy(dotted_names[k], s);
	dotted_names[k][u - s] = '.';
	return dotted_names[k];
}

void node_desc_init(void)
{
	if (descs[0].name)
		return;
	strmap_init(&kind_map);
	for (unsigned k = 0; k < NK_COUNT; k++) {
		struct node_desc *d = &descs[k];
		d->name = text_name(k);
		d->op_names = split_names(rows[k].ops, &d->nops, &d->variadic);
		bool v;
		d->res_names = split_names(rows[k].res, &d->nres, &v);
		d->attrs = rows[k].attrs;
		d->nattrs = 0;
		if (d->attrs)
			while (d->attrs[d->nattrs].name)
				d->nattrs++;
		d->flags = rows[k].flags;
		d->rule = rows[k].rule;
		strmap_put(&kind_map, d->name, strlen(d->name), d);
	}
}

const char *node_kind_name(unsigned kind)
{
	node_desc_init();
	return kind < NK_COUNT ? descs[kind].name : "<bad kind>";
}

int node_kind_lookup(const char *s, size_t len)
{
	node_desc_init();
	const struct node_desc *d = strmap_getn(&kind_map, s, len);
	return d ? (int)(d - descs) : -1;
}

int node_attr_index(unsigned kind, const char *name)
{
	const struct node_desc *d = node_desc(kind);
	for (unsigned i = 0; i < d->nattrs; i++)
		if (strcmp(d->attrs[i].name, name) == 0)
			return (int)i;
	return -1;
}
