/* glow-list-kinds - prints the node kinds of the graph IR and the
 * instruction kinds of the instruction IR, one per line:
 *
 *   node Add
 *   instr convolution
 *
 * gen-docs.py completes -keep-float=, -highlight= and the like with them.
 * A build-time helper only; it is not installed.
 */
#include "graph/graph.h"
#include "ir/ir.h"

#include <stdio.h>

int main(void)
{
	for (unsigned k = 0; k < NK_COUNT; k++)
		printf("node %s\n", node_kind_name(k));
	for (unsigned k = 0; k < IK_COUNT; k++)
		printf("instr %s\n", instr_kind_name(k));
	return ferror(stdout) ? 1 : 0;
}
