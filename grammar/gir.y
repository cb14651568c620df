/* gir.y - the grammar of the instruction IR text format (docs/InstrIR.md).
 *
 * Design: the grammar is generic. An instruction is
 *   (%name '=')? kind modifier? ('[' INT* ']')? TYPE? operands? {attrs}?
 * for every kind; the kind is looked up in Instrs.def at run time
 * (lib/ir/parse.c), and its operands and attributes are checked against its
 * row, so a new instruction kind never touches this file. The modifier and
 * the bracketed positional list are the shape of the seed design's legacy
 * spellings (`pool max [3 3 0]`, `convolution [5 1 2 16]`); which names,
 * modifiers and fields they take is data (lib/ir/Legacy.def). Types are
 * single TYPE tokens (the lexer matches `elem[...]<...>`), decoded in
 * parse_type.c.
 *
 * The semantic actions are one-line calls into parse.c (prefix gir_p_),
 * which builds the module through the builder API and reports semantic
 * errors. Lists accumulate in vectors of the parser state, reused across
 * statements, so semantic values own no memory.
 *
 * Error recovery: after a syntax or lexical error the lexer skips to the
 * start of the next line and emits SYNC; `error SYNC` resynchronizes at the
 * declaration or instruction, so one run reports several errors.
 */

%define api.pure full
%define api.prefix {gir_yy}
%define api.token.prefix {GIR_}
%define api.location.type {struct loc}
%define parse.error custom
%define parse.lac full
%locations
%param {struct gir_parser *p}

%code requires {
#include "ir/ir.h"
#include "support/textread.h"
#include "support/vec.h"

#include <stdbool.h>
#include <stdint.h>

enum { GIR_RECENT = 64, GIR_HEX_FAST = 64 };

/* An operand as written; val NULL after an error (already reported). */
struct gir_op {
	struct ir_value *val;
	unsigned qual;
	struct loc loc;
};

enum gir_aval { GA_NUM, GA_BOOL, GA_STR, GA_IDENT, GA_LIST };

/* An attribute as written; checked against the kind when the statement ends. */
struct gir_attr {
	struct tp_span name;
	struct loc loc, vloc;
	enum gir_aval vk;
	struct tp_num num;     /* GA_NUM; GA_BOOL: i */
	struct tp_span str;    /* GA_STR, GA_IDENT */
	uint32_t start, n;      /* GA_LIST: into nums */
};

/* The parser state. Everything the lexer and the actions share lives here. */
struct gir_parser {
	struct tp_reader r; /* the lexer, diagnostics, scratch (support/textread.h) */
	struct type_ctx *types;
	struct ir_module *m;
	struct ir_func *f; /* NULL when the function header failed */

	struct strmap poison; /* names whose definition failed (keys in the arena) */
	/* the function's scope while it is read (its own name table stays
	 * deferred, see ir_func_defer_names): open addressing over the defined
	 * values, each entry a pointer with the top bits of its name's hash in
	 * the pointer's unused high bits (parse.c) */
	struct gir_scope {
		uint64_t *tab;
		size_t cap, len;
		bool untagged; /* a pointer used the high bits: entries are plain */
	} scope;
	/* operands mostly name buffers defined a few lines up: a direct-mapped
	 * cache of recent names (by hash) in front of the scope */
	struct tp_recent recent[GIR_RECENT];
	/* integer lists set lately (attribute arrays are immutable once set, so
	 * equal lists share one copy: [1, 1], [0, 0, 0, 0] ...) */
	struct gir_ints {
		const int64_t *v;
		uint32_t n;
	} ints_cache[16];

	/* the statement being parsed */
	bool has_name;
	struct tp_span name;
	uint64_t name_hash;   /* of the name's key (after name_free, or early) */
	bool name_hashed;     /* name_hash is known */
	struct loc name_loc;
	int mut; /* weight: 0 unspecified, 1 mutable, 2 constant */
	struct tp_init init;
	struct tp_num num; /* the last `number` (read by the rule using it) */
	bool has_mod, has_pos;
	struct tp_span mod, type;
	struct loc mod_loc, pos_loc, type_loc;
	VEC(int64_t) pos;
	VEC(struct gir_op) ops;
	VEC(struct gir_attr) attrs;
	VEC(struct tp_num) nums;
	VEC(int64_t) ti; /* scratch for list attributes */
	/* the open blocks, innermost last: whether each one's opening
	 * instruction was built (after an error in it, its else and end are
	 * not: the module is dropped anyway) */
	VEC(bool) blocks;
	bool has_else;        /* the if just read had an else block ... */
	struct loc else_close; /* ... closed here */
	VEC(double) tf;
};
}

