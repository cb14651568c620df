/* cbackend.h - the C backend: an instruction IR function with its static
 * memory plan becomes a self-contained C11 bundle (docs/CBackend.md).
 *
 *   NAME.h            region sizes, alignment, every placeholder's offset,
 *                     element type and shape, the entry points
 *   NAME.c            the kernels and one function that runs the program:
 *                     int NAME_run(const uint8_t *constants,
 *                                  uint8_t *mutable_weights,
 *                                  uint8_t *activations)
 *   NAME.weights.bin  the constants region (or a C array inside NAME.c)
 *   NAME_main.c       optionally, a driver reading .npy/.pb inputs and
 *                     writing .npy outputs
 *
 * A module with a training step @F_grad becomes one training bundle of all
 * its functions instead (cgen_train.c): NAME_train_step, NAME_run (@F),
 * NAME_<G>, NAME_functions and NAME_init_weights over one mutable region,
 * and a driver that trains (kernels/cb_train_driver.c).
 *
 * The mutable-weights and activations regions are the function's memory
 * plan (a function without one gets a plan without reuse); the constants
 * region is the backend's own: constant weights as the kernels want them
 * (filters packed into the matrix-product panels), each at an offset
 * aligned to 64 bytes.
 *
 * cbackend_backend implements struct backend (backends/backend.h): compile
 * writes a bundle into a temporary directory, builds it as a shared object
 * with the system C compiler and loads it; run binds placeholders and calls
 * NAME_run. The compiler is $GLOW_CC (default "cc"), its flags
 * $GLOW_CFLAGS (default "-O3 -march=native"); $GLOW_CBACKEND_KEEP keeps the
 * directory. The regions are allocated before anything is written, the
 * directory and its files are registered with support/cleanup.h (a signal
 * during the build removes them, and stops the compiler), and every error
 * path removes them; on a terminal, stderr shows the compile's progress.
 * Its settings come through struct backend_options: specific points to a
 * struct cbackend_options whose gemm and winograd choices compile takes
 * (-gemm=openblas: the shared object is linked with -lopenblas); NULL is
 * the defaults.
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_BACKENDS_C_CBACKEND_H
#define GLOW_BACKENDS_C_CBACKEND_H

#include "backends/backend.h"
#include "ir/ir.h"
#include "support/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Who computes the matrix products (convolutions, fully-connected layers,
 * matmul, gemm): the bundle's own kernels, or cblas_sgemm of OpenBLAS (the
 * bundle then includes <cblas.h> and links with -lopenblas). */
enum { CBACKEND_GEMM_BUILTIN = 0, CBACKEND_GEMM_OPENBLAS = 1 };
/* the -gemm= values in that order */
#define CBACKEND_GEMM_NAMES "builtin|openblas"

/* Which 3x3, stride-1 convolutions (one group, channel counts multiples of
 * 16, built-in kernels) are computed as Winograd F(m x m, 3 x 3): where the
 * generator expects it to win (auto), none, or every eligible one with
 * m = 2 or m = 4 (f2, f4). */
enum { CBACKEND_WINO_AUTO = 0, CBACKEND_WINO_OFF = 1, CBACKEND_WINO_F2 = 2, CBACKEND_WINO_F4 = 3 };
/* the -winograd= values in that order */
#define CBACKEND_WINO_NAMES "auto|off|f2|f4"

struct cbackend_options {
	const char *name;    /* bundle name; NULL: the function's name (made an identifier) */
	bool embed_weights;  /* constants as a C array in NAME.c instead of NAME.weights.bin */
	bool emit_main;      /* also write NAME_main.c */
	int gemm;            /* CBACKEND_GEMM_* */
	int winograd;        /* CBACKEND_WINO_* */
	/* compile (cbackend_backend) only: where to add the seconds spent
	 * generating the bundle and compiling it with the C compiler (for
	 * -time), or NULL */
	double *gen_seconds, *cc_seconds;
};

/* A bundle in memory (every buffer malloc'd; cbackend_bundle_free). */
struct cbackend_bundle {
	char *name;              /* the identifier prefix */
	char *c_src, *h_src;     /* NAME.c, NAME.h */
	char *main_src;          /* NAME_main.c, or NULL */
	uint8_t *weights;        /* the constants region */
	size_t weights_size;
	uint64_t mutable_size, activations_size; /* the other two regions */
};

/* Generates the bundle of f (verified). Returns 0, or -1 after reporting
 * every instruction it cannot compile. */
int cbackend_generate(struct ir_func *f, const struct cbackend_options *o, struct cbackend_bundle *b,
		      struct diag *d);
void cbackend_bundle_free(struct cbackend_bundle *b);

/* Generates the bundle of f and writes its files into dir (which must
 * exist). Returns 0, or -1 after reporting. */
int cbackend_emit_bundle(struct ir_func *f, const char *dir, const struct cbackend_options *o, struct diag *d);

