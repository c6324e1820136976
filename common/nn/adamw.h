// adamw.h: AdamW (Loshchilov & Hutter), as torch.optim.AdamW computes it.
//   p ← p − lr·wd·p                      (decoupled weight decay)
//   m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//   p ← p − lr · (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)
#pragma once
#include <stddef.h>

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} AdamWConfig;

AdamWConfig adamw_default(float lr);   // betas (0.9, 0.999), eps 1e-8, wd 0

// One update of n values at step t (t counts from 1). wd is the weight decay
// for this tensor (the model passes 0 for tensors of fewer than 2 dimensions).
void adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                  int t, const AdamWConfig *c, float wd);