%code provides {
int gir_yylex(GIR_YYSTYPE *lval, struct loc *lloc, struct gir_parser *p);
int gir_yyparse(struct gir_parser *p);

/* Reports an error at a location and counts it. */
#define gir_p_error(p, ...) tp_error(&(p)->r, __VA_ARGS__)
void gir_p_syntax_error(struct gir_parser *p, struct loc loc, const char *const *expected, int nexp);
void gir_p_recovered(struct gir_parser *p);
void gir_p_func_begin(struct gir_parser *p, const struct tp_span *name, struct loc loc);
void gir_p_memory(struct gir_parser *p, struct loc loc);
void gir_p_program_begin(struct gir_parser *p);
void gir_p_stmt_begin(struct gir_parser *p, const struct tp_span *name, struct loc loc);
void gir_p_weight(struct gir_parser *p, const struct tp_span *type, struct loc tloc);
void gir_p_instr(struct gir_parser *p, const struct tp_span *kind, struct loc kloc, const struct tp_span *type,
		 struct loc tloc);
void gir_p_block_open(struct gir_parser *p, unsigned kind, struct loc kloc);
void gir_p_block_else(struct gir_parser *p, struct loc loc);
void gir_p_block_end(struct gir_parser *p, struct loc loc);
void gir_p_operand(struct gir_parser *p, int qual, const struct tp_span *name, struct loc qloc, struct loc loc);
void gir_p_attr(struct gir_parser *p, const struct tp_span *name, struct loc loc);
void gir_p_attr_list(struct gir_parser *p, uint32_t start, struct loc loc);
}

%code {
/* Locations are points (the first token of a rule), not ranges. */
#define YYLLOC_DEFAULT(cur, rhs, n) ((cur) = (n) ? YYRHSLOC(rhs, 1) : YYRHSLOC(rhs, 0))

static void gir_yyerror(struct loc *loc, struct gir_parser *p, const char *msg)
{
	gir_p_error(p, *loc, "%s", msg);
}

/* The value of the attribute being parsed. */
#define AVAL (vec_last(&p->attrs))
}

/* 16 bytes: semantic values are copied on every shift and reduction, so a
 * number does not travel as one (see `number`). */
%union {
	struct tp_span span;
	int64_t i;
	double f;
	uint32_t u;
}

%token END 0 "end of file"
%token <span> LOCAL "local name"
%token <span> GLOBAL "global name"
%token <span> IDENT "identifier"
%token <span> STRING "string"
%token <span> TYPE "type"
%token <i> QUAL "qualifier"
%token <i> INT "integer"
%token <f> FLOAT "number"
%token <span> KW_FUNCTION "'function'"
%token <span> KW_MEMORY "'memory'"
%token <span> KW_DECLARE "'declare'"
%token <span> KW_PROGRAM "'program'"
%token <span> KW_WEIGHT "'weight'"
%token <span> KW_MUTABLE "'mutable'"
%token <span> KW_CONSTANT "'constant'"
%token <span> KW_DENSE "'dense'"
%token <span> KW_SPLAT "'splat'"
%token <span> KW_BROADCAST "'broadcast'"
%token <span> KW_ZERO "'zero'"
%token <span> KW_XAVIER "'xavier'"
%token <span> KW_SEED "'seed'"
%token <span> KW_FILE "'file'"
%token <span> KW_OFFSET "'offset'"
%token <span> KW_IF "'if'"
%token <span> KW_ELSE "'else'"
%token <span> KW_LOOP "'loop'"
%token <span> KW_TRUE "'true'"
%token <span> KW_FALSE "'false'"
%token SYNC "end of line"

%type <span> anyident kind
%type <u> list_start

%%

/* module ::= function* */
file
	: funcs
	;

funcs
	: %empty
	| funcs func
	| funcs error SYNC { yyerrok; gir_p_recovered(p); }
	;

/* function ::= ('function' GLOBAL)? memory? declare program
 * (the header may be left out: the function is then @main) */
func
	: func_head memory_opt declare program
	;

