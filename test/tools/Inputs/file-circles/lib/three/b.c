/* b.c calls c.c's c_step through a macro of its own. */
#include "three.h"

#define B_NEXT(x) c_step((x) + 1)

int b_step(int x)
{
	return B_NEXT(x);
}
