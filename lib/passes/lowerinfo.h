/* lowerinfo.h - the lowering driver's records for the lowered-info map
 * (graph/lowered.h): which value now stands for each output of a node a
 * rule lowered (lowerinfo.c). */
#ifndef GLOW_PASSES_LOWERINFO_H
#define GLOW_PASSES_LOWERINFO_H

#include "graph/graph.h"

enum { LOWER_INFO_MAXRES = 8 };

/* Where to look, after a rule ran, for what replaced each result of the
 * node it lowers: one use per result (user and operand slot), and the node
 * before it (the rule inserts its nodes between that one and the node
 * after). */
struct lower_info {
	struct node *prev, *next;
	struct node *user[LOWER_INFO_MAXRES];
	unsigned slot[LOWER_INFO_MAXRES];
	unsigned nres;
	const char *origin; /* n's own map entry (n came from lowering), else NULL */
	unsigned origin_res;
};

/* Takes n's record before its rule runs (next: the node after n). */
void lower_info_before(struct lower_info *li, struct func *f, struct node *n, struct node *next);
/* After the rule replaced n: a node the rule made that now stands for
 * result r of n gets the map entry (n's name, r), or n's own entry when n
 * came from lowering itself (a rule's node lowered again). */
void lower_info_after(const struct lower_info *li, struct func *f, const struct node *n);

#endif
