/* glow.y - the grammar of the graph IR text format (docs/GraphIR.md).
 *
 * Design: the grammar is generic. A statement is
 *   (('let')? %name '=')? Kind '(' operands ')' {attrs}? (predicate value)? (':' types)?
 * for every node kind, followed by its regions when the kind has any
 * (If: 'then' '{' stmt* '}' 'else' '{' stmt* '}'; Loop: 'body' '(' params
 * ')' '{' stmt* '}'; actions in parse_region.c), and an operand may itself
 * be a nested expression
 * Kind '(' operands ')' {attrs}? ':' type, which covers the three text forms
 * (ANF, GNF, BBNF: docs/GraphIR.md; actions in parse_forms.c) as well as the
 * default one; `attributes {key = value, ...}` at top level holds module
 * attributes. Kind, element kind, attribute and enum names are plain
 * identifiers looked up in the tables at run time (lib/graph/parse.c), so a
 * new node kind never touches this file.
 *
 * The semantic actions are one-line calls into parse.c (prefix glow_p_),
 * which builds the module through the builder API and reports semantic
 * errors. Lists (operands, dimensions, attributes, numbers) accumulate in
 * vectors of the parser state that are reused across statements, so semantic
 * values are small and own no memory (no %destructor needed).
 *
 * Error recovery: after a syntax error (or a lexical error, which the lexer
 * signals with YYerror) the lexer skips to the start of the next statement
 * line and emits SYNC; `error SYNC` resynchronizes at the statement or
 * top-level declaration, so one run reports several errors.
 */

%define api.pure full
%define api.prefix {glow_yy}
%define api.token.prefix {GT_}
%define api.location.type {struct loc}
%define parse.error custom
%define parse.lac full
%locations
%param {struct glow_parser *p}