/* Writes the files of bundle b into dir (which must exist), each whole or
 * not at all; the paths of the files written are appended to *files
 * (malloc'd strings, *nfiles counting them) when files is not NULL, and
 * each is registered with support/cleanup.h while it is there (handles in
 * the same order in *handles). embed_weights: no NAME.weights.bin (the
 * constants are in NAME.c, or the caller holds them). Returns 0, or -1
 * after reporting. */
int cbackend_write_bundle(const struct cbackend_bundle *b, const char *dir, bool embed_weights, char ***files,
			  int **handles, size_t *nfiles, struct diag *d);

/* Training bundles (docs/CBackend.md): a module that holds a training
 * step @F_grad and @F becomes one bundle of all its functions over one
 * mutable-weights region, with the entry points NAME_train_step (@F_grad),
 * NAME_run (@F) and NAME_<G> (any other @G), NAME_functions and
 * NAME_init_weights; NAME is o->name or F.
 *
 * cbackend_find_training: the indices of the step and of @F in fs; 1 when
 * found, 0 when fs holds no training step, -1 after reporting several. */
int cbackend_find_training(struct ir_func *const *fs, size_t n, size_t *step, size_t *eval, struct diag *d);
/* Generates the training bundle of the n functions fs (fs[step] the step,
 * fs[eval] its model). Returns 0, or -1 after reporting. */
int cbackend_generate_training(struct ir_func *const *fs, size_t n, size_t step, size_t eval,
			       const struct cbackend_options *o, struct cbackend_bundle *b, struct diag *d);
/* glow-run's initial value of a placeholder the training step updates
 * (docs/Training.md): 0 when it starts at zero (a velocity <W>_velocity, a
 * tensor of rank 0 or 1, not float), else the fan-in of its He-style
 * uniform values in +-sqrt(6 / fan_in): dims[0] of a matrix, the product
 * of dims[1..] of a filter. Placeholder i of the step (backend_func_io
 * order) draws from splitmix64 seeded with CBACKEND_INIT_SEED(seed, i). */
uint64_t cbackend_init_fan_in(const struct type *t, const char *name);
#define CBACKEND_INIT_SEED(seed, i) ((seed) ^ (0xd1b54a32d192ed03ULL * (uint64_t)((i) + 1)))

/* Writes the bundles of the n functions fs into directory dir as one
 * change: every bundle is generated first, written into a temporary
 * directory beside dir, and swapped into place (the exchange is atomic
 * where the system has renameat2's RENAME_EXCHANGE; elsewhere the old
 * directory is renamed aside, the new one renamed in, the old one
 * removed). A module with a training step (cbackend_find_training) is
 * written as one training bundle. Other regular files already in dir are kept (hard-linked into
 * the new directory); a subdirectory or other non-regular entry there is
 * an error. On any failure, dir is left as it was and the temporary
 * directory is removed, also when a signal stops the process
 * (support/cleanup.h). o->gen_seconds, when set, receives the seconds
 * spent generating. Returns 0, or -1 after reporting. */
int cbackend_write_dir(struct ir_func *const *fs, size_t n, const char *dir, const struct cbackend_options *o,
		       struct diag *d);

/* A training bundle of fs compiled and loaded in process (glow-run's
 * training run on the C backend): its mutable region initialized
 * (NAME_init_mutable), the functions run on the regions as they are.
 * Destroy it with cbackend_backend.destroy. NULL after reporting. */
struct backend_compiled *cbackend_compile_training(struct ir_func *const *fs, size_t n, size_t step, size_t eval,
						    const struct cbackend_options *o, struct diag *d);
/* The bytes of placeholder `name` in c's mutable region, NULL if it has none. */
uint8_t *cbackend_placeholder(struct backend_compiled *c, const char *name);
/* Runs function k of training bundle c (0: the step, 1: its model) on its
 * regions: nothing reset, nothing copied. 0, or -1 after reporting. */
int cbackend_run_function(struct backend_compiled *c, size_t k, struct diag *d);

/* The thread count of the bundles that cbackend_backend compiles from now
 * on (NAME_set_threads; 0, the default: every core of the process). */
void cbackend_set_threads(int n);

/* The C backend's own node kinds after lowering (cbnodes.c): every float
 * Relu(Add(Convolution, residual)) of f that qualifies becomes one
 * C.ConvAddRelu. Returns whether f changed. */
int cbackend_post_lowering(struct func *f);

/* The batch split (cbsplit.c): the region of f where images do not mix and
 * activations outweigh weights, computed in parts of the batch (copies of
 * its nodes with dimension 0 the part's size, Slices of the inputs,
 * Concats of the values that leave it), where that pays. Returns whether
 * f changed. */
int cbackend_batch_split(struct func *f);

extern const struct backend cbackend_backend;

#endif
