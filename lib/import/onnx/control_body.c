/* control_body.c - what the ONNX importer's control flow (ops_control.c:
 * If, Loop and Scan as regions; ops_control_unroll.c: Loops unrolled at
 * import) shares: tensors standing for values, and the translation of a
 * subgraph body once in a new scope (through im->translate, so the
 * operators' translators are reached through the table, not by name).
 * Below both files, so they call down into it, never each other back.
 */
#include "import/onnx/control.h"
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

/* subgraph nodes translated in one import, at most (the limit of unrolling) */
#define CF_MAX_NODES 65536

/* ---- tensors ---- */

struct tensor *cf_t_of_value(struct importer *im, const char *name, int dtype, struct value v)
{
	if (!v.node)
		return NULL;
	const struct type *vt = val_type(v);
	struct tensor *t = imp_t_new(im, name, dtype, vt->rank, vt->dims);
	t->v = v;
	return t;
}

/* "float [2, 3]" */
const char *cf_t_desc(struct importer *im, const struct tensor *t)
{
	char buf[256];
	size_t len = (size_t)snprintf(buf, sizeof buf, "%s [", imp_dt_name(t->dtype));
	for (unsigned k = 0; k < t->rank && len < sizeof buf; k++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%llu", k ? ", " : "",
					(unsigned long long)t->dims[k]);
	if (len < sizeof buf)
		snprintf(buf + len, sizeof buf - len, "]");
	return arena_strdup(&im->scratch, buf);
}

bool cf_same_shape(const struct tensor *a, const struct tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (unsigned k = 0; k < a->rank; k++)
		if (a->dims[k] != b->dims[k])
			return false;
	return true;
}

/* The value of a known bool or integer tensor of one element. */
bool cf_known_flag(struct importer *im, struct tensor *t, bool *v)
{
	if (!t->known || imp_t_numel(t) != 1 || !imp_dt_is_int(t->dtype))
		return false;
	const int64_t *iv = imp_t_ints(im, t);
	if (!iv)
		return false;
	*v = iv[0] != 0;
	return true;
}

/* ---- subgraph bodies ---- */

/* Binds every output of the current node to a poisoned tensor: a value the
 * subgraph reads failed earlier, and was reported then. */
int cf_poison_all(struct importer *im, const onnx_node *n)
{
	struct tensor dead;
	memset(&dead, 0, sizeof dead);
	dead.poisoned = true;
	for (unsigned i = 0; i < n->n_output; i++)
		imp_set_out_t(im, i, &dead);
	return 0;
}

/* Translates subgraph g (attribute aname of the current node) once, in a
 * new scope with its inputs bound to ins[0..nin) (g must have nin inputs);
 * outs[0..g->n_output) receive its outputs. iter labels the diagnostics
 * (-1: none; the first iteration, 0, and If's branches check g's
 * operators). Returns 0; -1 after reporting; 1 when an output depends on a
 * value that failed earlier (nothing new to report). */
int cf_run_body(struct importer *im, const char *aname, const Onnx__GraphProto *g, struct tensor *const *ins,
		    size_t nin, long iter, struct tensor **outs)
{
	const onnx_node *n = im->node;
	if (g->n_input != nin)
		return imp_op_err(im, "subgraph %s has %zu inputs, expected %zu", aname, g->n_input, nin);
	/* each translation costs its nodes, and one for the scope */
	if (g->n_node + 1 > CF_MAX_NODES - im->unrolled)
		return imp_op_err(im, "unrolling translates more than %d subgraph nodes (the limit)", CF_MAX_NODES);
	im->unrolled += g->n_node + 1;
	/* operators the importer lacks, once per subgraph and translation of
	 * its owner (the check's cost counts against the same limit) */
	if (iter <= 0 && im->check_ops(im, g))
		return imp_op_err(im, "subgraph %s has operators the importer does not translate", aname);
	int e0 = im->errors;
	struct scope sc = {.parent = im->inner, .owner = n, .attr = aname, .iter = iter};
	strmap_init(&sc.tensors);
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *p = g->initializer[i];
		if (!p->name || !*p->name) {
			imp_op_err(im, "subgraph %s: initializer %zu has no name", aname, i);
			continue;
		}
		struct tensor *t = imp_t_from_proto(im, p, p->name);
		if (t)
			strmap_put(&sc.tensors, t->name, strlen(t->name), t);
	}
	for (size_t i = 0; i < nin; i++) {
		const char *name = g->input[i]->name;
		if (!name || !*name) {
			imp_op_err(im, "subgraph %s: input %zu has no name", aname, i);
			continue;
		}
		struct tensor *t = arena_new(&im->scratch, struct tensor);
		*t = *ins[i];
		t->name = name;
		strmap_put(&sc.tensors, name, strlen(name), t);
	}
	if (im->errors == e0) {
		im->inner = &sc;
		for (size_t i = 0; i < g->n_node && !im->d->stopped && !im->generated_over; i++)
			im->translate(im, g->node[i]);
		for (size_t i = 0; i < g->n_output; i++) {
			const char *name = g->output[i]->name;
			outs[i] = name && *name ? imp_t_lookup(im, name) : NULL;
		}
		im->inner = sc.parent;
		im->node = n;
	}
	strmap_free(&sc.tensors);
	if (im->errors != e0)
		return -1;
	int r = 0;
	for (size_t i = 0; i < g->n_output; i++) {
		const char *name = g->output[i]->name ? g->output[i]->name : "";
		if (!outs[i])
			r = imp_op_err(im, "subgraph %s: output %zu (\"%s\") is not computed", aname, i, name);
		else if (outs[i]->poisoned && r == 0)
			r = 1;
	}
	return r;
}
