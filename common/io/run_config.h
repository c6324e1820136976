// run_config.h: the settings of a training run, apart from the model it
// trains (nn/config.h). A checkpoint stores both; a resume takes the model
// and what the run computes from it, and how far and how it runs from its
// own options (config_for_resume, config_parse.h).
//
// They live here, beside their parser, and not in train/: io/ reads a run's
// record back too (checkpoints, metrics.json), and may not include train/.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "nn/config.h"
#include "nn/train_step.h"

typedef struct {
    // What the run computes: the same values give the same run, bit for bit
    // (with the same thread count). A resume keeps the checkpoint's.
    unsigned long long seed;    // the weights, the data order and each step's noise
    int data_seed;              // the data order (and flips) alone, from its own seed; -1 = seed's
    float lr;                   // AdamW learning rate
    float weight_decay;         // AdamW weight decay of 2-D tensors
    int batch;                  // images per step
    bool flip;                  // random horizontal flips of training images
    float label_drop;           // classes > 0: each image's label becomes the null label with this probability
    TimeDist t_dist;            // training times: uniform, or logit-normal σ(t_mean + t_std·u)
    float t_mean, t_std;        // the logit-normal's location and scale
    float ema;                  // σ_rel of the power-function EMA of the weights, 0 = none
    // How far it goes and how it is watched and run: a resume takes the
    // options' (config_for_resume).
    int steps;                  // training steps
    int val_every;              // steps between val MSE checks while training, 0 = only at the end
    // The threads are the run's, not the model's: OpenMP's count, set once
    // for the process. nn/'s loops split fixed blocks over whatever threads
    // there are, so a checkpoint trained on 2 threads runs on 4; a run
    // records the count because the same bits are promised for the same
    // seed and thread count.
    int threads;                // 0 = all cores
    // How the run's samples are drawn (samples.png, probe-FD): not trained,
    // so a resume (and a scorecard of a checkpoint) takes the options'.
    float guidance;             // classifier-free guidance scale w: 1 the conditional model, 0 the unconditional
    SamplerKind sampler;        // euler | heun
    int sample_steps;           // the sampler's steps (model evaluations: steps, 2·steps for heun)
} RunConfig;

// Every field of RunConfig, one row each (nn/config.h): the run's, then
// the sampling's. Ends with a row whose key is NULL.
extern const ConfigKey RUN_KEYS[];

RunConfig run_config_default(void);   // the tutorial's run: seed 0, lr 3e-4, batch 128, 4,000 steps

// The seed of the data order and flips: data_seed, or the run's seed when
// it is -1. Set apart, it holds the data order still while the seed changes
// the weights and the noise, or the reverse.
unsigned long long run_data_seed(const RunConfig *r);

// Each field of a run's config against its row of RUN_KEYS (it may be
// filled in by hand, not by the parser). 0, or -1 with a message.
int run_config_check(const RunConfig *r, char *err, size_t errlen);
