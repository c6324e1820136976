// flow.h: flow matching. The model learns the velocity that carries
// noise x₀ to data x₁ along a straight line; sampling follows it with Euler,
// and a class-conditional model's with classifier-free guidance.
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
// An unconditional model; a class-conditional one samples with the null label.
void flow_sample(Model *m, Activations *a, float *x, int steps);

// Classifier-free guidance: v = v(null) + w·(v(y) − v(null)), the velocity
// pushed from the unconditional model's toward the label's by w (w = 1: the
// conditional velocity, w = 0: the unconditional one). v_both (2, n) holds
// one forward pass of a batch [x | x] with labels [null | y]: its first n
// floats v(x, t, null), the next n v(x, t, y). v (n) may be v_both itself.
void flow_guided_velocity(float *v, const float *v_both, float w, size_t n);

// The images a guided sample of N images runs the model on at once: N at
// w = 1 (the conditional model alone, one forward pass a step), 2N
// otherwise (the null label and the asked-for label, in one batch).
int flow_guided_rows(int N, float w);

// Euler sampling with guidance: x (N images) goes in as noise at t = 0 and
// comes out at t = 1, image i asked for label y[i] (0..classes-1; classes,
// the null label, asks for none) at guidance w >= 0, each step
// x ← x + v/S with v the guided velocity at t = i/S. a: activations of a
// class-conditional model for flow_guided_rows(N, w) images or more (its N
// is used and put back). 0, or -1 with a message: an unconditional model, a
// label outside 0..classes, w negative or not finite, a too small, no memory.
int flow_sample_guided(Model *m, Activations *a, float *x, const int *y, int N, float w, int steps,
                       char *err, size_t errlen);
