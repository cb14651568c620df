/* a.c calls b.c's b_step; what follows names c_step only where a use does
   not count: a comment (c_step()), a string, a member and a prototype. */
#include "three.h"

int c_step(int x);

struct hooks {
	int (*c_step)(int);
};

int a_step(int x)
{
	struct hooks h = {0};
	const char *why = "c_step(x)";
	(void)why;
	return b_step(x) + (h.c_step != 0);
}
