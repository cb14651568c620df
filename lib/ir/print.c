/* print.c - the canonical text of the instruction IR (docs/InstrIR.md).
 *
 * Functions in module order, separated by a blank line; in each the header,
 * the memory plan if one is recorded, the declare section (weights in
 * order) and the program (instructions in list order), two-space indented.
 * Attributes print in table order, those equal to their default left out;
 * floats as the shortest text that reads back bit-exactly; names quoted
 * exactly when they are not bare (the graph IR's rule). The printer never
 * changes the IR, so print(parse(t)) is a fixed point.
 */
#include "ir/ir.h"
#include "support/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ir_print_local(struct ostream *o, const char *name) { print_local_name(o, name); }

/* @name; the qualifier words are quoted so they do not read as @in/@out/@inout */
static void print_func_name(struct ostream *o, const char *name)
{
	if (strcmp(name, "in") == 0 || strcmp(name, "out") == 0 || strcmp(name, "inout") == 0) {
		os_puts(o, "@\"");
		os_puts(o, name);
		os_putc(o, '"');
		return;
	}
	print_global_name(o, name);
}

/* A string literal with the name escapes. */
static void print_string(struct ostream *o, const char *s) { os_quoted(o, s, strlen(s)); }

static bool attr_is_default(const struct attr_desc *a, const union attr_val *v)
{
	if (a->required)
		return false;
	switch (a->kind) {
	case AK_INT:
	case AK_BOOL:
	case AK_ENUM: return v->i == a->def_i;
	case AK_FLOAT: return memcmp(&v->f, &a->def_f, sizeof(double)) == 0;
	case AK_INTS:
		return v->ints.n == a->def_n && (a->def_n == 0 || memcmp(v->ints.v, a->def_ints, a->def_n * sizeof(int64_t)) == 0);
	case AK_FLOATS:
	case AK_STRING: return false;
	}
	return false;
}

static void print_attr_val(struct ostream *o, const struct attr_desc *a, const union attr_val *v)
{
	switch (a->kind) {
	case AK_INT: os_i64(o, v->i); break;
	case AK_FLOAT: os_double(o, v->f); break;
	case AK_BOOL: os_puts(o, v->i ? "true" : "false"); break;
	case AK_ENUM: {
		const char *s = a->enum_values;
		for (int64_t k = 0; k < v->i && s; k++) {
			s = strchr(s, '|');
			if (s)
				s++;
		}
		if (!s)
			s = "?";
		os_write(o, s, strcspn(s, "|"));
		break;
	}
	case AK_INTS: os_i64_list(o, v->ints.v, v->ints.n); break;
	case AK_FLOATS: os_double_list(o, v->floats.v, v->floats.n); break;
	case AK_STRING: print_string(o, v->s ? v->s : ""); break;
	}
}

/* " {offset = N}" when planned */
static void print_plan_offset(struct ostream *o, int64_t off)
{
	if (off < 0)
		return;
	os_puts(o, " {offset = ");
	os_i64(o, off);
	os_putc(o, '}');
}

void ir_weight_print(struct ostream *o, const struct ir_weight *w)
{
	const struct type *t = w->v.type;
	ir_print_local(o, w->v.name);
	os_puts(o, w->is_const ? " = weight constant " : " = weight mutable ");
	type_print(o, t);
	if (w->init != IR_INIT_NONE) {
		struct init_spec s = ir_weight_init_spec(w);
		os_write(o, ", ", 2);
		init_print(o, &s, t);
	}
	print_plan_offset(o, w->offset);
}

void ir_instr_print(struct ostream *o, const struct ir_instr *in)
{
	const struct instr_desc *d = instr_desc(in->kind);
	/* the brackets of blocks: `else` and `end` are braces only */
	if (d->flags & IF_BLOCK_ELSE) {
		os_puts(o, "} else {");
		return;
	}
	if (d->flags & IF_BLOCK_END) {
		os_putc(o, '}');
		return;
	}
	if (in->v.name) {
		ir_print_local(o, in->v.name);
		os_write(o, " = ", 3);
	}
	os_puts(o, d->name);
	if (in->v.type) {
		os_putc(o, ' ');
		type_print(o, in->v.type);
	}
	for (unsigned i = 0; i < in->nops; i++) {
		os_write(o, i ? ", @" : " @", i ? 3 : 2);
		os_puts(o, ir_qual_name(in->ops[i].qual));
		os_putc(o, ' ');
		ir_print_local(o, in->ops[i].val->name);
	}
	bool open = false;
	for (unsigned i = 0; i < d->nattrs; i++) {
		if (attr_is_default(&d->attrs[i], &in->attrs[i]))
			continue;
		os_write(o, open ? ", " : " {", 2);
		open = true;
		os_puts(o, d->attrs[i].name);
		os_write(o, " = ", 3);
		print_attr_val(o, &d->attrs[i], &in->attrs[i]);
	}
	if (in->kind == IK_alloc && in->offset >= 0) {
		os_write(o, open ? ", " : " {", 2);
		open = true;
		os_puts(o, "offset = ");
		os_i64(o, in->offset);
	}
	if (open)
		os_putc(o, '}');
	if (d->flags & IF_BLOCK_OPEN)
		os_write(o, " {", 2);
}

void ir_func_print(struct ostream *o, struct ir_func *f)
{
	os_puts(o, "function ");
	print_func_name(o, f->name);
	os_putc(o, '\n');
	if (f->plan.present)
		os_printf(o, "memory {constant = %llu, mutable = %llu, activations = %llu, alignment = %llu}\n",
			  (unsigned long long)f->plan.constant_size, (unsigned long long)f->plan.mutable_size,
			  (unsigned long long)f->plan.activations_size, (unsigned long long)f->plan.alignment);
	os_puts(o, "declare {\n");
	ir_for_each_weight(f, w) {
		os_write(o, "  ", 2);
		ir_weight_print(o, w);
		os_putc(o, '\n');
	}
	os_puts(o, "}\nprogram {\n");
	unsigned depth = 1; /* two spaces per level of blocks */
	ir_for_each_instr(f, in) {
		unsigned fl = instr_desc(in->kind)->flags;
		if ((fl & (IF_BLOCK_ELSE | IF_BLOCK_END)) && depth > 1)
			depth--;
		for (unsigned i = 0; i < depth; i++)
			os_write(o, "  ", 2);
		ir_instr_print(o, in);
		os_putc(o, '\n');
		if (fl & (IF_BLOCK_OPEN | IF_BLOCK_ELSE))
			depth++;
	}
	os_puts(o, "}\n");
}

void ir_module_print(struct ostream *o, struct ir_module *m)
{
	for (size_t i = 0; i < m->nfuncs; i++) {
		if (i)
			os_putc(o, '\n');
		ir_func_print(o, m->funcs[i]);
	}
}

int ir_module_rebase_files(struct ir_module *m, const char *out_path, struct diag *d)
{
	char *to = path_dir(out_path);
	int rc = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		ir_for_each_weight(m->funcs[i], w) {
			if (w->init != INIT_FILE || w->file[0] == '/')
				continue;
			const char *p = init_rebase_file(&m->arena, w->file, m->base_dir, to);
			if (!p) {
				diag_error(d, w->v.loc, "cannot locate weight file \"%s\" of weight %%%s: %s", w->file,
					   w->v.name, strerror(errno));
				rc = -1;
			} else {
				w->file = p;
			}
		}
	return init_rebase_end(&m->base_dir, to, rc);
}
