/* c.c takes the address of a.c's a_step in a table: the circle's third
   edge. Its static helper shares b_step's name pattern but is its own. */
#include "three.h"

static int c_local(int x)
{
	return x * 2;
}

int (*const c_table[])(int) = { a_step };

int c_step(int x)
{
	return c_local(x);
}