%code requires {
#include "graph/graph.h"
#include "support/textread.h"
#include "support/vec.h"

#include <stdbool.h>
#include <stdint.h>

/* A resolved operand; node NULL after an error (already reported). */
struct glow_val {
	struct node *node;
	uint32_t res;
	struct loc loc;
};

/* An attribute of the statement being parsed, checked against its kind. */
struct glow_pattr {
	int idx; /* in node_desc(kind)->attrs */
	struct loc loc;
	union {
		int64_t i;
		double f;
		struct tp_span s;
		struct {
			uint32_t start, n; /* into ints or floats */
		} list;
	} u;
};

enum { GLOW_RECENT = 1024, GLOW_TCACHE = 64 }; /* powers of two */

/* glow_p_global's value for the first operand of Call(@f, ...): the name
 * of the function called, which becomes the callee attribute. */
#define GLOW_CALLEE UINT32_MAX

/* A Call's callee as written, checked when the whole module is read
 * (parse_call.c), and a parameter of the function literal being read. */
struct glow_callref {
	const char *name; /* in the module's arena */
	struct loc loc;
};
struct glow_fnparam {
	struct tp_span name; /* a copy in the module's arena */
	struct loc loc;
	const struct type *t;
};

/* A statement whose regions are being read (parse_region.c). */
struct glow_region_frame {
	struct node *owner;  /* NULL: the statement failed or has no regions */
	int kind;            /* the statement's kind, -1 if unknown */
	struct func *outer;  /* the scope the statement is in */
	unsigned next;       /* the index of the next region expected */
	struct loc kind_loc; /* the statement's kind, for messages */
};

/* The parser state: the reader shell, module under construction, scratch
 * vectors. Everything the lexer and the actions share lives here. */
struct glow_parser {
	struct tp_reader r; /* the lexer, diagnostics, scratch (support/textread.h) */
	int decl_tok;       /* last top-level keyword seen */
	bool in_func;

	struct type_ctx *types;
	struct module *m;
	struct func *f; /* NULL outside functions or when the header failed */

	/* names whose definition failed: uses are silently bad (no cascades) */
	struct strmap gpoison, lpoison;
	struct tp_recent recent[GLOW_RECENT]; /* recently defined or used nodes */
	const struct type *tcache[GLOW_TCACHE]; /* recent types (parse.c: glow_p_type) */

	/* the type being parsed */
	struct loc type_lt; /* its '<' when lexed as one TYPE token */
	uint64_t dims[GLOW_MAX_RANK];
	unsigned ndims;
	bool dims_bad;
	bool q_has;
	struct tp_num q_scale, q_off;
	struct loc q_loc;

	/* the declaration being parsed */
	unsigned ph_flags;
	struct tp_init init;

	/* the statement being parsed */
	int kind; /* -1: unknown */
	bool bad;
	bool has_name;
	struct tp_span name;
	uint64_t name_hash;
	struct loc name_loc, kind_loc, pred_loc, types_loc;
	struct glow_val pred;
	bool has_pred, has_types;
	/* lowered_from "name"#res (the lowered-info map, graph/lowered.h) */
	bool has_lowered;
	struct tp_span lowered_name;
	int64_t lowered_res;
	struct loc lowered_loc;
	int cur_attr; /* -1: unknown attribute (already reported) */
	struct loc cur_attr_loc;
	bool stmt_open;
	VEC(struct value) ops;
	VEC(struct loc) oplocs;
	VEC(const struct type *) tys;
	VEC(struct loc) tylocs;
	VEC(struct glow_pattr) attrs;
	VEC(int64_t) ints;
	VEC(double) floats;
	VEC(struct tp_num) nums; /* the list being parsed */
	/* module attributes and nested expressions (parse_forms.c); NULL until
	 * used. With its state the forms' reader installs the two things the
	 * reader's shell (parse.c) asks of it, so that parse.c needs no
	 * knowledge of the forms: fx_retry (a statement's name is taken by a
	 * value the reader named: move that value aside and create the
	 * statement's node; NULL: a redefinition) and fx_free (frees fx). */
	struct glow_forms *fx;
	struct node *(*fx_retry)(struct glow_parser *p, const char *name, size_t len, struct value pred);
	void (*fx_free)(struct glow_parser *p);
	/* control-flow regions (parse_region.c): the open statements that own
	 * regions, innermost last; the names of the nodes of regions already
	 * closed (out of scope for everything after them) */
	struct node *stmt_node;  /* the node the last statement built, NULL if none */
	bool frame_pushed;       /* the innermost frame is the current statement's */
	VEC(struct glow_region_frame) frames;
	struct strmap closed;
	bool any_closed;
	/* function calls (parse_call.c): the callees named so far; the
	 * parameters of the function literal being read and its 'fn' */
	VEC(struct glow_callref) callrefs;
	VEC(struct glow_fnparam) fnparams;
	struct loc fn_loc;
	/* set by parse_call.c once used, called by parse.c when the text has
	 * been read: checks the callees (check: the text parsed) and frees */
	void (*calls_end)(struct glow_parser *p, bool check);
};
}

