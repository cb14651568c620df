/* ew.c - the elementwise table (EW.def) as data, its build-time checks
 * against Instrs.def, and its start-up check.
 *
 * Build time: every kind of EW.def is a kind of Instrs.def (IK_kind),
 * flagged IF_EW, listed once; and as many kinds are flagged IF_EW as
 * EW.def has rows. So every elementwise kind has its semantics here or is
 * named as done by hand. Start-up (ew_check_table): what the compiler cannot
 * compare, names.
 */
#include "ir/ew.h"
#include "ir/ir.h"
#include "support/util.h"

#include <stdio.h>
#include <string.h>

/* ---- build-time checks ---- */

/* Instrs.def's flags of each kind, as constants */
enum {
#define INSTR(K, O, A, F, P, G, R) EW_FLAGS_##K = (F),
#include "ir/Instrs.def"
#undef INSTR
};

/* how many kinds Instrs.def flags IF_EW */
enum {
	EW_NFLAGGED = 0
#define INSTR(K, O, A, F, P, G, R) + (((F) & IF_EW) != 0)
#include "ir/Instrs.def"
#undef INSTR
};

/* one enumerator per row: a kind listed twice does not compile */
enum {
#define EW1(K, R, P, RE, IE) EW_ROW_##K,
#define EW2(K, R, P, RE, IE) EW_ROW_##K,
#define EW_SPECIAL(K, F) EW_ROW_##K,
#include "ir/EW.def"
	EW_NROWS
};

#define EW1(K, R, P, RE, IE) _Static_assert(EW_FLAGS_##K & IF_EW, "EW.def: " #K " is not IF_EW in Instrs.def");
#define EW2(K, R, P, RE, IE) EW1(K, R, P, RE, IE)
#define EW_SPECIAL(K, F) EW1(K, , , , )
#include "ir/EW.def"

_Static_assert((int)EW_NROWS == (int)EW_NFLAGGED, "EW.def: a kind flagged IF_EW in Instrs.def has no row");

/* ---- the rows as data ---- */

#define EW_STR_REAL(...) #__VA_ARGS__
#define EW_STR_INT(...) #__VA_ARGS__
#define EW_STR_NONE NULL
#define EW_PARAM_DESC_F(n) {#n, EW_PARAM_F}
#define EW_PARAM_DESC_I(n) {#n, EW_PARAM_I}
#define EW_PD(p) EW_PARAM_DESC_##p
#define NOPARAM 0, NULL
#define PARAM1(p) 1, ((const struct ew_param[]){EW_PD(p)})
#define PARAM2(p, q) 2, ((const struct ew_param[]){EW_PD(p), EW_PD(q)})
#define PARAM3(p, q, r) 3, ((const struct ew_param[]){EW_PD(p), EW_PD(q), EW_PD(r)})
#define PARAM4(p, q, r, s) 4, ((const struct ew_param[]){EW_PD(p), EW_PD(q), EW_PD(r), EW_PD(s)})
#define PARAM5(p, q, r, s, u) 5, ((const struct ew_param[]){EW_PD(p), EW_PD(q), EW_PD(r), EW_PD(s), EW_PD(u)})
/* the columns are pasted, not passed on, so that names in them that are
 * macros (NAN, isinf) are stringified as written */
#define EW_ROW(K, N, R, RS, IS, ...) [IK_##K] = {EW_FAMILY_TABLE, N, EW_RESULT_##R, __VA_ARGS__, {RS, IS}},

static const struct ew_row rows[IK_COUNT] = {
#define EW1(K, R, P, RE, IE) EW_ROW(K, 1, R, EW_STR_##RE, EW_STR_##IE, P)
#define EW2(K, R, P, RE, IE) EW_ROW(K, 2, R, EW_STR_##RE, EW_STR_##IE, P)
#define EW_SPECIAL(K, F) [IK_##K] = {EW_FAMILY_##F, 0, 0, 0, NULL, {NULL, NULL}},
#include "ir/EW.def"
};

static const struct {
	const char *name, *spelling[2];
} fns[] = {
#define EW_FN(N, RS, IS) {#N, {RS, IS}},
#include "ir/EW.def"
};

const struct ew_row *ew_row(unsigned kind)
{
	/* the table is checked against Instrs.def (ew_check_table) on first
	 * use, which is before any backend reads a row; ew_check_table's own
	 * reads find the flag set */
	static bool checked;
	if (!checked) {
		checked = true;
		ew_check_table();
	}
	if (kind >= IK_COUNT || !(instr_desc(kind)->flags & IF_EW))
		return NULL;
	return &rows[kind];
}

const char *ew_fn_spelling(const char *name, size_t len, enum ew_col col)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(fns); i++)
		if (strlen(fns[i].name) == len && memcmp(fns[i].name, name, len) == 0)
			return fns[i].spelling[col];
	return NULL;
}

