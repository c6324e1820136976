// trainer.h: a whole training run on CIFAR-10: data order,
// AdamW steps, a progress bar, atomic checkpoints, exact resume, and at the
// end the scorecard, metrics.json, loss.tsv and a grid of samples.
//
// A run lives in <out>/<name>/:
//   ckpt.safetensors  weights, AdamW moments, config, and the trainer state
//                     (step, RNG states, data order, time so far)
//   loss.tsv          one line per step: step, loss, gradient norm, largest
//                     attention logit
//   val.tsv           step, val MSE: the val exam every cfg.run.val_every steps
//                     (quick preset 250, tutorial 500, smoke never)
//   metrics.json      the scorecard in the tutorial's schema plus more
//                     (val_curve: val.tsv's points)
//   samples.png       8x8 samples, 20 Euler steps
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "io/config_parse.h"

// Runs go to the project's runs/ folder by default, wherever a program is
// started from: default_runs_dir() of io/paths.h, found at run time.

typedef enum { PRESET_SMOKE, PRESET_QUICK, PRESET_TUTORIAL } Preset;

typedef struct {
    const char *name;       // run name (folder under out_dir)
    const char *out_dir;    // "runs"
    Preset preset;
    Config cfg;             // the model and its run: preset applied, then every --set
    bool resume;            // continue a stopped run from its checkpoint
    int ckpt_every;         // steps between checkpoints
    bool scorecard;         // compute val MSE and probe-FD at the end
    int stop_after;         // end the run (as if killed) after this step; 0 = never. For tests.
} TrainOptions;

const char *preset_name(Preset p);
int preset_parse(const char *s, Preset *out);
// The config and checkpoint interval of a preset (before --set).
void preset_apply(Preset p, Config *cfg, int *ckpt_every);
// Prints what each preset is.
void preset_describe(void *file /* FILE* */);

// A fresh run draws from three streams, all from cfg.run.seed: the weights
// (model_init_weights(seed)), the data order and flips (dataloader_init(seed)),
// and the noise and times of each step, seeded with trainer_noise_seed(seed)
// so that they differ from the weights' stream. tools/trace_steps.c starts
// the same way to write out a run's first steps.
uint64_t trainer_noise_seed(uint64_t seed);

// Exit codes of trainer_run, which the CLI returns as they are.
#define TRAIN_OK 0
#define TRAIN_ERROR 1       // data, I/O, out of memory: the message says what
#define TRAIN_USAGE 2       // bad options
#define TRAIN_DIVERGED 3    // NaN or Inf loss: stopped, last checkpoint kept
#define TRAIN_STOPPED 4     // stop_after reached (tests)

int trainer_run(const TrainOptions *o);

