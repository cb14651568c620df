/* instrs.c - builds the instruction descriptor table from Instrs.def:
 * operand names and qualifiers, attribute rows, in-place pairs. The table
 * strings are parsed once; a malformed row is an internal bug. */
#include "graph/attr_rows.h"
#include "ir/ew.h"
#include "ir/ir.h"
#include "ir/rules.h"
#include "support/util.h"

#include <string.h>

static const struct {
	const char *name, *ops;
	const struct attr_desc *attrs;
	unsigned flags;
	const char *inplace;
	const char *graph;
	ir_rule_fn rule;
} rows[] = {
#define INSTR(K, O, A, F, P, G, R) {#K, O, A, F, P, G, R},
#include "ir/Instrs.def"
#undef INSTR
};

_Static_assert(sizeof(rows) / sizeof(rows[0]) == IK_COUNT, "Instrs.def rows and enum out of step");

static struct instr_desc descs[IK_COUNT];
const struct instr_desc *instr_descs = descs;
static struct strmap kind_map;

/* The readers look a kind up per instruction: in front of the map, a
 * direct-mapped index by (length, first and last letter) filled when the
 * table is built, 1 + kind where exactly one kind lands in a slot, 0
 * otherwise (the map then decides). */
enum { KIND_INDEX = 512 };
static uint8_t kind_index[KIND_INDEX];
_Static_assert(IK_COUNT < 255, "kind_index holds 1 + kind in a byte");

static unsigned kind_slot(const char *s, size_t len)
{
	return (unsigned)(len * 31u + (unsigned char)s[0] * 7u + (unsigned char)s[len - 1]) % KIND_INDEX;
}

/* Next space-separated word of *s: returns its length (0 at the end). */
static size_t next_word(const char **s, const char **word)
{
	while (**s == ' ')
		(*s)++;
	*word = *s;
	while (**s && **s != ' ')
		(*s)++;
	return (size_t)(*s - *word);
}

static int op_index(const struct instr_desc *d, const char *name, size_t len)
{
	for (unsigned i = 0; i < d->nops; i++)
		if (strlen(d->op_names[i]) == len && memcmp(d->op_names[i], name, len) == 0)
			return (int)i;
	return -1;
}

/* The Graph column: "Kind" or "Kind R... = O...". The attributes must be
 * the node kind's, in order, since its rule reads them by position. */
static void build_graph(struct instr_desc *d, const char *spec)
{
	const char *s = spec, *w;
	size_t len = next_word(&s, &w);
	d->graph_kind = -1;
	if (!len)
		return;
	int nk = node_kind_lookup(w, len);
	glow_assert(nk >= 0);
	const struct node_desc *nd = node_desc((unsigned)nk);
	d->graph_kind = nk;
	if (!*s) { /* default mapping */
		for (unsigned i = 0; i < d->nops; i++) {
			if (d->op_quals[i] == IQ_OUT || d->op_quals[i] == IQ_INOUT)
				d->graph_res[d->graph_nres++] = (int8_t)i;
			else if (d->op_quals[i] == IQ_IN)
				d->graph_ops[d->graph_nops++] = (int8_t)i;
		}
	} else {
		bool lhs = true;
		while ((len = next_word(&s, &w)) != 0) {
			if (len == 1 && *w == '=') {
				lhs = false;
				continue;
			}
			int i = len == 1 && *w == '_' ? -1 : op_index(d, w, len);
			glow_assert(i >= 0 || (lhs && d->graph_nres > 0));
			if (lhs)
				d->graph_res[d->graph_nres++] = (int8_t)i;
			else
				d->graph_ops[d->graph_nops++] = (int8_t)i;
		}
	}
	glow_assert(d->graph_nres == nd->nres && d->graph_nops == nd->nops && !nd->variadic);
	glow_assert(d->nattrs == nd->nattrs);
	for (unsigned i = 0; i < d->nattrs; i++)
		glow_assert(strcmp(d->attrs[i].name, nd->attrs[i].name) == 0 && d->attrs[i].kind == nd->attrs[i].kind);
}

