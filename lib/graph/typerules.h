/* typerules.h - declarations of the type rules named in Nodes.def, and the
 * verifier context they report through. */
#ifndef GLOW_GRAPH_TYPERULES_H
#define GLOW_GRAPH_TYPERULES_H

#include "graph/graph.h"

struct verifier {
	struct diag *d;
	struct module *m;
	struct func *f;
	int errors;
};

/* Reports an error at the node's location, prefixed with its kind and name. */
void verr(struct verifier *v, const struct node *n, const char *fmt, ...) GLOW_PRINTF(3, 4);

#define NODE(K, O, R, A, F, T) void T(struct verifier *v, const struct node *n);
#include "graph/Nodes.def"
#undef NODE

#endif