%code provides {
int glow_yylex(GLOW_YYSTYPE *lval, struct loc *lloc, struct glow_parser *p);
int glow_yyparse(struct glow_parser *p);

/* Reports an error at a location and counts it. */
#define glow_p_error(p, ...) tp_error(&(p)->r, __VA_ARGS__)
void glow_p_syntax_error(struct glow_parser *p, struct loc loc, const char *const *expected, int nexp);
void glow_p_recovered(struct glow_parser *p);
void glow_p_module(struct glow_parser *p, const struct tp_span *name, struct loc loc);
void glow_p_placeholder(struct glow_parser *p, const struct tp_span *name, struct loc loc,
			const struct type *t);
void glow_p_constant(struct glow_parser *p, const struct tp_span *name, struct loc loc,
		     const struct type *t, struct loc tloc);
void glow_p_func_begin(struct glow_parser *p, const struct tp_span *name, struct loc loc);
void glow_p_func_end(struct glow_parser *p);
void glow_p_stmt_begin(struct glow_parser *p, const struct tp_span *name, struct loc loc);
void glow_p_kind(struct glow_parser *p, const struct tp_span *name, struct loc loc);
struct glow_val glow_p_local(struct glow_parser *p, const struct tp_span *name, struct loc loc, bool has_res,
			     int64_t res, struct loc resloc);
struct glow_val glow_p_global(struct glow_parser *p, const struct tp_span *name, struct loc loc);
void glow_p_operand(struct glow_parser *p, const struct glow_val *v);
void glow_p_pred(struct glow_parser *p, const struct glow_val *v, struct loc loc);
void glow_p_lowered(struct glow_parser *p, const struct tp_span *name, struct loc loc, int64_t res, struct loc resloc);
void glow_p_attr_name(struct glow_parser *p, const struct tp_span *name, struct loc loc);
void glow_p_attr_num(struct glow_parser *p, const struct tp_num *v);
void glow_p_attr_bool(struct glow_parser *p, int v, struct loc loc);
void glow_p_attr_str(struct glow_parser *p, const struct tp_span *s, struct loc loc);
void glow_p_attr_enum(struct glow_parser *p, const struct tp_span *s, struct loc loc);
void glow_p_attr_list(struct glow_parser *p, struct loc loc);
void glow_p_restype(struct glow_parser *p, const struct type *t, struct loc loc);
void glow_p_node(struct glow_parser *p, struct loc rparen);
void glow_p_dim(struct glow_parser *p, int64_t d, struct loc loc);
const struct type *glow_p_type(struct glow_parser *p, const struct tp_span *elem, struct loc loc,
			       struct loc lt);
/* parse_forms.c: module attributes, `let`, nested expressions */
void glow_p_mattr_name(struct glow_parser *p, const struct tp_span *key, struct loc loc);
void glow_p_mattr_num(struct glow_parser *p, const struct tp_num *v);
void glow_p_mattr_bool(struct glow_parser *p, int b, struct loc loc);
void glow_p_mattr_str(struct glow_parser *p, const struct tp_span *s, struct loc loc);
void glow_p_mattr_list(struct glow_parser *p, bool begin, struct loc loc);
void glow_p_mattr_end(struct glow_parser *p);
int glow_p_nest_begin(struct glow_parser *p, const struct tp_span *kind, struct loc loc);
struct glow_val glow_p_nest_end(struct glow_parser *p, struct loc rparen, const struct type *t, struct loc tloc);
void glow_p_forms_reset(struct glow_parser *p);
/* parse_region.c: regions of If and Loop */
void glow_p_region_begin(struct glow_parser *p, const struct tp_span *kw, struct loc loc);
void glow_p_region_param(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t);
void glow_p_region_end(struct glow_parser *p);
void glow_p_regions_end(struct glow_parser *p, bool any);
bool glow_p_scope_check(struct glow_parser *p, struct node *n, const struct tp_span *name, struct loc loc);
void glow_p_regions_free(struct glow_parser *p);
/* parse_call.c: signatures of module functions, function literals, callees */
void glow_p_func_sig(struct glow_parser *p);
void glow_p_fn_begin(struct glow_parser *p, struct loc loc);
void glow_p_fn_param(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t);
void glow_p_fn_sig(struct glow_parser *p, struct loc lbrace);
void glow_p_fn_bad(struct glow_parser *p, struct loc fn);
void glow_p_fn_end(struct glow_parser *p);
struct glow_val glow_p_global_operand(struct glow_parser *p, const struct tp_span *name, struct loc loc);
}

%code {
/* Locations are points (the first token of a rule), not ranges. */
#define YYLLOC_DEFAULT(cur, rhs, n) ((cur) = (n) ? YYRHSLOC(rhs, 1) : YYRHSLOC(rhs, 0))

static void glow_yyerror(struct loc *loc, struct glow_parser *p, const char *msg)
{
	glow_p_error(p, *loc, "%s", msg);
}
}

