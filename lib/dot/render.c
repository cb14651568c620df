/* render.c - renders dot text in process through Graphviz (libgvc +
 * libcgraph): parse with agmemread, lay out with the "dot" engine, render
 * to memory with gvRenderData, then hand the bytes to the caller's ostream
 * in one write. Nothing is written unless every step succeeded, so with
 * ostream_open/ostream_commit the output file is whole or absent.
 *
 * Graphviz reports its own problems (a missing plugin, say) on stderr; the
 * steps' return codes are turned into diagnostics here. A Graphviz context
 * is created and freed per call: there is no state kept between calls.
 */
#include "dot/dot.h"
#include "support/io.h"
#include "support/util.h"

#include <gvc.h>
#include <stdlib.h>

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libgvc.so\n"
	       "leak:libcgraph.so\n"
	       "leak:libfontconfig.so\n"
	       "leak:libpango\n"
	       "leak:libcairo.so\n"
	       "leak:libglib\n"
	       "leak:libgobject\n"
	       "leak:libgvplugin_\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "print_suppressions=0"; }

static const char *format_name(enum dot_format fmt)
{
	switch (fmt) {
	case DOT_FMT_SVG: return "svg";
	case DOT_FMT_PNG: return "png";
	case DOT_FMT_PDF: return "pdf";
	case DOT_FMT_DOT: return "dot";
	}
	unreachable("bad dot format");
}

int dot_render(const char *text, size_t len, enum dot_format fmt, struct ostream *o, struct diag *d)
{
	const char *fname = format_name(fmt);
	char *copy = xstrndup(text, len); /* agmemread wants a C string */
	GVC_t *gvc = gvContext();
	if (!gvc) {
		diag_error(d, LOC_NONE, "cannot create a Graphviz context");
		free(copy);
		return -1;
	}
	int rc = -1;
	Agraph_t *g = agmemread(copy);
	if (!g) {
		diag_error(d, LOC_NONE, "Graphviz could not read the dot text");
		goto out;
	}
	if (gvLayout(gvc, g, "dot") != 0) {
		diag_error(d, LOC_NONE, "Graphviz could not lay out the graph");
		agclose(g);
		goto out;
	}
	char *data = NULL;
	unsigned int n = 0;
	if (gvRenderData(gvc, g, fname, &data, &n) != 0 || !data) {
		diag_error(d, LOC_NONE, "Graphviz could not render %s (is its plugin installed?)", fname);
	} else {
		os_write(o, data, n);
		rc = 0;
	}
	if (data)
		gvFreeRenderData(data);
	gvFreeLayout(gvc, g);
	agclose(g);
out:
	gvFreeContext(gvc);
	free(copy);
	return rc;
}
