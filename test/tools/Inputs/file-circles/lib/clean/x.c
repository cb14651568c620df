/* x.c uses y.c's y_value; y.c uses nothing of x.c: no circle. */
int y_value(void);

int x_value(void)
{
	return y_value() + 1;
}