%union {
	struct tp_span span;
	int64_t i;
	double f;
	struct tp_num num;
	struct glow_val val;
	const struct type *ty;
}

%token END 0 "end of file"
%token <span> LOCAL "local name"
%token <span> GLOBAL "global name"
%token <span> IDENT "identifier"
%token <span> STRING "string"
%token <i> INT "integer"
%token <i> DIMX "dimension"
%token <f> FLOAT "number"
%token <span> KW_MODULE "'module'"
%token <span> KW_PLACEHOLDER "'placeholder'"
%token <span> KW_CONSTANT "'constant'"
%token <span> KW_FUNC "'func'"
%token <span> KW_TRAINABLE "'trainable'"
%token <span> KW_STATIC "'static'"
%token <span> KW_DENSE "'dense'"
%token <span> KW_SPLAT "'splat'"
%token <span> KW_ZERO "'zero'"
%token <span> KW_XAVIER "'xavier'"
%token <span> KW_SEED "'seed'"
%token <span> KW_FILE "'file'"
%token <span> KW_OFFSET "'offset'"
%token <span> KW_TRUE "'true'"
%token <span> KW_FALSE "'false'"
%token <span> KW_PREDICATE "'predicate'"
%token <span> KW_X "'x'"
%token <span> KW_LET "'let'"
%token <span> KW_ATTRIBUTES "'attributes'"
%token <span> KW_LOWERED_FROM "'lowered_from'"
%token <span> KW_THEN "'then'"
%token <span> KW_ELSE "'else'"
%token <span> KW_BODY "'body'"
%token <span> KW_FN "'fn'"
%token ARROW "'->'"
%token <span> TYPE "type"
%token SYNC "end of line"

%type <num> number
%type <val> value
%type <ty> type
%type <span> anyident region_kw

%%

/* module ::= ('module' GLOBAL)? toplevel* */
file
	: module_decl toplevels
	;

module_decl
	: %empty
	| KW_MODULE GLOBAL { glow_p_module(p, &$2, @2); }
	;

toplevels
	: %empty
	| toplevels toplevel
	;

toplevel
	: placeholder
	| constant
	| func
	| attributes
	| error SYNC { yyerrok; glow_p_forms_reset(p); glow_p_recovered(p); }
	;
/* attributes ::= 'attributes' '{' (mattr (',' mattr)*)? '}'
 * mattr ::= (anyident | STRING) '=' (scalar | '[' (scalar (',' scalar)*)? ']') */
attributes
	: KW_ATTRIBUTES '{' mattrs_opt '}'
	;
mattrs_opt
	: %empty
	| mattrs
	;
mattrs
	: mattr
	| mattrs ',' mattr
	;
mattr
	: mattr_name mval { glow_p_mattr_end(p); }
	;
mattr_name
	: anyident '=' { glow_p_mattr_name(p, &$1, @1); }
	| STRING '=' { glow_p_mattr_name(p, &$1, @1); }
	;
mval
	: mscalar
	| '[' { glow_p_mattr_list(p, true, @1); } mscalars_opt ']' { glow_p_mattr_list(p, false, @1); }
	;
mscalars_opt
	: %empty
	| mscalars
	;
mscalars
	: mscalar
	| mscalars ',' mscalar
	;
mscalar
	: number { glow_p_mattr_num(p, &$1); }
	| KW_TRUE { glow_p_mattr_bool(p, 1, @1); }
	| KW_FALSE { glow_p_mattr_bool(p, 0, @1); }
	| STRING { glow_p_mattr_str(p, &$1, @1); }
	;

/* placeholder ::= 'placeholder' GLOBAL ':' type ('trainable' | 'static')* */
placeholder
	: KW_PLACEHOLDER GLOBAL ':' type pflags { glow_p_placeholder(p, &$2, @2, $4); }
	;

