/* cgen_units.c - which kernel files a bundle carries.
 *
 * cb_kernel_text holds the kernel files of backends/c/kernels (in the
 * order of CB_KERNELS in backends/CMakeLists.txt), each after the line
 * "/" "* ---- NAME ---- *" "/" that cb-embed writes before it. The files
 * before the first .c file (scalar.h, cb_base.h, cb_thread.h: the macros,
 * the types and the thread pool every bundle uses) are in every bundle.
 * Each later file is in a bundle only when something the bundle carries
 * names what that file declares: the program (its file-scope declarations
 * and statements), the BLAS kernels when it has them, or a kernel file it
 * already carries. A bundle of one addition then carries some 1,000 lines
 * of kernels instead of 4,700 (a third less of the C compiler's time at
 * -O1); the files keep their order, so each still follows what it uses.
 *
 * What a file declares: every identifier of the kernels' own prefixes
 * (cb_, CB_, pad_) whose first appearance in the kernel text, comments and
 * macro bodies aside, is in that file. C declares before it uses, so that
 * first appearance is the declaration (a function, a macro, a type or tag,
 * an enumerator, a global); a name that first appears in a file that
 * merely mentions it (a prototype ahead of its definition) selects that
 * file too, which only carries more than needed.
 */
#include "backends/c/cgen.h"
#include "support/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_UNITS 64

struct unit {
	size_t first, end; /* lines of cb_kernel_text: the marker line .. one past the last */
	bool always;
};

static struct {
	bool built;
	size_t n;
	struct unit u[MAX_UNITS];
	struct strmap owner; /* identifier -> 1 + the unit of its first appearance */
} K;

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static bool kernel_prefix(const char *p, size_t n)
{
	return n > 3 && (strncmp(p, "cb_", 3) == 0 || strncmp(p, "CB_", 3) == 0 || (n > 4 && strncmp(p, "pad_", 4) == 0));
}

/* A scanner over C text, line by line: identifiers outside comments,
 * string and character literals and numbers. in_comment carries a block
 * comment from one line to the next. */
struct scan {
	bool in_comment;
};

/* Calls fn(ctx, p, n) for each identifier of the kernel prefixes in line.
 * With skip_macro_bodies, of a #define only its name counts, and of the
 * other preprocessor lines nothing (*cont: the line ended in a backslash,
 * so the next one continues it). */
static void scan_line(struct scan *s, const char *line, bool skip_macro_bodies, bool *cont,
		      void (*fn)(void *ctx, const char *p, size_t n), void *ctx)
{
	const char *p = line;
	size_t len = strlen(line);
	bool continued = *cont, emit = true;
	*cont = len && line[len - 1] == '\\';
	if (skip_macro_bodies && continued)
		emit = false; /* inside a macro body */
	if (skip_macro_bodies && !continued && !s->in_comment) {
		const char *q = p;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '#') {
			q++;
			while (*q == ' ' || *q == '\t')
				q++;
			if (strncmp(q, "define", 6) == 0 && (q[6] == ' ' || q[6] == '\t')) {
				q += 7;
				while (*q == ' ' || *q == '\t')
					q++;
				size_t n = 0;
				while (ident_char(q[n]))
					n++;
				if (n && kernel_prefix(q, n))
					fn(ctx, q, n);
				p = q + n;
			}
			/* the rest names nothing declared here, but may open a comment */
			emit = false;
		}
	}
	while (*p) {
		if (s->in_comment) {
			const char *e = strstr(p, "*/");
			if (!e)
				return;
			s->in_comment = false;
			p = e + 2;
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			s->in_comment = true;
			p += 2;
			continue;
		}
		if (p[0] == '/' && p[1] == '/')
			return;
		if (*p == '"' || *p == '\'') {
			const char q = *p++;
			while (*p && *p != q)
				p += p[0] == '\\' && p[1] ? 2 : 1;
			if (*p)
				p++;
			continue;
		}
		if (isdigit((unsigned char)*p)) {
			while (ident_char(*p) || *p == '.')
				p++;
			continue;
		}
		if (ident_start(*p)) {
			size_t n = 0;
			while (ident_char(p[n]))
				n++;
			if (emit && kernel_prefix(p, n))
				fn(ctx, p, n);
			p += n;
			continue;
		}
		p++;
	}
}

