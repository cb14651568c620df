/* mattr.c - module attributes (forms.h).
 *
 * A module has few attributes (the form, a training configuration): a
 * sorted array in the module's arena, searched linearly. Replacing a value
 * leaves the old copy in the arena until the module dies, which is cheap
 * for values this small and keeps pointers a pass read still valid.
 */
#include "graph/forms.h"
#include "support/io.h"
#include "support/util.h"

#include <string.h>

static struct mattr *find(const struct module *m, const char *key)
{
	for (size_t i = 0; i < m->nattrs; i++)
		if (strcmp(m->attrs[i].key, key) == 0)
			return &m->attrs[i];
	return NULL;
}

const struct mattr_val *module_attr(const struct module *m, const char *key)
{
	struct mattr *a = find(m, key);
	return a ? &a->v : NULL;
}

/* A copy of scalar or list v in m's arena. */
static struct mattr_val copy_val(struct module *m, const struct mattr_val *v)
{
	struct mattr_val c = *v;
	if (v->kind == MA_STRING)
		c.s = arena_strdup(&m->arena, v->s ? v->s : "");
	if (v->kind == MA_LIST) {
		struct mattr_val *items = arena_alloc8(&m->arena, (v->n ? v->n : 1) * sizeof(*items));
		for (uint32_t i = 0; i < v->n; i++) {
			if (v->items[i].kind == MA_LIST)
				unreachable("nested list in a module attribute");
			items[i] = copy_val(m, &v->items[i]);
		}
		c.items = items;
	}
	return c;
}

void module_set_attr(struct module *m, const char *key, const struct mattr_val *v)
{
	struct mattr *a = find(m, key);
	if (a) {
		a->v = copy_val(m, v);
		return;
	}
	if (m->nattrs == m->capattrs) {
		size_t cap = m->capattrs ? 2 * m->capattrs : 4;
		struct mattr *na = arena_alloc8(&m->arena, cap * sizeof(*na));
		if (m->nattrs)
			memcpy(na, m->attrs, m->nattrs * sizeof(*na));
		m->attrs = na;
		m->capattrs = cap;
	}
	size_t at = 0;
	while (at < m->nattrs && strcmp(m->attrs[at].key, key) < 0)
		at++;
	memmove(&m->attrs[at + 1], &m->attrs[at], (m->nattrs - at) * sizeof(*m->attrs));
	m->attrs[at].key = arena_strdup(&m->arena, key);
	m->attrs[at].v = copy_val(m, v);
	m->nattrs++;
}

void module_set_attr_string(struct module *m, const char *key, const char *s)
{
	struct mattr_val v = {MA_STRING, 0, 0, s, NULL, 0};
	module_set_attr(m, key, &v);
}

void module_set_attr_int(struct module *m, const char *key, int64_t i)
{
	struct mattr_val v = {MA_INT, i, 0, NULL, NULL, 0};
	module_set_attr(m, key, &v);
}

void module_set_attr_float(struct module *m, const char *key, double f)
{
	struct mattr_val v = {MA_FLOAT, 0, f, NULL, NULL, 0};
	module_set_attr(m, key, &v);
}

void module_set_attr_bool(struct module *m, const char *key, bool b)
{
	struct mattr_val v = {MA_BOOL, b, 0, NULL, NULL, 0};
	module_set_attr(m, key, &v);
}

bool module_erase_attr(struct module *m, const char *key)
{
	struct mattr *a = find(m, key);
	if (!a)
		return false;
	size_t at = (size_t)(a - m->attrs);
	memmove(a, a + 1, (m->nattrs - at - 1) * sizeof(*a));
	m->nattrs--;
	return true;
}

const char *module_attr_string(const struct module *m, const char *key)
{
	const struct mattr_val *v = module_attr(m, key);
	return v && v->kind == MA_STRING ? v->s : NULL;
}

static void print_val(struct ostream *o, const struct mattr_val *v)
{
	switch (v->kind) {
	case MA_INT: os_i64(o, v->i); break;
	case MA_FLOAT: os_double(o, v->f); break;
	case MA_BOOL: os_puts(o, v->i ? "true" : "false"); break;
	case MA_STRING: os_quoted(o, v->s, strlen(v->s)); break;
	case MA_LIST:
		os_putc(o, '[');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				os_write(o, ", ", 2);
			print_val(o, &v->items[i]);
		}
		os_putc(o, ']');
		break;
	}
}

/* A key prints bare when the lexer reads it back as an identifier or a
 * keyword: [A-Za-z_][A-Za-z0-9_]*, but not the words that lex as numbers
 * or booleans. */
static bool key_is_bare(const char *k)
{
	static const char *const words[] = {"nan", "inf", "true", "false"};
	if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
		return false;
	for (const char *c = k; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(words); i++)
		if (strcmp(k, words[i]) == 0)
			return false;
	return true;
}

void module_print_attrs(struct ostream *o, const struct module *m)
{
	if (!m->nattrs)
		return;
	os_write(o, "attributes {", 12);
	for (size_t i = 0; i < m->nattrs; i++) {
		if (i)
			os_write(o, ", ", 2);
		const char *k = m->attrs[i].key;
		if (key_is_bare(k))
			os_puts(o, k);
		else
			os_quoted(o, k, strlen(k));
		os_write(o, " = ", 3);
		print_val(o, &m->attrs[i].v);
	}
	os_write(o, "}\n", 2);
}

/* ---- the form ---- */

static const char *const form_names[] = {NULL, "anf", "gnf", "bbnf"};

const char *graph_form_name(enum graph_form f) { return form_names[f]; }

int graph_form_lookup(const char *s, size_t len)
{
	for (int f = FORM_ANF; f <= FORM_BBNF; f++)
		if (strlen(form_names[f]) == len && memcmp(form_names[f], s, len) == 0)
			return f;
	return -1;
}

enum graph_form module_form(const struct module *m)
{
	const char *s = module_attr_string(m, "form");
	int f = s ? graph_form_lookup(s, strlen(s)) : -1;
	return f < 0 ? FORM_DEFAULT : (enum graph_form)f;
}

void module_set_form(struct module *m, enum graph_form f)
{
	if (f == FORM_DEFAULT)
		module_erase_attr(m, "form");
	else
		module_set_attr_string(m, "form", form_names[f]);
}
