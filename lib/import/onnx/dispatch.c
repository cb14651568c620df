/* dispatch.c - the op table (ops.def) and translating one node by it:
 * which operators the importer knows at which opset, every unsupported
 * one reported at once, and a node folded when its inputs are known or
 * else handed to its translator. The driver (import.c) and the subgraph
 * translators (ops_control.c) translate through here.
 */
#include "import/onnx/internal.h"
#include "support/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unsupported {
	const char *op, *domain;
	int64_t version;
	unsigned count;
	VEC(const char *) names;
};

int64_t imp_domain_opset(const struct importer *im, const char *domain)
{
	if (imp_default_domain(domain))
		return im->opset;
	for (size_t i = 0; i < im->nopsets; i++) {
		const Onnx__OperatorSetIdProto *o = im->opsets[i];
		if (o->domain && strcmp(o->domain, domain) == 0 && o->has_version)
			return o->version;
	}
	return -1;
}

/* Reports every node whose operator the table lacks for the opset its
 * domain is imported at (grouped by operator, with counts and node names);
 * returns the number of such operators. */
int imp_check_ops(struct importer *im, const Onnx__GraphProto *g)
{
	VEC(struct unsupported) uns = {0};
	VEC(const char *) warned = {0};
	for (size_t i = 0; i < g->n_node; i++) {
		const onnx_node *n = g->node[i];
		const char *op = n->op_type ? n->op_type : "";
		const char *dom = imp_default_domain(n->domain) ? "" : n->domain;
		const char *qname = *dom ? imp_dname(im, dom, op) : op;
		const struct op_row *row = imp_op_lookup_domain(dom, op);
		int64_t ver = imp_domain_opset(im, dom);
		const char *change = NULL;
		int newer = 0, cver = 0;
		if (row && ver >= row->since && ver > row->until && !*dom) {
			/* the default domain's versions are known up to ONNX_KNOWN_OPSET */
			newer = imp_op_newer(op, row->until, ver, &change, &cver);
			if (!newer && ver <= ONNX_KNOWN_OPSET)
				continue; /* no newer version: the same operator */
		}
		bool seen = false;
		for (size_t k = 0; k < warned.len; k++)
			seen |= strcmp(warned.data[k], qname) == 0;
		if (row && ver >= row->since && ver > row->until && change) {
			if (!seen) {
				vec_push(&warned, qname);
				diag_error(im->d, LOC_NONE,
					   "%s: operator %s: version %d (opset %lld) changed its semantics (%s); the importer "
					   "translates versions up to opset %d",
					   im->filename, qname, cver, (long long)ver, change, row->until);
				im->errors++;
			}
			continue;
		}
		if (row && ver >= row->since && ver > row->until) {
			if (!seen) {
				vec_push(&warned, qname);
				if (!im->opts->opset_check && newer && ver <= ONNX_KNOWN_OPSET)
					diag_warning(im->d, LOC_NONE,
						     "%s: operator %s: version %d (opset %lld) adds element types only; "
						     "translating with opset %d rules",
						     im->filename, qname, newer, (long long)ver, row->until);
				else if (!im->opts->opset_check)
					diag_warning(im->d, LOC_NONE,
						     "%s: operator %s: opset %lld is newer than the importer knows "
						     "(%d); translating with opset %d rules",
						     im->filename, qname, (long long)ver,
						     *dom ? row->until : ONNX_KNOWN_OPSET, row->until);
			}
			if (!im->opts->opset_check)
				continue;
		} else if (row && ver >= row->since) {
			continue;
		}
		struct unsupported *u = NULL;
		for (size_t k = 0; k < uns.len; k++)
			if (strcmp(uns.data[k].op, qname) == 0)
				u = &uns.data[k];
		if (!u) {
			struct unsupported z = {qname, dom, ver, 0, {0}};
			vec_push(&uns, z);
			u = &vec_last(&uns);
		}
		u->count++;
		vec_push(&u->names, imp_node_label(n));
	}
	for (size_t k = 0; k < uns.len; k++) {
		struct unsupported *u = &uns.data[k];
		char list[512];
		size_t len = 0;
		list[0] = 0;
		for (size_t j = 0; j < u->names.len && j < 8; j++)
			len += (size_t)snprintf(list + len, sizeof list - len > 0 ? sizeof list - len : 0,
						"%s\"%s\"", j ? ", " : "", u->names.data[j]);
		if (len >= sizeof list)
			len = sizeof list - 1;
		if (u->names.len > 8)
			snprintf(list + len, sizeof list - len, ", ...");
		if (u->version >= 0)
			diag_error(im->d, LOC_NONE, "%s: unsupported operator %s (opset %lld): %u node%s: %s",
				   im->filename, u->op, (long long)u->version, u->count, u->count == 1 ? "" : "s",
				   list);
		else
			diag_error(im->d, LOC_NONE,
				   "%s: unsupported operator %s: the model imports no opset of domain %s: %u node%s: %s",
				   im->filename, u->op, u->domain, u->count, u->count == 1 ? "" : "s", list);
		im->errors++;
		vec_free(&u->names);
	}
	int r = (int)uns.len;
	vec_free(&uns);
	vec_free(&warned);
	return r;
}