pflags
	: %empty { p->ph_flags = 0; }
	| pflags KW_TRAINABLE { p->ph_flags |= 1; }
	| pflags KW_STATIC { p->ph_flags |= 2; }
	;

/* constant ::= 'constant' GLOBAL ':' type '=' init */
constant
	: KW_CONSTANT GLOBAL ':' type '=' init { glow_p_constant(p, &$2, @2, $4, @4); }
	;

init
	: KW_DENSE STRING
		{ p->init.kind = INIT_DENSE; p->init.str = $2; p->init.str_loc = @2; }
	| KW_SPLAT number
		{ p->init.kind = INIT_SPLAT; p->init.num = $2; p->init.is_bool = 0; }
	| KW_SPLAT KW_TRUE
		{ p->init.kind = INIT_SPLAT; p->init.num = (struct tp_num){1, 1, true, @2}; p->init.is_bool = 1; }
	| KW_SPLAT KW_FALSE
		{ p->init.kind = INIT_SPLAT; p->init.num = (struct tp_num){0, 0, true, @2}; p->init.is_bool = 1; }
	| KW_ZERO
		{ p->init.kind = INIT_ZERO; }
	| KW_XAVIER number seed
		{ p->init.kind = INIT_XAVIER; p->init.num = $2; }
	| KW_FILE STRING offset
		{ p->init.kind = INIT_FILE; p->init.str = $2; p->init.str_loc = @2; }
	;

seed
	: %empty { p->init.seed = 0; p->init.seed_loc = LOC_NONE; }
	| KW_SEED INT { p->init.seed = $2; p->init.seed_loc = @2; }
	;

offset
	: %empty { p->init.offset = 0; p->init.offset_loc = LOC_NONE; }
	| KW_OFFSET INT { p->init.offset = $2; p->init.offset_loc = @2; }
	;

/* func ::= 'func' GLOBAL sig? '{' stmt* '}'
 * sig  ::= '(' (param (',' param)*)? ')' '->' type (',' type)*
 * (a function with a signature: parse_call.c) */
func
	: func_head stmts '}' { glow_p_func_end(p); }
	;

func_head
	: func_name '{'
	| func_name func_params ARROW types '{' { glow_p_func_sig(p); }
	| func_name error SYNC { yyerrok; glow_p_recovered(p); } /* a bad header: its body still reads */
	;

func_params
	: '(' ')'
	| '(' rparams ')'
	;

func_name
	: KW_FUNC GLOBAL { glow_p_func_begin(p, &$2, @2); }
	;

stmts
	: %empty
	| stmts stmt
	;

/* stmt ::= (LOCAL '=')? KIND '(' operands? ')' attrs? ('predicate' value)? (':' type (',' type)*)?
 *          ('lowered_from' STRING ('#' INT)?)? */
stmt
	: stmt_head regions_opt
	| fn_head stmts '}' { glow_p_fn_end(p); }
	| error SYNC { yyerrok; glow_p_forms_reset(p); glow_p_recovered(p); }
	;

/* A function literal: ('let')? LOCAL '=' 'fn' sig '{' stmt* '}', the Fn
 * node and its body region (parse_call.c) */
fn_head
	: fn_name KW_FN '(' { glow_p_fn_begin(p, @2); } fparams_opt ')' ARROW types '{' { glow_p_fn_sig(p, @9); }
	| fn_name KW_FN error SYNC { yyerrok; glow_p_fn_bad(p, @2); } /* its body reads into nothing */
	;

fn_name
	: LOCAL '=' { glow_p_stmt_begin(p, &$1, @1); }
	| KW_LET LOCAL '=' { glow_p_stmt_begin(p, &$2, @2); }
	;

fparams_opt
	: %empty
	| fparams
	;

fparams
	: fparam
	| fparams ',' fparam
	;

fparam
	: LOCAL ':' type { glow_p_fn_param(p, &$1, @1, $3); }
	;

