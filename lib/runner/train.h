/* train.h - glow-run's training run (docs/Training.md): the training step
 * @F_grad made by glow-opt -passes=differentiate runs over a data set in
 * mini-batches for -epochs epochs, shuffled by a seeded generator, with
 * the weights and velocities carried from step to step in memory; after
 * each epoch the mean loss is printed and, given a held-out set, @F's
 * accuracy on it; -output-dir writes the trained weights.
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_RUNNER_TRAIN_H
#define GLOW_RUNNER_TRAIN_H

#include "runner/runner.h"

/* Whether the options ask for a training run (-epochs, -train-data or
 * -test-data given): glow-run then calls runner_glow_train instead of
 * running the function once. */
bool runner_train_requested(const struct run_options *o);

/* The training run on glow-run's parsed options; returns the exit status. */
int runner_glow_train(struct run_options *o, struct diag *d);

#endif
