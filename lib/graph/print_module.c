/* print_module.c - the text of a module and of a function (docs/GraphIR.md,
 * "Canonical printing" and "Text forms"): the header lines and storage,
 * then each function's body in the module's form. Above the node printer
 * (print.c) and the forms' printer (print_forms.c), which it chooses
 * between; neither calls back here.
 */
#include "graph/forms.h"
#include "graph/graph.h"
#include "support/io.h"

static void print_func(struct node_printer *np, struct ostream *o, struct func *f)
{
	os_write(o, "func ", 5);
	print_global_name(o, f->name);
	if (module_form(f->mod) != FORM_DEFAULT) {
		forms_print_body(o, f, module_form(f->mod));
	} else {
		node_printer_sig(np, f, NULL, NULL);
		os_write(o, " {\n", 3);
		node_printer_body(np, f);
	}
	os_write(o, "}\n", 2);
}

void func_print(struct ostream *o, struct func *f)
{
	struct node_printer *np = node_printer_new(o);
	print_func(np, o, f);
	node_printer_free(np);
}

/* [module @name] blank [attributes] blank [storage] blank [func] blank
 * [func] ...: one blank line between non-empty sections. */
void module_print(struct ostream *o, struct module *m)
{
	struct node_printer *np = node_printer_new(o);
	bool any = false;
	if (m->name) {
		os_write(o, "module ", 7);
		print_global_name(o, m->name);
		os_putc(o, '\n');
		any = true;
	}
	if (m->nattrs) {
		if (any)
			os_putc(o, '\n');
		module_print_attrs(o, m);
		any = true;
	}
	if (m->gfirst) {
		if (any)
			os_putc(o, '\n');
		module_for_each_global(m, n) node_printer_storage(np, n);
		any = true;
	}
	for (size_t i = 0; i < m->nfuncs; i++) {
		if (any)
			os_putc(o, '\n');
		print_func(np, o, m->funcs[i]);
		any = true;
	}
	node_printer_free(np);
}
