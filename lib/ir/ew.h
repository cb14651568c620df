/* ew.h - the elementwise table (EW.def) as data: each elementwise kind's
 * expressions as text, its parameters and result, the functions the
 * expressions call, and a tokenizer for the expression text. The
 * interpreter compiles EW.def itself; the C backend emits the text.
 */
#ifndef GLOW_IR_EW_H
#define GLOW_IR_EW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* how a kind's semantics are given: by its expressions, or by hand in each
 * backend (EW_SPECIAL's family) */
enum ew_family { EW_FAMILY_TABLE, EW_FAMILY_select, EW_FAMILY_convert, EW_FAMILY_copy };
enum ew_result { EW_RESULT_SAME, EW_RESULT_BOOL };
enum ew_param_kind { EW_PARAM_F, EW_PARAM_I };
/* the two expression columns */
enum ew_col { EW_REAL, EW_INT };

struct ew_param {
	const char *name;
	uint8_t kind; /* enum ew_param_kind */
};

struct ew_row {
	uint8_t family; /* enum ew_family; the rest is for EW_FAMILY_TABLE */
	uint8_t nargs;  /* operands read: 1 (A) or 2 (A, B) */
	uint8_t result; /* enum ew_result */
	uint8_t nparams;
	const struct ew_param *params; /* the kind's attributes, table order */
	const char *expr[2];           /* by enum ew_col; NULL: none */
};

/* The row of an instruction kind; NULL if the kind is not elementwise. */
const struct ew_row *ew_row(unsigned kind);

/* How a bundle spells function `name` (len bytes) in column col; NULL if
 * the table has no such function or it is not available in that column. */
const char *ew_fn_spelling(const char *name, size_t len, enum ew_col col);

enum ew_tok_kind { EW_TOK_IDENT, EW_TOK_NUMBER, EW_TOK_PUNCT };
struct ew_tok {
	const char *s;
	size_t len;
	uint8_t kind; /* enum ew_tok_kind */
};
/* The next token of expression text at *s (before end), skipping spaces;
 * false at the end. Punctuators are one character each. */
bool ew_next_tok(const char **s, const char *end, struct ew_tok *t);
static inline bool ew_tok_is(const struct ew_tok *t, const char *word)
{
	size_t i = 0;
	while (i < t->len && word[i] == t->s[i])
		i++;
	return i == t->len && word[i] == 0;
}

/* Checks the table against Instrs.def: parameters are the kind's
 * attributes, operand counts match, and every name an expression uses is
 * defined for its column. A mismatch is an internal bug (unreachable).
 * Called once by instr_desc_init. */
void ew_check_table(void);

#endif