stmt_head
	: stmt_name kind operands_opt ')' attrs_opt pred_opt types_opt lowered_opt { glow_p_node(p, @4); }
	;

/* regions ::= region+ ; region ::= ('then' | 'else' | 'body') ('(' params? ')')? '{' stmt* '}'
 * param ::= LOCAL ':' type. Which regions a kind has, in which order, is
 * the region table's (lib/graph/region.c); parse_region.c checks it. */
regions_opt
	: %empty { if (p->frame_pushed) glow_p_regions_end(p, false); }
	| regions { glow_p_regions_end(p, true); }
	;

regions
	: region
	| regions region
	;

region
	: region_kw { glow_p_region_begin(p, &$1, @1); } rparams_opt '{' stmts '}' { glow_p_region_end(p); }
	;

region_kw
	: KW_THEN | KW_ELSE | KW_BODY
	;

rparams_opt
	: %empty
	| '(' ')'
	| '(' rparams ')'
	;

rparams
	: rparam
	| rparams ',' rparam
	;

rparam
	: LOCAL ':' type { glow_p_region_param(p, &$1, @1, $3); }
	;

stmt_name
	: %empty { glow_p_stmt_begin(p, NULL, @$); }
	| LOCAL '=' { glow_p_stmt_begin(p, &$1, @1); }
	| KW_LET LOCAL '=' { glow_p_stmt_begin(p, &$2, @2); }
	;

/* the kind is looked up once its '(' is seen, so a stray word is one syntax error */
kind
	: IDENT '(' { glow_p_kind(p, &$1, @1); }
	;

operands_opt
	: %empty
	| operands
	;

operands
	: value { glow_p_operand(p, &$1); }
	| operands ',' value { glow_p_operand(p, &$3); }
	;

/* value ::= LOCAL ('#' INT)? | GLOBAL | nested
 * nested ::= KIND '(' operands? ')' attrs? ':' type  (GNF, BBNF: a value
 * with one use written in its user; one result, no predicate) */
value
	: LOCAL { $$ = glow_p_local(p, &$1, @1, false, 0, @1); }
	| LOCAL '#' INT { $$ = glow_p_local(p, &$1, @1, true, $3, @3); }
	| GLOBAL { $$ = glow_p_global_operand(p, &$1, @1); }
	| nest_kind operands_opt ')' attrs_opt ':' type { $$ = glow_p_nest_end(p, @3, $6, @6); }
	;
nest_kind
	: IDENT '(' { if (glow_p_nest_begin(p, &$1, @1)) YYABORT; }
	;

attrs_opt
	: %empty
	| '{' '}'
	| '{' attrs '}'
	;

attrs
	: attr
	| attrs ',' attr
	;

attr
	: attr_name attrval
	;

attr_name
	: anyident '=' { glow_p_attr_name(p, &$1, @1); }
	;

/* attrval ::= INT | FLOAT | 'true' | 'false' | STRING | IDENT | '[' numbers? ']' */
attrval
	: number { glow_p_attr_num(p, &$1); }
	| KW_TRUE { glow_p_attr_bool(p, 1, @1); }
	| KW_FALSE { glow_p_attr_bool(p, 0, @1); }
	| STRING { glow_p_attr_str(p, &$1, @1); }
	| anyident { glow_p_attr_enum(p, &$1, @1); }
	| '[' numbers_opt ']' { glow_p_attr_list(p, @1); }
	;

numbers_opt
	: %empty
	| numbers
	;

numbers
	: number { vec_push(&p->nums, $1); }
	| numbers ',' number { vec_push(&p->nums, $3); }
	;

number
	: INT { $$ = (struct tp_num){(double)$1, $1, true, @1}; }
	| FLOAT { $$ = (struct tp_num){$1, 0, false, @1}; }
	;

