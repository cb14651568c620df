/* attr_rows.h - the attribute-row macros the op tables are written in.
 *
 * Nodes.def and Instrs.def spell each kind's attributes as ATTRS(row, ...)
 * or NOATTRS, a row being A_INT(name, default), A_INTS(name, v, ...),
 * A_ENUM(name, "a|b|c", default index) and so on (Nodes.def lists them).
 * Included right before a table is expanded, these turn the rows into a
 * NULL-terminated compound-literal array of struct attr_desc (graph.h), the
 * same for both IRs. Only the files that build a descriptor table include
 * this (lib/graph/nodes.c, lib/ir/instrs.c).
 */
#ifndef GLOW_GRAPH_ATTR_ROWS_H
#define GLOW_GRAPH_ATTR_ROWS_H

#include "graph/graph.h"

#define ATTRS(...) ((const struct attr_desc[]){__VA_ARGS__, {NULL, AK_INT, false, NULL, 0, 0, NULL, 0, AN_COUNT}})
#define NOATTRS NULL
#define A_INT(nm, d) {#nm, AK_INT, false, NULL, (d), 0, NULL, 0, AN_##nm}
#define A_INT_REQ(nm) {#nm, AK_INT, true, NULL, 0, 0, NULL, 0, AN_##nm}
#define A_FLOAT(nm, d) {#nm, AK_FLOAT, false, NULL, 0, (d), NULL, 0, AN_##nm}
#define A_FLOAT_REQ(nm) {#nm, AK_FLOAT, true, NULL, 0, 0, NULL, 0, AN_##nm}
#define A_BOOL(nm, d) {#nm, AK_BOOL, false, NULL, (d), 0, NULL, 0, AN_##nm}
#define A_INTS(nm, ...)                                                        \
	{#nm, AK_INTS, false, NULL, 0, 0, (const int64_t[]){__VA_ARGS__}, \
	 (uint32_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), AN_##nm}
#define A_INTS_REQ(nm) {#nm, AK_INTS, true, NULL, 0, 0, NULL, 0, AN_##nm}
#define A_FLOATS_REQ(nm) {#nm, AK_FLOATS, true, NULL, 0, 0, NULL, 0, AN_##nm}
#define A_ENUM(nm, vals, d) {#nm, AK_ENUM, false, vals, (d), 0, NULL, 0, AN_##nm}
#define A_STR(nm) {#nm, AK_STRING, false, NULL, 0, 0, NULL, 0, AN_##nm} /* default: none (NULL) */
#define A_STR_REQ(nm) {#nm, AK_STRING, true, NULL, 0, 0, NULL, 0, AN_##nm}

#endif
