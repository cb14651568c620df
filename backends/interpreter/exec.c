/* exec.c - the kernel entry point: the table of every instruction kind's
 * kernel (Kernels.def and lib/ir/EW.def), checked when it compiles, the
 * dispatch through it, and the float widening helpers the kernels share.
 */
#include "backends/interpreter/kern.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

float *kwiden(const struct interp_arg *a)
{
	if (ekind(a->t) == EK_FLOAT)
		return a->p;
	size_t n = numel(a->t);
	float *w = xmalloc(n * sizeof(float) + 1);
	for (size_t i = 0; i < n; i++)
		w[i] = (float)ld_f(a->t, a->p, i);
	return w;
}

void kfree_wide(const struct interp_arg *a, float *w)
{
	if (w != a->p)
		free(w);
}

void knarrow(const struct interp_arg *a, const float *v)
{
	if (ekind(a->t) == EK_FLOAT) {
		if (v != a->p)
			memcpy(a->p, v, numel(a->t) * sizeof(float));
		return;
	}
	size_t n = numel(a->t);
	for (size_t i = 0; i < n; i++)
		st_f(a->t, a->p, i, v[i]);
}

float *kresult_buf(const struct interp_arg *a)
{
	if (ekind(a->t) == EK_FLOAT)
		return a->p;
	return xcalloc(numel(a->t) + 1, sizeof(float));
}

void kresult_done(const struct interp_arg *a, float *v)
{
	knarrow(a, v);
	kfree_wide(a, v);
}

int kerror(const struct kargs *k, const char *fmt, ...)
{
	if (k->err && k->errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(k->err, k->errsize, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- the kernel table: Kernels.def and lib/ir/EW.def by kind ---- */

/* One enumerator per row, so that a kind with two rows does not compile
 * (the enumerator is redeclared) ... */
enum kern_row {
#define KERNEL(kind, fn) KERN_ROW_##kind,
#define NOKERNEL(kind) KERN_ROW_##kind,
#include "backends/interpreter/Kernels.def"
#define EW1(kind, result, params, real, int) KERN_ROW_##kind,
#define EW2(kind, result, params, real, int) KERN_ROW_##kind,
#define EW_SPECIAL(kind, family) KERN_ROW_##kind,
#include "ir/EW.def"
};

enum kern_qrow {
#define QKERNEL(kind, fn, float_ok) KERN_QROW_##kind,
#include "backends/interpreter/Kernels.def"
};

/* ... and a kind of Instrs.def without one does not either: its
 * KERN_ROW_<kind> is undeclared. */
enum {
	KERN_ROWS_CHECKED = 0
#define INSTR(kind, ...) + 0 * KERN_ROW_##kind
#include "ir/Instrs.def"
#undef INSTR
};

/* each kind's kernel; NULL: a kind only another backend runs */
static kern_fn *const kern_table[IK_COUNT] = {
#define KERNEL(kind, fn) [IK_##kind] = fn,
#include "backends/interpreter/Kernels.def"
#define EW1(kind, result, params, real, int) [IK_##kind] = kern_ew_##kind,
#define EW2(kind, result, params, real, int) [IK_##kind] = kern_ew_##kind,
#define EW_SPECIAL(kind, family) [IK_##kind] = kern_ew_##family,
#include "ir/EW.def"
};

/* each kind's quantized arithmetic, if it has one */
static const struct {
	kern_fn *fn;
	unsigned float_ok; /* an operand that may be float; 0: none */
} kern_qtable[IK_COUNT] = {
#define QKERNEL(kind, fn, float_ok) [IK_##kind] = {fn, float_ok},
#include "backends/interpreter/Kernels.def"
};

/* Whether every operand of k is quantized, float_ok (when nonzero)
 * excepted: the type rules allow that one to be float too. */
static bool kern_all_quantized(const struct kargs *k, unsigned float_ok)
{
	unsigned nops = instr_desc(k->kind)->nops;
	for (unsigned i = 0; i < nops; i++)
		if (!elem_is_quantized(ekind(k->op[i].t)) && !(float_ok && i == float_ok))
			return false;
	return true;
}

/* (interp.h) The kind's quantized arithmetic when it has one and the
 * operands are quantized, else its kernel: two array look-ups. */
int interp_exec(unsigned kind, const struct interp_arg *ops, const union attr_val *attrs, char *err,
		size_t errsize)
{
	if (kind >= IK_COUNT || !kern_table[kind])
		return 1;
	struct kargs k = {kind, ops, attrs, err, errsize};
	if (kern_qtable[kind].fn && kern_all_quantized(&k, kern_qtable[kind].float_ok))
		return kern_qtable[kind].fn(&k);
	return kern_table[kind](&k);
}

/* Every kind with a kernel runs for every combination of element kinds its
 * type rule admits (the type rules have already excluded the rest), so
 * support is by kind: a NOKERNEL row's kind runs on its backend only. */
bool interp_supports(unsigned kind, const struct type *const *types, unsigned ntypes)
{
	(void)types;
	(void)ntypes;
	return kind < IK_COUNT && kern_table[kind];
}
