// ema.h: the power-function EMA of the weights (EDM2, Karras et al. 2024):
// a second copy of the weights, never trained, that after every AdamW step
// moves toward them. Its decay β_k = (1 − 1/k)^(γ+1) depends on the step
// k, so the average's width grows with the run: a fixed share σ_rel of
// the run, with no warm-up and no decay to tune against the run's length.
#pragma once
#include <stddef.h>

// γ of a relative width σ_rel in (0, 0.28]: the largest real root of
// γ³ + 7γ² + (16 − σ_rel⁻²)γ + (12 − σ_rel⁻²) = 0 (σ_rel 0.10 → 6.9372).
double ema_gamma(double sigma_rel);

// After AdamW step `step` (1, 2, ...): ema ← β·ema + (1 − β)·params with
// β = (1 − 1/step)^(γ+1), so β = 0 at step 1: the average starts as the
// weights. ema, params (n).
void ema_update(float *ema, const float *params, size_t n, long step, double gamma);