bool ew_next_tok(const char **s, const char *end, struct ew_tok *t)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	if (p >= end)
		return false;
	t->s = p;
	if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
		t->kind = EW_TOK_IDENT;
		while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
				   (*p >= '0' && *p <= '9')))
			p++;
	} else if ((*p >= '0' && *p <= '9') || (*p == '.' && p + 1 < end && p[1] >= '0' && p[1] <= '9')) {
		/* a preprocessing number: digits, letters, '.', and a sign
		 * after an exponent letter */
		t->kind = EW_TOK_NUMBER;
		for (p++; p < end; p++) {
			if ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))
				continue;
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == '.' ||
			      (*p >= '0' && *p <= '9')))
				break;
		}
	} else {
		t->kind = EW_TOK_PUNCT;
		p++;
	}
	t->len = (size_t)(p - t->s);
	*s = p;
	return true;
}

/* ---- start-up check ---- */

GLOW_NORETURN static void row_bug(unsigned kind, const char *what, const char *name, size_t len)
{
	static char msg[256];
	snprintf(msg, sizeof msg, "EW.def row %s: %s '%.*s'", instr_kind_name(kind), what, (int)len, name);
	unreachable(msg);
}

static int param_index(const struct ew_row *r, const struct ew_tok *t)
{
	for (unsigned i = 0; i < r->nparams; i++)
		if (ew_tok_is(t, r->params[i].name))
			return (int)i;
	return -1;
}

/* every name in expression column col of kind's row is defined there */
static void check_expr(unsigned kind, const struct ew_row *r, enum ew_col col)
{
	static const char *const c_names[] = {"NAN", "float", "double", "int64_t", "uint64_t"};
	const char *s = r->expr[col], *end = s + strlen(s);
	struct ew_tok t, nx;
	while (ew_next_tok(&s, end, &t)) {
		if (t.kind != EW_TOK_IDENT)
			continue;
		const char *after = s;
		bool call = ew_next_tok(&after, end, &nx) && nx.kind == EW_TOK_PUNCT && *nx.s == '(';
		if (ew_tok_is(&t, "A") || (ew_tok_is(&t, "B") && r->nargs == 2) ||
		    (col == EW_INT && (ew_tok_is(&t, "T") || ew_tok_is(&t, "BITS"))))
			continue;
		if (ew_tok_is(&t, "K") && call) {
			/* K(number) */
			struct ew_tok num, close;
			if (!ew_next_tok(&after, end, &num) || num.kind != EW_TOK_NUMBER || !ew_next_tok(&after, end, &close) ||
			    *close.s != ')')
				row_bug(kind, "K takes one number", t.s, t.len);
			s = after;
			continue;
		}
		if (ew_tok_is(&t, "IF_ATTR") && call) {
			/* IF_ATTR(int parameter, e1, e0) */
			struct ew_tok p;
			int i = ew_next_tok(&after, end, &p) ? param_index(r, &p) : -1;
			if (i < 0 || r->params[i].kind != EW_PARAM_I)
				row_bug(kind, "IF_ATTR needs an int parameter, not", p.s, p.len);
			s = after;
			continue;
		}
		if (call) {
			if (!ew_fn_spelling(t.s, t.len, col))
				row_bug(kind, col == EW_REAL ? "no EW_FN spelling in Real columns for" :
							       "no EW_FN spelling in Int columns for",
					t.s, t.len);
			continue;
		}
		if (param_index(r, &t) >= 0)
			continue;
		bool known = false;
		for (size_t i = 0; i < GLOW_ARRAY_SIZE(c_names); i++)
			known |= ew_tok_is(&t, c_names[i]);
		if (!known)
			row_bug(kind, "unknown name", t.s, t.len);
	}
}

void ew_check_table(void)
{
	for (unsigned k = 0; k < IK_COUNT; k++) {
		const struct ew_row *r = ew_row(k);
		if (!r || r->family != EW_FAMILY_TABLE)
			continue;
		const struct instr_desc *d = instr_desc(k);
		/* Dest, then the operands A (and B) */
		if (d->nops != 1u + r->nargs || d->op_quals[0] != IQ_OUT)
			row_bug(k, "operands do not match Instrs.def", "", 0);
		if (r->nparams != d->nattrs)
			row_bug(k, "parameters are not the attributes of Instrs.def", "", 0);
		for (unsigned i = 0; i < r->nparams; i++) {
			enum attr_kind ak = (enum attr_kind)d->attrs[i].kind;
			bool is_f = ak == AK_FLOAT, is_i = ak == AK_INT || ak == AK_BOOL || ak == AK_ENUM;
			if (strcmp(r->params[i].name, d->attrs[i].name) != 0 ||
			    !(r->params[i].kind == EW_PARAM_F ? is_f : is_i))
				row_bug(k, "parameter is not the attribute at its position in Instrs.def",
					r->params[i].name, strlen(r->params[i].name));
		}
		if (!r->expr[EW_REAL] && !r->expr[EW_INT])
			row_bug(k, "no expression", "", 0);
		for (unsigned c = 0; c < 2; c++)
			if (r->expr[c])
				check_expr(k, r, (enum ew_col)c);
	}
}
