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

int cmd_speed(int argc, char **argv);
