// flow.h: flow matching. The model learns the velocity that carries
// noise x₀ to data x₁ along a straight line; sampling follows it with Euler.
#pragma once
#include <stddef.h>
#include "model.h"

// x_t = (1 − t)·x₀ + t·x₁ and the target velocity x₁ − x₀, image by image.
// x1, x0, xt, target (N, per_image); t (N).
void flow_interpolate(float *xt, float *target, const float *x1, const float *x0,
                      const float *t, int N, size_t per_image);

// loss = mean((v − target)²) over all n elements; if dv is not NULL it gets
// dLoss/dv = 2·(v − target)/n. Summed in double, in order.
double flow_mse(float *dv, const float *v, const float *target, size_t n);

// One step of Euler's method along the velocity: x ← x + h·v. x, v (n).
void flow_euler_step(float *x, const float *v, float h, size_t n);

// Euler sampling: x (a->N images) goes in as noise at t = 0 and comes out as
// a sample at t = 1, through x ← x + v(x, i/S)/S for i = 0 … S−1.
void flow_sample(Model *m, Activations *a, float *x, int steps);
