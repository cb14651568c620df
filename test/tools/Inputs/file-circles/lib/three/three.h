/* The fixture's three functions, one per file of the circle. */
int a_step(int x);
int b_step(int x);
int c_step(int x);