func_head
	: %empty { gir_p_func_begin(p, NULL, @$); }
	| KW_FUNCTION GLOBAL { gir_p_func_begin(p, &$2, @2); }
	;

/* memory ::= 'memory' attrs */
memory_opt
	: %empty
	| KW_MEMORY { vec_clear(&p->attrs); vec_clear(&p->nums); } attrs { gir_p_memory(p, @1); }
	;

/* declare ::= 'declare' '{' weight* '}' */
declare
	: KW_DECLARE '{' decls '}'
	;

decls
	: %empty
	| decls decl
	| decls error SYNC { yyerrok; gir_p_recovered(p); }
	;

/* weight ::= LOCAL '=' 'weight' ('mutable' | 'constant')? TYPE (',' init)? attrs? */
decl
	: LOCAL '=' { gir_p_stmt_begin(p, &$1, @1); } KW_WEIGHT mut TYPE init_opt attrs_opt { gir_p_weight(p, &$6, @6); }
	;

mut
	: %empty { p->mut = 0; }
	| KW_MUTABLE { p->mut = 1; }
	| KW_CONSTANT { p->mut = 2; }
	;

init_opt
	: %empty { p->init.kind = IR_INIT_NONE; }
	| ',' init
	;

/* init ::= 'dense' STRING | 'splat' number | 'zero' | 'xavier' number ('seed' INT)?
 *        | 'file' STRING ('offset' INT)?
 *        | 'broadcast' ',' number | 'xavier' ',' number     (legacy) */
init
	: KW_DENSE STRING { p->init.kind = INIT_DENSE; p->init.str = $2; p->init.str_loc = @2; p->init.loc = @1; }
	| KW_SPLAT number { p->init.kind = INIT_SPLAT; p->init.num = p->num; p->init.loc = @1; }
	| KW_SPLAT KW_TRUE { p->init.kind = INIT_SPLAT; p->init.num = (struct tp_num){1, 1, true, @2}; p->init.is_bool = true; p->init.loc = @1; }
	| KW_SPLAT KW_FALSE { p->init.kind = INIT_SPLAT; p->init.num = (struct tp_num){0, 0, true, @2}; p->init.is_bool = true; p->init.loc = @1; }
	| KW_BROADCAST ',' number { p->init.kind = INIT_SPLAT; p->init.num = p->num; p->init.loc = @1; }
	| KW_ZERO { p->init.kind = INIT_ZERO; p->init.loc = @1; }
	| KW_XAVIER number seed { p->init.kind = INIT_XAVIER; p->init.num = p->num; p->init.loc = p->init.seed_loc = @1; }
	| KW_XAVIER ',' number { p->init.kind = INIT_XAVIER; p->init.num = p->num; p->init.seed = 0; p->init.loc = p->init.seed_loc = @1; }
	| KW_FILE STRING offset { p->init.kind = INIT_FILE; p->init.str = $2; p->init.str_loc = @2; p->init.loc = p->init.offset_loc = @1; }
	;

seed
	: %empty { p->init.seed = 0; }
	| KW_SEED INT { p->init.seed = $2; }
	;

offset
	: %empty { p->init.offset = 0; }
	| KW_OFFSET INT { p->init.offset = $2; }
	;

/* program ::= 'program' '{' instr* '}' */
program
	: KW_PROGRAM '{' { gir_p_program_begin(p); } instrs '}'
	;

instrs
	: %empty
	| instrs instr
	| instrs error SYNC { yyerrok; gir_p_recovered(p); }
	;

/* instr ::= (LOCAL '=')? kind tail
 *         | (LOCAL '=')? 'if' operands block ('else' block)?
 *         | (LOCAL '=')? 'loop' operands block
 * block ::= '{' instr* '}'
 * The opening instruction is built at its '{', so the block's instructions
 * follow it in the list; 'else' and the closing '}' are instructions too
 * (Instrs.def: else, end). */
instr
	: instr_name kind tail_typed { gir_p_instr(p, &$2, @2, &p->type, p->type_loc); }
	| instr_name kind tail { gir_p_instr(p, &$2, @2, NULL, @2); }
	| instr_name KW_IF operands '{' { gir_p_block_open(p, IK_if, @2); } instrs '}' else_opt { gir_p_block_end(p, p->has_else ? p->else_close : @7); }
	| instr_name KW_LOOP operands '{' { gir_p_block_open(p, IK_loop, @2); } instrs '}' { gir_p_block_end(p, @7); }
	;

