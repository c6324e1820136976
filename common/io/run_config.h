// run_config.h: the settings of a training run, apart from the model it
// trains (nn/config.h): the seed, AdamW's lr and weight decay, the batch,
// how many steps, the flips, the threads and how often to check val MSE.
// A checkpoint stores both, and a resume takes its model from the
// checkpoint and its run from these (common/train/run_folder.c).
//
// The run's settings live here, beside the parser that fills them
// (config_parse.h), and not in train/: a run's record is read back below
// train/ too, by io/ (checkpoints, metrics.json) and eval/ (the ablation's
// tables), which may not include train/ (common/README.md).
#pragma once
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    // What the run computes: the same values give the same run, bit for bit
    // (with the same thread count). A resume keeps the checkpoint's.
    unsigned long long seed;    // the weights, the data order and each step's noise
    float lr;                   // AdamW learning rate
    float weight_decay;         // AdamW weight decay of 2-D tensors
    int batch;                  // images per step
    bool flip;                  // random horizontal flips of training images
    // How far it goes and how it is watched and run: a resume takes the
    // options' (config_parse.h: RUN_FIELD_PER_PROCESS).
    int steps;                  // training steps
    int val_every;              // steps between val MSE checks while training, 0 = only at the end
    // The threads are the run's, not the model's, though the model's loops
    // and matmuls are what they run: OpenMP's thread count is a setting of
    // the process (omp_set_num_threads, which oneDNN's sgemm follows), set
    // once when a program starts. nn/ reads it from OpenMP, so a checkpoint
    // trained on 2 threads loads and runs on 4; only the bits of the sums
    // may change with it, which is why a run records it.
    int threads;                // 0 = all cores
} RunConfig;

RunConfig run_config_default(void);   // the tutorial's run: seed 0, lr 3e-4, batch 128, 4,000 steps

// The one check of a run's config: each field alone (it may be filled in by
// hand, not by the parser). 0 if fine, -1 with a message in err.
int run_config_check(const RunConfig *r, char *err, size_t errlen);