static void poison_outputs(struct importer *im, const onnx_node *n)
{
	for (size_t i = 0; i < n->n_output; i++)
		if (n->output[i] && *n->output[i])
			imp_bind(im, n->output[i])->poisoned = true;
}

/* Translates one node: checks its inputs exist, folds it if it can, else
 * runs its translator. */
void imp_translate(struct importer *im, const onnx_node *n)
{
	im->node = n;
	for (size_t i = 0; i < n->n_input; i++) {
		if (!n->input[i] || !*n->input[i])
			continue;
		struct tensor *t = imp_t_lookup(im, n->input[i]);
		if (!t) {
			imp_op_err(im, "input \"%s\" is not defined before its use", n->input[i]);
			poison_outputs(im, n);
			return;
		}
		if (t->poisoned) {
			poison_outputs(im, n);
			return;
		}
		if (imp_narrow_refused(im, n, t)) { /* float8/int4 (issue 15) */
			poison_outputs(im, n);
			return;
		}
	}
	int e0 = im->errors;
	int r = imp_fold_node(im, n);
	if (r == 0) {
		/* a subgraph's nodes translate inside their owner's translator */
		const struct op_row *outer = im->row;
		im->row = imp_op_lookup_domain(n->domain, n->op_type);
		r = im->row->fn(im, n);
		im->row = outer;
	}
	if (r < 0 || im->errors != e0) {
		if (im->errors == e0)
			imp_op_err(im, "translation failed");
		poison_outputs(im, n);
		return;
	}
	for (unsigned i = 0; i < n->n_output; i++) {
		const char *o = imp_out_name(im, i);
		if (*o && !imp_t_lookup(im, o) && imp_out_used(im, i)) {
			imp_op_err(im, "output %u (\"%s\") is not supported", i, o);
			poison_outputs(im, n);
			return;
		}
	}
}

/* ---- the op table ---- */

static const struct op_row op_table[] = {
#define ONNX_OP(name, since, until, fn) {name, since, until, fn, "", NK_COUNT},
#define ONNX_OP_KIND(name, since, until, fn, kind) {name, since, until, fn, "", kind},
#define ONNX_OP_DOMAIN(domain, name, since, until, fn) {name, since, until, fn, domain, NK_COUNT},
#include "import/onnx/ops.def"
#undef ONNX_OP
#undef ONNX_OP_KIND
#undef ONNX_OP_DOMAIN
};

const struct op_row *imp_op_lookup_domain(const char *domain, const char *op)
{
	if (!op)
		return NULL;
	const char *dom = imp_default_domain(domain) ? "" : domain;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(op_table); i++)
		if (strcmp(op_table[i].op, op) == 0 && strcmp(op_table[i].domain, dom) == 0)
			return &op_table[i];
	return NULL;
}

const struct op_row *imp_op_lookup(const char *op)
{
	return imp_op_lookup_domain("", op);
}

void onnx_list_ops(FILE *out)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(op_table); i++)
		fprintf(out, "%s%s%s %d-%d\n", op_table[i].domain, *op_table[i].domain ? "." : "", op_table[i].op,
			op_table[i].since, op_table[i].until);
}
