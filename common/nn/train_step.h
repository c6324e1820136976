// train_step.h: one training step of flow matching: draw noise and times
// (and, class-conditional, which labels to drop), forward, loss, backward,
// AdamW, and the EMA of the weights. Every buffer is allocated once, up
// front, by train_state_init: the step itself allocates nothing.
#pragma once
#include "adamw.h"
#include "flow.h"
#include "model.h"
#include "rng.h"

// What a step draws and keeps besides the model and AdamW: the run's keys
// label_drop, t_dist, t_mean, t_std and ema (io/run_config.h:
// run_train_state_init), in one place.
typedef struct {
    float label_drop;      // classes > 0: the probability of the null label
    TimeDist t_dist;       // uniform, or logit-normal σ(t_mean + t_std·u)
    float t_mean, t_std;
    float ema;             // σ_rel of the weights' EMA (nn/ema.h); 0: none
} StepRecipe;

typedef struct {
    Model *model;
    int batch;
    Activations act;
    BackwardScratch bw;
    float *x0, *xt, *target, *dv, *t;  // (batch, C, S, S) and (batch)
    int *y;                            // (batch) classes > 0: the last step's labels, after dropout
    StepRecipe recipe;
    float *adam_m, *adam_v;            // (n_params) AdamW moments
    float *ema;                        // (n_params) recipe.ema > 0: the EMA of the weights, else NULL
    double ema_gamma;                  // its exponent γ (ema_gamma of recipe.ema)
    int step;                          // AdamW steps taken so far
    AdamWConfig opt;
    // results of the last step
    double loss;
    double grad_norm;                  // L2 norm of all gradients
    float max_logit;                   // largest |attention logit| over all blocks
} TrainState;

// recipe NULL: uniform times, no label dropout, no EMA. With an EMA, it
// starts as the model's weights. 0, or -1 when out of memory.
int train_state_init(TrainState *s, Model *m, int batch, const AdamWConfig *opt, const StepRecipe *recipe);
void train_state_free(TrainState *s);

// Forward and backward of the flow-matching loss on data x1 (batch images)
// with given noise x0, times t and labels y (model_forward's: NULL, or
// ignored when the model is unconditional); leaves gradients in model->grads.
double train_forward_backward(TrainState *s, const float *x1, const float *x0, const float *t,
                              const int *y);

// The same loss without the backward pass (a finite-difference check calls
// it twice per probed weight: common/nn/gradcheck.h).
double train_loss(TrainState *s, const float *x1, const float *x0, const float *t, const int *y);

// AdamW on every tensor; weight decay only for tensors of two or more dims;
// then, with an EMA, ema_update with this step's number.
void train_adamw_step(TrainState *s);

// The full step: noise and times drawn from rng (x0 ~ N(0, I), then t ~
// U(0, 1), or u ~ N(0, 1) and t = σ(t_mean + t_std·u)), forward, backward,
// AdamW. Returns the loss. A class-conditional model
// trains on the images' labels y (batch, each 0..classes-1), each one
// replaced by the null label with probability s->recipe.label_drop, a uniform
// draw per image from rng after the times (into s->y); y NULL: every
// label null, nothing drawn. An unconditional model reads no labels and
// draws nothing more.
double train_step(TrainState *s, const float *x1, const int *y, Rng *rng);

double grad_l2_norm(const Model *m);