struct own_ctx {
	size_t unit;
};

static void own(void *ctx, const char *p, size_t n)
{
	const struct own_ctx *o = ctx;
	int inserted = 0;
	void **slot = strmap_slot(&K.owner, p, n, &inserted);
	if (inserted)
		*slot = (void *)(uintptr_t)(o->unit + 1);
}

static bool unit_name(const char *line, const char **name, size_t *n)
{
	static const char head[] = "/* ---- ", tail[] = " ---- */";
	const size_t hl = sizeof head - 1, tl = sizeof tail - 1, len = strlen(line);
	if (len <= hl + tl || strncmp(line, head, hl) != 0 || strcmp(line + len - tl, tail) != 0)
		return false;
	*name = line + hl;
	*n = len - hl - tl;
	return true;
}

static void build(void)
{
	if (K.built)
		return;
	K.built = true;
	strmap_init(&K.owner);
	const char *name;
	size_t n;
	glow_assert(cb_kernel_text[0] && unit_name(cb_kernel_text[0], &name, &n));
	bool seen_c = false;
	size_t i = 0;
	for (; cb_kernel_text[i]; i++) {
		if (!unit_name(cb_kernel_text[i], &name, &n))
			continue;
		glow_assert(K.n < MAX_UNITS);
		if (n > 2 && memcmp(name + n - 2, ".c", 2) == 0)
			seen_c = true;
		if (K.n)
			K.u[K.n - 1].end = i;
		K.u[K.n].first = i;
		K.u[K.n].always = !seen_c;
		K.n++;
	}
	K.u[K.n - 1].end = i;
	/* the owners: first appearances, the always-carried files' included
	 * (a name they declare selects nothing) */
	for (size_t k = 0; k < K.n; k++) {
		struct scan s = {false};
		bool cont = false;
		struct own_ctx o = {k};
		for (size_t j = K.u[k].first + 1; j < K.u[k].end; j++)
			scan_line(&s, cb_kernel_text[j], true, &cont, own, &o);
	}
}

struct ref_ctx {
	bool *use;
	size_t *queue, *nq;
};

static void ref(void *ctx, const char *p, size_t n)
{
	struct ref_ctx *r = ctx;
	const uintptr_t u = (uintptr_t)strmap_getn(&K.owner, p, n);
	if (!u || K.u[u - 1].always || r->use[u - 1])
		return;
	r->use[u - 1] = true;
	r->queue[(*r->nq)++] = u - 1;
}

static void ref_lines(const char *const *lines, size_t first, size_t end, struct ref_ctx *r)
{
	struct scan s = {false};
	bool cont = false;
	for (size_t i = first; i < end && lines[i]; i++)
		scan_line(&s, lines[i], false, &cont, ref, r);
}

/* Scans a text of many lines (the program's) as ref_lines does. */
static void ref_text(const char *text, struct ref_ctx *r)
{
	struct scan s = {false};
	bool cont = false;
	char *copy = xstrdup(text);
	for (char *line = copy; line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		scan_line(&s, line, false, &cont, ref, r);
		line = nl ? nl + 1 : NULL;
	}
	free(copy);
}

void cg_write_kernels(struct ostream *c, const char *const *texts, const char *const *extra_lines)
{
	build();
	bool use[MAX_UNITS] = {false};
	size_t queue[MAX_UNITS], nq = 0;
	struct ref_ctx r = {use, queue, &nq};
	for (size_t i = 0; texts && texts[i]; i++)
		ref_text(texts[i], &r);
	if (extra_lines)
		ref_lines(extra_lines, 0, SIZE_MAX, &r);
	for (size_t q = 0; q < nq; q++)
		ref_lines(cb_kernel_text, K.u[queue[q]].first + 1, K.u[queue[q]].end, &r);
	for (size_t k = 0; k < K.n; k++) {
		if (!K.u[k].always && !use[k])
			continue;
		for (size_t i = K.u[k].first; i < K.u[k].end; i++) {
			os_puts(c, cb_kernel_text[i]);
			os_putc(c, '\n');
		}
	}
}
