/* emit-check.c - runs the C backend's start-up check of its emitter
 * table (cg_emit_check) once: test/cbackend/emitter-table.test builds it
 * with a changed backends/c/Emitters.def. */
#include "backends/c/cgen.h"

int main(void)
{
	cg_emit_check();
	return 0;
}