static void build(unsigned k)
{
	struct instr_desc *d = &descs[k];
	d->name = rows[k].name;
	const char *s = rows[k].ops, *w;
	size_t len;
	/* operands: "@qual Name" pairs */
	while ((len = next_word(&s, &w)) != 0) {
		unsigned q;
		if (len == 3 && memcmp(w, "@in", 3) == 0)
			q = IQ_IN;
		else if (len == 4 && memcmp(w, "@out", 4) == 0)
			q = IQ_OUT;
		else if (len == 6 && memcmp(w, "@inout", 6) == 0)
			q = IQ_INOUT;
		else if (len == 8 && memcmp(w, "@scratch", 8) == 0)
			q = IQ_SCRATCH;
		else
			unreachable("Instrs.def: bad operand qualifier");
		len = next_word(&s, &w);
		glow_assert(len > 0 && d->nops < IR_MAX_OPS);
		d->op_quals[d->nops] = (uint8_t)q;
		d->op_names[d->nops++] = xstrndup(w, len);
	}
	d->attrs = rows[k].attrs;
	d->nattrs = attr_rows_count(d->attrs);
	d->flags = rows[k].flags;
	d->rule = rows[k].rule;
	build_graph(d, rows[k].graph);
	/* in-place pairs: "Out=In" */
	s = rows[k].inplace;
	while ((len = next_word(&s, &w)) != 0) {
		const char *eq = memchr(w, '=', len);
		glow_assert(eq != NULL && d->ninplace < IR_MAX_INPLACE);
		int a = op_index(d, w, (size_t)(eq - w)), b = op_index(d, eq + 1, len - (size_t)(eq - w) - 1);
		glow_assert(a >= 0 && b >= 0);
		glow_assert(d->op_quals[a] != IQ_IN && d->op_quals[b] != IQ_OUT);
		d->inplace[d->ninplace][0] = (uint8_t)a;
		d->inplace[d->ninplace][1] = (uint8_t)b;
		d->ninplace++;
	}
}

void instr_desc_init(void)
{
	if (descs[0].name)
		return;
	node_desc_init();
	strmap_init(&kind_map);
	bool shared[KIND_INDEX] = {false};
	for (unsigned k = 0; k < IK_COUNT; k++) {
		build(k);
		size_t len = strlen(descs[k].name);
		strmap_put(&kind_map, descs[k].name, len, &descs[k]);
		unsigned i = kind_slot(descs[k].name, len);
		shared[i] |= kind_index[i] != 0;
		kind_index[i] = (uint8_t)(k + 1);
	}
	for (unsigned i = 0; i < KIND_INDEX; i++)
		if (shared[i])
			kind_index[i] = 0;
}

const char *instr_kind_name(unsigned kind) { return kind < IK_COUNT ? rows[kind].name : "<bad kind>"; }

int instr_kind_lookup(const char *s, size_t len)
{
	instr_desc_init();
	if (len == 0)
		return -1;
	unsigned k = kind_index[kind_slot(s, len)];
	if (k && strncmp(rows[k - 1].name, s, len) == 0 && rows[k - 1].name[len] == 0)
		return (int)k - 1;
	const struct instr_desc *d = strmap_getn(&kind_map, s, len);
	return d ? (int)(d - descs) : -1;
}

int instr_kind_named_like(unsigned nk)
{
	const char *s = node_kind_name(nk);
	char low[64];
	size_t l = strlen(s);
	if (l >= sizeof low)
		return -1;
	for (size_t i = 0; i <= l; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i] == '.' ? '_' : s[i]);
	return instr_kind_lookup(low, l);
}

int instr_attr_index(unsigned kind, const char *name, size_t len)
{
	const struct instr_desc *d = instr_desc(kind);
	return attr_rows_index(d->attrs, d->nattrs, name, len);
}

bool instr_inplace_ok(unsigned kind, unsigned out, unsigned in)
{
	const struct instr_desc *d = instr_desc(kind);
	for (unsigned i = 0; i < d->ninplace; i++)
		if ((d->inplace[i][0] == out && d->inplace[i][1] == in) ||
		    (d->inplace[i][0] == in && d->inplace[i][1] == out))
			return true;
	return false;
}

const char *ir_qual_name(unsigned q)
{
	switch (q) {
	case IQ_IN: return "in";
	case IQ_OUT: return "out";
	case IQ_INOUT: return "inout";
	case IQ_SCRATCH: return "out";
	}
	return "?";
}
