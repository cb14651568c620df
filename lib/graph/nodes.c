/* nodes.c - builds the node descriptor table from Nodes.def. */
#include "graph/attr_rows.h"
#include "graph/graph.h"
#include "graph/region.h"
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

/* Splits "A B C..." into an array of names; *variadic set by a trailing
 * "..." (one or more) or "*" (zero or more: *variadic0 set too). */
static const char *const *split_names(const char *s, unsigned *count, bool *variadic, bool *variadic0)
{
	unsigned n = 0;
	const char *names[16];
	*variadic = *variadic0 = false;
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
		} else if (len > 1 && s[-1] == '*') {
			len--;
			*variadic = *variadic0 = true;
		}
		glow_assert(n < GLOW_ARRAY_SIZE(names));
		names[n++] = xstrndup(b, len);
	}
	const char **out = xcalloc(n + 1, sizeof(*out));
	memcpy(out, names, n * sizeof(*out));
	*count = n;
	return out;
}

/* The kinds that own regions and the text names of their regions, in
 * order: the one table the parser, printer and verifier read. */
static const struct {
	unsigned kind;
	const char *names[2];
} region_rows[] = {
	{NK_If, {"then", "else"}},
	{NK_Loop, {"body", NULL}},
	{NK_Fn, {"body", NULL}},
};

unsigned region_count_of_kind(unsigned kind)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(region_rows); i++)
		if (region_rows[i].kind == kind)
			return region_rows[i].names[1] ? 2u : 1u;
	return 0;
}

const char *region_name(unsigned kind, unsigned i)
{
	for (size_t r = 0; r < GLOW_ARRAY_SIZE(region_rows); r++)
		if (region_rows[r].kind == kind)
			return i < 2 ? region_rows[r].names[i] : NULL;
	return NULL;
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
		d->op_names = split_names(rows[k].ops, &d->nops, &d->variadic, &d->variadic0);
		bool v0;
		d->res_names = split_names(rows[k].res, &d->nres, &d->res_variadic, &v0);
		glow_assert(!v0);
		d->nregions = region_count_of_kind(k);
		d->attrs = rows[k].attrs;
		d->nattrs = attr_rows_count(d->attrs);
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
	return attr_rows_index(d->attrs, d->nattrs, name, strlen(name));
}

const char *attr_kind_desc(enum attr_kind k)
{
	switch (k) {
	case AK_INT: return "an integer";
	case AK_FLOAT: return "a number";
	case AK_BOOL: return "true or false";
	case AK_INTS: return "a list of integers";
	case AK_FLOATS: return "a list of numbers";
	case AK_ENUM: return "an enumerator";
	case AK_STRING: return "a string";
	}
	return "?";
}

unsigned attr_rows_count(const struct attr_desc *ar)
{
	unsigned n = 0;
	if (ar)
		while (ar[n].name)
			n++;
	return n;
}

int attr_rows_index(const struct attr_desc *ar, unsigned n, const char *name, size_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (ar[i].name[0] == name[0] && strncmp(ar[i].name, name, len) == 0 && ar[i].name[len] == 0)
			return (int)i;
	return -1;
}

void attr_rows_defaults(const struct attr_desc *ar, unsigned n, union attr_val *av, struct arena *a)
{
	for (unsigned i = 0; i < n; i++) {
		const struct attr_desc *r = &ar[i];
		memset(&av[i], 0, sizeof av[i]);
		if (r->required)
			continue;
		switch (r->kind) {
		case AK_INT:
		case AK_BOOL:
		case AK_ENUM: av[i].i = r->def_i; break;
		case AK_FLOAT: av[i].f = r->def_f; break;
		case AK_INTS:
			av[i].ints.v = a ? arena_memdup(a, r->def_ints, r->def_n * sizeof(int64_t))
					 : (int64_t *)(uintptr_t)r->def_ints;
			av[i].ints.n = r->def_n;
			break;
		case AK_FLOATS:
		case AK_STRING: break;
		}
	}
}
