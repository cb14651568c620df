/* y.c names x_value only where it is not x.c's function: a comment, a
 * string, a prototype, a parameter and a local that shadow it. */
int x_value(void);

int y_value(void)
{
	const char *s = "x_value";
	return s[0] != 0; /* x_value() */
}

int y_scaled(int x_value, int k)
{
	return x_value * k;
}

int y_local(void)
{
	int *x_value = 0;
	return x_value != 0;
}
