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
#include <math.h>
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

/* Works around a Graphviz 2.42 bug (Debian 12's libgvplugin_dot_layout)
 * that made gvFreeLayout free a block twice and glibc abort.
 *
 * The dot layout keeps, per rank of the root graph, `v` (the ordered nodes)
 * and `av` (the allocated block, which dot_cleanup_graph frees). Both point to
 * the same block once mincross is done. When the graph has a labelled flat
 * edge (both ends on one rank) whose ends are not adjacent, flat_edges()
 * inserts a virtual node for the label into the rank above with make_vn_slot(),
 * which grows `v` with realloc and leaves `av` pointing at the block realloc
 * released (make_leafslots() does the same for leaf sets). gvFreeLayout then
 * frees `av` again. The system `dot` command never frees its last graph's
 * layout, so it does not crash on the same text.
 *
 * After the layout the root's `v` of every rank is the start of its live
 * block (merge2() sets v = av; the reallocs return block starts), so
 * re-pointing `av` at `v` where they differ makes the cleanup free the live
 * block exactly once. In a Graphviz without the bug they never differ and
 * this does nothing. Our dot text also avoids labelled edges that can be flat
 * (see ir_dot.c), so the repair is a second line of defence. */
static void repair_rank_lists(Agraph_t *g)
{
	if (!aggetrec(g, "Agraphinfo_t", 0) || !GD_rank(g))
		return;
	for (int r = GD_minrank(g); r <= GD_maxrank(g); r++)
		if (GD_rank(g)[r].v != GD_rank(g)[r].av)
			GD_rank(g)[r].av = GD_rank(g)[r].v;
}

/* Bitmaps (png) are painted at 96 dpi unless that makes more than
 * MAX_PIXELS pixels or a side longer than MAX_SIDE: painting and compressing
 * the bitmap then dominates the time (a 43-megapixel ResNet-50 program took
 * 4 s against 0.2 s for its layout) and Graphviz would scale past 32767
 * pixels a side itself, with a warning naming no file. The picture is scaled
 * down as a whole instead; svg and pdf are never scaled. Returns the scale
 * applied (1: none). */
#define DEFAULT_DPI 96.0
#define MAX_PIXELS 12e6
#define MAX_SIDE 30000.0
static double limit_bitmap(Agraph_t *g)
{
	if (!aggetrec(g, "Agraphinfo_t", 0) || !GD_drawing(g))
		return 1;
	double dpi = GD_drawing(g)->dpi > 0 ? GD_drawing(g)->dpi : DEFAULT_DPI;
	/* inches, with the 4-point pad Graphviz adds on every side */
	double w = (GD_bb(g).UR.x - GD_bb(g).LL.x + 8) / 72, h = (GD_bb(g).UR.y - GD_bb(g).LL.y + 8) / 72;
	if (w <= 0 || h <= 0)
		return 1;
	double scale = 1;
	if (w * dpi * h * dpi > MAX_PIXELS)
		scale = sqrt(MAX_PIXELS / (w * dpi * h * dpi));
	double side = (w > h ? w : h) * dpi * scale;
	if (side > MAX_SIDE)
		scale *= MAX_SIDE / side;
	if (scale < 1)
		GD_drawing(g)->dpi = dpi * scale;
	return scale;
}

static void stage(const struct dot_render_hooks *h, enum dot_stage s, size_t nodes, size_t edges)
{
	if (h && h->stage)
		h->stage(h->ctx, s, nodes, edges);
}

int dot_render(const char *text, size_t len, enum dot_format fmt, struct ostream *o, struct diag *d,
	       const struct dot_render_hooks *hooks)
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
	stage(hooks, DOT_STAGE_LAYOUT, (size_t)agnnodes(g), (size_t)agnedges(g));
	if (gvLayout(gvc, g, "dot") != 0) {
		diag_error(d, LOC_NONE, "Graphviz could not lay out the graph");
		agclose(g);
		goto out;
	}
	repair_rank_lists(g);
	double scale = fmt == DOT_FMT_PNG ? limit_bitmap(g) : 1;
	stage(hooks, DOT_STAGE_RENDER, (size_t)agnnodes(g), (size_t)agnedges(g));
	char *data = NULL;
	unsigned int n = 0;
	if (gvRenderData(gvc, g, fname, &data, &n) != 0 || !data) {
		diag_error(d, LOC_NONE, "Graphviz could not render %s (is its plugin installed?)", fname);
	} else {
		/* after the stage hook, which ends a progress line on the terminal */
		stage(hooks, DOT_STAGE_WRITE, (size_t)agnnodes(g), (size_t)agnedges(g));
		if (scale < 1)
			diag_note(d, LOC_NONE,
				  "the png is drawn at %.0f%% of its size (%.0f megapixels and %.0f pixels a side at "
				  "most); -T svg or pdf keep every detail, -range and -focus draw a part",
				  scale * 100, MAX_PIXELS / 1e6, MAX_SIDE);
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
