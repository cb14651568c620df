/* bundle-api.c - a program that trains with the training bundle of
 * examples/fashion/mlp.glow (bundle name "mlp") through its API, as
 * docs/CBackend.md ("Training bundles") shows it: the three regions, the
 * weights file, init_mutable and init_weights, a batch written at the
 * data placeholders' offsets, train_step per batch, the loss read back, and
 * @infer (another function of the module) on the trained weights.
 *
 *   bundle-api WEIGHTS_FILE
 */
#include "mlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a zeroed region aligned as the bundle wants it */
static uint8_t *region(size_t n)
{
	size_t size = (n + mlp_ALIGNMENT) / mlp_ALIGNMENT * mlp_ALIGNMENT;
	uint8_t *p = aligned_alloc(mlp_ALIGNMENT, size);
	if (p)
		memset(p, 0, size);
	return p;
}

/* batch k: image i is dark but for a bright 7 x 7 square at the place of
 * its class (i + k) % 10 */
static void fill_batch(uint8_t *w, int k)
{
	float *image = (float *)(w + mlp_image_OFFSET);
	int64_t *label = (int64_t *)(w + mlp_label_OFFSET);
	for (int i = 0; i < 32; i++) {
		int c = (i + k) % 10;
		label[i] = c;
		for (int p = 0; p < 784; p++)
			image[i * 784 + p] = ((p / 28) / 7) * 4 + (p % 28) / 7 == c ? 1.0f : 0.05f;
	}
}

int main(int argc, char **argv)
{
	uint8_t *C = region(mlp_CONSTANT_SIZE), *W = region(mlp_MUTABLE_SIZE), *A = region(mlp_ACTIVATIONS_SIZE);
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	if (!C || !W || !A || !f || fread(C, 1, mlp_CONSTANT_SIZE, f) != mlp_CONSTANT_SIZE) {
		fprintf(stderr, "usage: bundle-api mlp.weights.bin\n");
		return 1;
	}
	fclose(f);
	mlp_set_threads(1);
	mlp_init_mutable(C, W);
	mlp_init_weights(W, 1); /* glow-run -seed=1's initial weights */
	const float *loss = (const float *)(W + mlp_loss_OFFSET);
	float first = 0, last = 0;
	for (int k = 0; k < 40; k++) {
		fill_batch(W, k);
		if (mlp_train_step(C, W, A) != 0)
			return 1;
		if (k == 0)
			first = *loss;
		last = *loss;
	}
	printf("loss %s\n", last < first / 4 ? "fell" : "did not fall");
	/* @infer on the trained weights: argmax of the logits of a new batch */
	fill_batch(W, 3);
	if (mlp_infer(C, W, A) != 0)
		return 1;
	const float *logits = (const float *)(W + mlp_logits_OFFSET);
	const int64_t *label = (const int64_t *)(W + mlp_label_OFFSET);
	int correct = 0;
	for (int i = 0; i < 32; i++) {
		int best = 0;
		for (int c = 1; c < 10; c++)
			if (logits[i * 10 + c] > logits[i * 10 + best])
				best = c;
		correct += best == label[i];
	}
	printf("infer: %d/32 correct\n", correct);
	for (const struct mlp_function *fn = mlp_functions; fn->name; fn++)
		printf("function %s %s\n", fn->name, fn->use);
	for (unsigned i = 0; i < mlp_NUM_PLACEHOLDERS; i++)
		printf("placeholder %s %s\n", mlp_placeholders[i].name, mlp_placeholders[i].elem);
	free(C);
	free(W);
	free(A);
	return 0;
}