/* Attribute names and enum values: identifiers, keywords included. */
anyident
	: IDENT | KW_MODULE | KW_PLACEHOLDER
	| KW_CONSTANT | KW_FUNC
	| KW_TRAINABLE | KW_STATIC
	| KW_DENSE | KW_SPLAT
	| KW_ZERO | KW_XAVIER
	| KW_SEED | KW_FILE
	| KW_OFFSET | KW_PREDICATE
	| KW_X | KW_LET
	| KW_ATTRIBUTES | KW_LOWERED_FROM
	| KW_THEN | KW_ELSE | KW_BODY
	| KW_FN
	;

pred_opt
	: %empty { p->has_pred = false; }
	| KW_PREDICATE value { glow_p_pred(p, &$2, @2); }
	;

/* the lowered-info map's entry of the statement's node (docs/GraphIR.md) */
lowered_opt
	: %empty { p->has_lowered = false; }
	| KW_LOWERED_FROM STRING { glow_p_lowered(p, &$2, @2, 0, @2); }
	| KW_LOWERED_FROM STRING '#' INT { glow_p_lowered(p, &$2, @2, $4, @4); }
	;

types_opt
	: %empty { p->has_types = false; }
	| ':' types { p->has_types = true; }
	;

types
	: type { glow_p_restype(p, $1, @1); }
	| types ',' type { glow_p_restype(p, $3, @3); }
	;

/* type ::= elem-kind ('[' number ':' number ']')? '<' dims? '>'
 * A plain type where one is due ("float<16 x 16>" after ':' or after a
 * type and ','), is one TYPE token: the lexer has put its dimensions in
 * p->dims (glow.re: lex_type). */
type
	: TYPE { p->q_has = false; $$ = glow_p_type(p, &$1, @1, p->type_lt); }
	| IDENT quant '<' dims_opt '>' { $$ = glow_p_type(p, &$1, @1, @3); }
	;

quant
	: %empty { p->q_has = false; }
	| '[' number ':' number ']' { p->q_has = true; p->q_scale = $2; p->q_off = $4; p->q_loc = @1; }
	;

/* dims ::= INT ('x' INT)*, where "8x" (digits directly followed by x) is one DIMX token */
dims_opt
	: %empty
	| dims
	;

dims
	: INT { glow_p_dim(p, $1, @1); }
	| dimxs INT { glow_p_dim(p, $2, @2); }
	;

dimxs
	: dimx
	| dimxs dimx
	;

dimx
	: DIMX { glow_p_dim(p, $1, @1); }
	| INT KW_X { glow_p_dim(p, $1, @1); }
	;

%%

/* Reports a syntax error: the expected tokens by name, the unexpected one
 * from the lexer's record of the lookahead (parse.c words the message). */
static int yyreport_syntax_error(const yypcontext_t *ctx, struct glow_parser *p)
{
	enum { MAXEXP = 8 };
	yysymbol_kind_t exp[YYNTOKENS];
	const char *names[MAXEXP];
	int total = yypcontext_expected_tokens(ctx, exp, YYNTOKENS), n = 0;
	/* TYPE is expected exactly where "identifier" starts a type: the
	 * messages name only the latter. The region keywords may follow any
	 * statement: they are named only where nothing else may come. */
	bool regions_only = true;
	for (int i = 0; i < total; i++)
		regions_only &= exp[i] == YYSYMBOL_KW_THEN || exp[i] == YYSYMBOL_KW_ELSE || exp[i] == YYSYMBOL_KW_BODY;
	for (int i = 0; i < total; i++)
		if (exp[i] != YYSYMBOL_TYPE && (regions_only || (exp[i] != YYSYMBOL_KW_THEN && exp[i] != YYSYMBOL_KW_ELSE &&
								  exp[i] != YYSYMBOL_KW_BODY))) {
			if (n == MAXEXP) {
				n = -1;
				break;
			}
			names[n++] = yysymbol_name(exp[i]);
		}
	if (n < 0)
		n = 0;
	glow_p_syntax_error(p, *yypcontext_location(ctx), names, n);
	return 0;
}
