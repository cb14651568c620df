/* typerules_op.c - reporting and attribute access for the typed-operation
 * view (typerules_op.h). */
#include "graph/typerules_op.h"
#include "support/io.h"
#include "support/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "subject name: msg" at loc; the name as %name, or @name when global. */
void top_report(struct diag *d, struct loc loc, const char *subject, const char *name, bool global,
		const char *msg)
{
	struct ostream o;
	ostream_mem(&o);
	os_puts(&o, subject);
	if (name) {
		os_putc(&o, ' ');
		if (global)
			print_global_name(&o, name);
		else
			print_local_name(&o, name);
	}
	os_puts(&o, ": ");
	os_puts(&o, msg);
	diag_error(d, loc, "%s", ostream_cstr(&o));
	ostream_abort(&o);
}

/* "Kind %name: message" at op->loc, counted in op->errors. The message
 * buffer is the size the graph verifier has always used, so long messages
 * are cut where they were. */
void top_err(struct typed_op *op, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	top_report(op->d, op->loc, node_kind_name(op->kind), op->name, false, msg);
	op->errors++;
}

/* Attribute an of op's kind; a kind without it is a bug in a rule,
 * reported as an internal error. */
const union attr_val *top_attr(const struct typed_op *op, enum attr_name an)
{
	int i = node_attr_slot(op->kind, an);
	if (i < 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "type rule of %s reads attribute '%s', which the kind does not have",
			 node_kind_name(op->kind), attr_name_str(an));
		unreachable(msg);
	}
	return &op->attrs[i];
}

/* The enum attribute's value as its name, "?" out of range (a value below
 * zero reads as the first name, as node_enum has it). */
const char *top_enum(const struct typed_op *op, enum attr_name an)
{
	static char buf[64];
	int64_t want = top_attr(op, an)->i;
	const char *vals = node_desc(op->kind)->attrs[node_attr_slot(op->kind, an)].enum_values;
	for (int64_t k = 0; vals; k++) {
		size_t len = strcspn(vals, "|");
		if (k >= want) {
			snprintf(buf, sizeof buf, "%.*s", (int)len, vals);
			return buf;
		}
		vals = vals[len] ? vals + len + 1 : NULL;
	}
	return "?";
}
