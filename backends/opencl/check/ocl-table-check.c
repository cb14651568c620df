/* ocl-table-check - runs the OpenCL backend's table check (ocl_table_check,
 * backends/opencl/ocl_table.c) on OclKernels.def as built, then on a copy
 * with one mistake of each kind the check knows, and prints what it finds
 * (test/opencl/table-check.test). It opens no device. */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <stdio.h>
#include <string.h>

static struct ocl_row rows[IK_COUNT];
static struct ocl_node_row nodes[NK_COUNT];

/* Prints the check's findings on rows and nodes under a heading. */
static void report(const char *what)
{
	struct ostream o;
	ostream_mem(&o);
	unsigned n = ocl_table_check(rows, nodes, &o);
	printf("%s: %u problem%s\n%s", what, n, n == 1 ? "" : "s", ostream_cstr(&o));
	ostream_abort(&o);
}

int main(void)
{
	memcpy(rows, ocl_rows, sizeof rows);
	memcpy(nodes, ocl_node_rows, sizeof nodes);
	report("OclKernels.def");
	rows[IK_convolution].gen = NULL;
	rows[IK_softmax].supports = NULL;
	rows[IK_alloc].flags = OCL_F_FUSE_RELU;
	rows[IK_matmul].flags = OCL_F_FUSE_RELU | OCL_F_RELU;
	rows[IK_localresponsenormalization].flags = OCL_F_ZEROS;
	rows[IK_relu] = rows[IK_splat];
	rows[IK_maxpoolwithargmax] = rows[IK_avgpool];
	rows[IK_copy].elems = OCL_EL_ANY;
	rows[IK_gemm].elems = OCL_EL_NONE;
	nodes[NK_Transpose] = (struct ocl_node_row){IK_transpose, OCL_EL_ANY};
	nodes[NK_MaxPoolGrad] = (struct ocl_node_row){IK_maxpoolgrad, OCL_EL_FLOAT};
	report("broken");
	return 0;
}
