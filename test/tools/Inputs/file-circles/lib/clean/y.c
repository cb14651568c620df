/* y.c names x_value only in a comment, a string and a prototype. */
int x_value(void);

int y_value(void)
{
	const char *s = "x_value";
	return s[0] != 0; /* x_value() */
}
