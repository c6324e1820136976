// flow.h: flow matching. The model learns the velocity that carries
// noise x₀ to data x₁ along a straight line, at times drawn uniformly or
// logit-normally; sampling follows it with Euler's or Heun's method, and a
// class-conditional model's with classifier-free guidance.
#pragma once
#include <stddef.h>
#include "model.h"

// How training draws each image's time t (the t_dist key): uniform on
// [0, 1], or logit-normal, t = σ(t_mean + t_std·u) with u ~ N(0, 1).
typedef enum { T_UNIFORM = 0, T_LOGIT_NORMAL = 1 } TimeDist;
// How a sample follows the velocity (the sampler key): Euler, one model
// evaluation a step, or Heun, two.
typedef enum { SAMPLER_EULER = 0, SAMPLER_HEUN = 1 } SamplerKind;
extern const char *const T_DIST_NAMES[], *const SAMPLER_NAMES[];

// Logit-normal times from standard normal draws: t[i] = σ(mean + std·u[i]),
// σ(z) = 1/(1 + e^(−z)). t, u (n); t may be u.
void flow_logit_normal_times(float *t, const float *u, int n, float mean, float std);

// x_t = (1 − t)·x₀ + t·x₁ and the target velocity x₁ − x₀, image by image.
// x1, x0, xt, target (N, per_image); t (N).
void flow_interpolate(float *xt, float *target, const float *x1, const float *x0,
                      const float *t, int N, size_t per_image);

// loss = mean((v − target)²) over all n elements; if dv is not NULL it gets
// dLoss/dv = 2·(v − target)/n. Summed in double, in order.
double flow_mse(float *dv, const float *v, const float *target, size_t n);

// One step of Euler's method along the velocity: x ← x + h·v. x, v (n).
void flow_euler_step(float *x, const float *v, float h, size_t n);

// Model evaluations (NFE) of a sample of `steps` steps: steps for Euler,
// 2·steps for Heun (each evaluation two forward passes when guided at w ≠ 1).
static inline int flow_evaluations(SamplerKind sampler, int steps) {
    return sampler == SAMPLER_HEUN ? 2 * steps : steps;
}

// One step of Heun's method, its corrector: x ← x + h·(v₁ + v₂)/2, with
// v₁ the velocity at (x, t) and v₂ at the Euler guess (x + h·v₁, t + h).
// x, v1, v2 (n).
void flow_heun_step(float *x, const float *v1, const float *v2, float h, size_t n);

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

// The sampler: x (N images) goes in as noise at t = 0 and comes out at
// t = 1 after `steps` steps of h = 1/steps, Euler's (x ← x + h·v(x, t)) or
// Heun's (flow_heun_step). With labels y, image i asks for y[i]
// (0..classes-1; classes, the null label, asks for none) and every
// evaluation is the guided velocity at w >= 0; y NULL: the model's own
// velocity (a class-conditional model's with the null label), w unused.
// a: activations for flow_guided_rows(N, w) images or more (N without y;
// its N is used and put back). 0, or -1 with a message: labels for an
// unconditional model, a label outside 0..classes, w negative or not
// finite, steps < 0 (0 leaves x as it is), a too small, no memory.
int flow_sample_with(Model *m, Activations *a, float *x, const int *y, int N, float w, SamplerKind sampler,
                     int steps, char *err, size_t errlen);
