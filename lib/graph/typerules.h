/* typerules.h - declarations of the type rules named in Nodes.def. A rule
 * checks one typed operation (typerules_op.h): a graph node, or an
 * instruction seen as the node kind it comes from. */
#ifndef GLOW_GRAPH_TYPERULES_H
#define GLOW_GRAPH_TYPERULES_H

#include "graph/typerules_op.h"

#define NODE(K, O, R, A, F, T) void T(struct typed_op *op);
#include "graph/Nodes.def"
#undef NODE

#endif
