// speed.h: the fair speed race and the floating-point work of a step
// (speed.c).
#pragma once
#include "io/config_parse.h"

// Speed (speed.c).

// Floating-point operations of one training step (forward, backward, AdamW)
// of config c at batch N: matrix products only, see speed.c for the count.
double train_step_flops(const ModelConfig *c, int N);
// The same, split: forward matmuls and the attention products within them.
typedef struct { double linear, attention, forward, step; } StepFlops;
StepFlops train_step_flops_detail(const ModelConfig *c, int N);

// Bytes the elementwise passes of that step move (norms, residuals,
// softmax, activations, AdamW; speed.c lists them), for the roofline.
double train_step_bytes(const ModelConfig *c, int N, size_t n_params);

int cmd_speed(int argc, char **argv);
