/* report.c - the base of the importer's files (internal.h): diagnostics
 * naming the node being translated (and, inside a subgraph, the enclosing
 * nodes), derived value names, result types checked against the graph
 * IR's limits, float attributes as short decimals. It calls no other file
 * of the importer, so every other file may call it.
 */
#include "import/onnx/internal.h"
#include "support/io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *imp_node_label(const onnx_node *n)
{
	if (n->name && *n->name)
		return n->name;
	if (n->n_output > 0 && n->output[0] && *n->output[0])
		return n->output[0];
	return "?";
}

/* " in subgraph body (iteration 2) of node "loop" (Loop)" per enclosing
 * subgraph, innermost first; "" in the main graph. */
static void scope_where(const struct importer *im, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (const struct scope *sc = im->inner; sc && len < size; sc = sc->parent) {
		char iter[48] = "";
		if (sc->iter >= 0)
			snprintf(iter, sizeof iter, " (iteration %ld)", sc->iter);
		int k = snprintf(buf + len, size - len, " in subgraph %s%s of node \"%s\" (%s)", sc->attr, iter,
				 imp_node_label(sc->owner), sc->owner->op_type ? sc->owner->op_type : "?");
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static void vreport(struct importer *im, enum diag_level lvl, const char *fmt, va_list ap)
{
	char msg[1024], where[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	scope_where(im, where, sizeof where);
	if (im->node)
		diag_report(im->d, lvl, LOC_NONE, "%s: node \"%s\" (%s)%s: %s", im->filename, imp_node_label(im->node),
			    im->node->op_type ? im->node->op_type : "?", where, msg);
	else
		diag_report(im->d, lvl, LOC_NONE, "%s: %s", im->filename, msg);
}

/* Reports an error about the current node (or the model); returns -1. */
int imp_op_err(struct importer *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(im, DIAG_ERROR, fmt, ap);
	va_end(ap);
	im->errors++;
	return -1;
}

void imp_op_warn(struct importer *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(im, DIAG_WARNING, fmt, ap);
	va_end(ap);
}

const struct type *imp_ty(struct importer *im, int elem, const uint64_t *dims, unsigned rank)
{
	if (rank > GLOW_MAX_RANK) {
		imp_op_err(im, "result rank %u exceeds the graph IR's %d", rank, GLOW_MAX_RANK);
		return NULL;
	}
	if (elem < 0 || elem >= EK_COUNT) {
		/* an ONNX type with no graph element kind (imp_dt_elem's -1)
		 * where the translator did not check for one */
		imp_op_err(im, "an input's element type is not supported here");
		return NULL;
	}
	if (!type_shape_ok((enum elem_kind)elem, dims, rank)) {
		imp_op_err(im, "result shape is too large");
		return NULL;
	}
	return type_get(im->tc, (enum elem_kind)elem, dims, rank);
}

const char *imp_dname(struct importer *im, const char *base, const char *suffix)
{
	size_t n = strlen(base) + strlen(suffix) + 2;
	char *s = arena_alloc(&im->scratch, n);
	snprintf(s, n, "%s.%s", base, suffix);
	return s;
}

double imp_f32_short(float f)
{
	char buf[48];
	format_float(buf, sizeof buf, f);
	return isfinite(f) ? strtod(buf, NULL) : (double)f;
}

bool imp_default_domain(const char *dom)
{
	return !dom || !*dom || strcmp(dom, "ai.onnx") == 0;
}