else_opt
	: %empty { p->has_else = false; }
	| KW_ELSE '{' { gir_p_block_else(p, @1); } instrs '}' { p->has_else = true; p->else_close = @5; }
	;

instr_name
	: %empty { gir_p_stmt_begin(p, NULL, @$); }
	| LOCAL '=' { gir_p_stmt_begin(p, &$1, @1); }
	;

/* kinds that are also initializer keywords */
kind
	: IDENT
	| KW_SPLAT
	| KW_BROADCAST
	;

tail_typed
	: TYPE { p->type = $1; p->type_loc = @1; } operands_opt attrs_opt
	;

/* a legacy modifier (`pool max`) and positional list: Legacy.def */
tail
	: IDENT bracket { p->has_mod = true; p->mod = $1; p->mod_loc = @1; } operands attrs_opt
	| bracket operands attrs_opt
	| operands attrs_opt
	;

/* the legacy positional attribute list: '[' INT* ']' (fields: Legacy.def) */
bracket
	: '[' { p->has_pos = true; p->pos_loc = @1; } ints ']'
	;

ints
	: %empty
	| ints INT { vec_push(&p->pos, $2); }
	;

operands_opt
	: %empty
	| operands
	;

operands
	: operand
	| operands ',' operand
	;

/* operand ::= QUAL LOCAL */
operand
	: QUAL LOCAL { gir_p_operand(p, (int)$1, &$2, @1, @2); }
	;

attrs_opt
	: %empty
	| attrs
	;

attrs
	: '{' '}'
	| '{' attr_list '}'
	;

attr_list
	: attr
	| attr_list ',' attr
	;

attr
	: anyident '=' { gir_p_attr(p, &$1, @1); } attrval
	;

/* attrval ::= number | 'true' | 'false' | STRING | IDENT | '[' numbers? ']' */
attrval
	: number { AVAL.vk = GA_NUM; AVAL.num = p->num; AVAL.vloc = @1; }
	| KW_TRUE { AVAL.vk = GA_BOOL; AVAL.num.i = 1; AVAL.vloc = @1; }
	| KW_FALSE { AVAL.vk = GA_BOOL; AVAL.num.i = 0; AVAL.vloc = @1; }
	| STRING { AVAL.vk = GA_STR; AVAL.str = $1; AVAL.vloc = @1; }
	| anyident { AVAL.vk = GA_IDENT; AVAL.str = $1; AVAL.vloc = @1; }
	| '[' list_start numbers_opt ']' { gir_p_attr_list(p, $2, @1); }
	;

list_start
	: %empty { $$ = (uint32_t)p->nums.len; }
	;

numbers_opt
	: %empty
	| numbers
	;

numbers
	: number { vec_push(&p->nums, p->num); }
	| numbers ',' number { vec_push(&p->nums, p->num); }
	;

/* Sets p->num, which the rule that contains the number reads when it is
 * reduced, before any other number can be. */
number
	: INT { p->num = (struct tp_num){(double)$1, $1, true, @1}; }
	| FLOAT { p->num = (struct tp_num){$1, 0, false, @1}; }
	;

/* Attribute names and enum values: identifiers, keywords included. */
anyident
	: IDENT | KW_FUNCTION | KW_MEMORY | KW_DECLARE | KW_PROGRAM | KW_WEIGHT
	| KW_MUTABLE | KW_CONSTANT | KW_DENSE | KW_SPLAT | KW_BROADCAST | KW_ZERO
	| KW_XAVIER | KW_SEED | KW_FILE | KW_OFFSET | KW_IF | KW_ELSE | KW_LOOP
	;

%%

/* Reports a syntax error with the expected tokens by name. */
static int yyreport_syntax_error(const yypcontext_t *ctx, struct gir_parser *p)
{
	enum { MAXEXP = 10 };
	yysymbol_kind_t exp[MAXEXP];
	int n = yypcontext_expected_tokens(ctx, exp, MAXEXP);
	int total = yypcontext_expected_tokens(ctx, NULL, 0);
	const char *names[MAXEXP];
	if (n < 0 || total > MAXEXP)
		n = 0;
	for (int i = 0; i < n; i++)
		names[i] = yysymbol_name(exp[i]);
	gir_p_syntax_error(p, *yypcontext_location(ctx), names, n);
	return 0;
}
