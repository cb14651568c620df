/* tensor.h - tensors in the tools that run programs (glow-run, glow-diff,
 * glow-llc's signatures): the real value of an element, text printing with
 * NumPy-style summaries, one comparison rule with one set of tolerance
 * options, and the signature (inputs and outputs) of an IR function.
 *
 * Printing. "NAME: TYPE = [[a, b], [c, d]]" on one line. A tensor of more
 * than TENSOR_SUMMARY_THRESHOLD elements is summarized as NumPy does: along
 * every axis longer than 2 * TENSOR_EDGE_ITEMS only the first and the last
 * TENSOR_EDGE_ITEMS entries are printed, with "..." between them; `full`
 * prints everything. Quantized tensors print their stored integers and then
 * a second line "NAME: real = [...]" of scale * (q - offset) in the same
 * layout.
 *
 * Comparison. A float element (quantized kinds: its real value) matches
 * when |got - ref| <= atol + rtol * |ref|, NaN matching NaN; integer,
 * index and bool elements must be equal. The defaults are shared by every
 * tool that compares (TENSOR_TOL_OPTS).
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_TENSOR_TENSOR_H
#define GLOW_TENSOR_TENSOR_H

#include "backends/backend.h"
#include "ir/ir.h"
#include "support/cl.h"
#include "support/diag.h"
#include "support/io.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- elements ---- */

/* The real value of element i (float and float8 kinds; quantized kinds
 * dequantized). */
double tensor_real(const struct type *t, const void *p, uint64_t i);
/* Stores v, rounded to the kind, into element i of a float or float8 kind
 * (float8: round to nearest even, saturated). */
void tensor_set_real(const struct type *t, void *p, uint64_t i, double v);
/* The stored integer of element i of a quantized, integer, index, bool or
 * 4-bit kind (float8 kinds: their bits, 0..255). */
int64_t tensor_stored_int(const struct type *t, const void *p, uint64_t i);
/* Element i as text: floats shortest round-trip, integers, true/false. */
void tensor_print_elem(struct ostream *o, const struct type *t, const void *p, uint64_t i);
/* The same into buf (truncated to size). */
void tensor_elem_str(const struct type *t, const void *p, uint64_t i, char *buf, size_t size);
/* "[i, j, k]", the multi-index of flat element e. */
void tensor_index_str(const struct type *t, uint64_t e, char *buf, size_t size);

/* ---- printing ---- */

#define TENSOR_SUMMARY_THRESHOLD 1000
#define TENSOR_EDGE_ITEMS 3

/* "name: TYPE = [...]\n" (and "name: real = [...]\n" for quantized kinds);
 * summarized unless full. */
void tensor_print(struct ostream *o, const char *name, const struct type *t, const void *p, bool full);

/* ---- comparison ---- */

#define TENSOR_RTOL_DEFAULT 1e-3
#define TENSOR_ATOL_DEFAULT 1e-5

struct tensor_tol {
	const char *rtol_s, *atol_s; /* as given on the command line, NULL: default */
	double rtol, atol;
};

/* The -rtol and -atol rows of a tool's cl_opt table. */
#define TENSOR_TOL_OPTS(t)                                                                                    \
	{"rtol", CL_STRING, &(t)->rtol_s, "x", "Relative tolerance of comparisons (default 1e-3)", 0, NULL},   \
	{"atol", CL_STRING, &(t)->atol_s, "x", "Absolute tolerance of comparisons (default 1e-5)", 0, NULL}

/* Sets rtol and atol from the strings or the defaults; returns -1 after
 * reporting a value that is not a finite non-negative number. */
int tensor_tol_parse(struct tensor_tol *t, struct diag *d);

struct tensor_cmp {
	uint64_t n;        /* elements */
	uint64_t bad;      /* elements outside the tolerance */
	bool exact;        /* integer, index or bool kind */
	bool have;         /* some element differs at all (worst is set) */
	uint64_t worst;    /* exact kinds: the first differing element; else the
			      largest excess over its allowance */
	double worst_err;  /* |got - ref| there (NaN when one side is NaN) */
};

/* Compares got with ref, both of type t. */
void tensor_compare(const struct type *t, const void *got, const void *ref, const struct tensor_tol *tol,
		    struct tensor_cmp *r);

/* ---- signatures ---- */

/* "@f" then one line per placeholder that is an input or an output:
 * "  input NAME: TYPE", "  output NAME: TYPE" or "  inout NAME: TYPE"
 * (read and updated in place), in declaration order. */
void tensor_print_signature(struct ostream *o, struct ir_func *f);

/* ---- memory ---- */

/* calloc(n + 1) that reports "cannot allocate WHAT: N bytes" and returns
 * NULL instead of exiting: sizes that come from a program's types are the
 * user's, so running out of memory is bad input, not a crash. */
void *tensor_alloc(uint64_t n, const char *what, struct diag *d);

#endif
