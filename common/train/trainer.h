// trainer.h: a whole training run on CIFAR-10, with atomic checkpoints and
// an exact resume. A run lives in <out>/<name>/:
//   ckpt.safetensors  weights, AdamW moments, the EMA (ema > 0), config, and the trainer state
//                     (step, RNG states, data order, time so far)
//   loss.tsv          one line per step: step, loss, gradient norm, largest
//                     attention logit
//   val.tsv           step, val MSE: the val exam every cfg.run.val_every steps
//                     (quick preset 250, tutorial 500, smoke never)
//   metrics.json      the scorecard in the tutorial's schema plus more
//                     (val_curve: val.tsv's points)
//   samples.png       8x8 samples, the run's sampler (20 Euler steps by default)
//   samples_ema.png   the same from the EMA's weights (ema > 0)
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include "dataloader.h"
#include "io/args.h"
#include "io/config_parse.h"
#include "nn/train_step.h"

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

// train_state_init for m with what a step reads of the run r: AdamW's lr
// and weight decay, label dropout, times and the EMA. 0, or -1 when out of
// memory.
int run_train_state_init(TrainState *s, Model *m, int batch, const RunConfig *r);

const char *preset_name(Preset p);
// --preset P of a program's options (an ArgCallFn of io/args.h): P into *preset.
int preset_take(const char *value, void *preset);
// The options that say which run a program starts: --preset, and each
// --set into an ArgList; preset_config makes the config of them.
#define ARG_PRESET(preset) ARG_CALL("preset", "P", preset_take, preset, "smoke | quick | tutorial (default quick)")
#define ARG_SETS(sets) ARG_CALL("set", "key=value", args_take_list, sets, "any config key, e.g. --set qk_norm=true " \
                                "(list: --set help)")
// The config and checkpoint interval of a preset (before --set).
void preset_apply(Preset p, Config *cfg, int *ckpt_every);
// The preset's config, then every --set in order, then one check
// (config_apply); `--set help` prints the keys instead.
int preset_config(Preset p, const ArgList *sets, Config *cfg, int *ckpt_every);
// Prints what each preset is (a UsageFn of io/args.h).
void preset_describe(FILE *f);

// What a run's steps work on: the model, its training state, the data order
// and the stream of each step's noise, times and label dropout. A fresh run
// makes it with training_start, a resumed one from its checkpoint.
typedef struct {
    RunConfig run;
    Model m; bool have_model;
    TrainState ts; bool have_ts;
    DataLoader dl;                 // zeroed: freed whether or not it was set up
    Rng noise;
} Training;

// CIFAR-10's train and test sets. 0, or -1 after a message.
int load_data(CifarSet *train, CifarSet *test);
// A fresh run of cfg on train. Three streams: the weights from cfg.run.seed,
// the data order and flips from run_data_seed, each step's noise and times
// from one of their own. 0, or -1 after a message; training_free either way.
int training_start(Training *t, const Config *cfg, const CifarSet *train);
// One training step, its batch into x1 and y. Returns the loss; the rest of
// the step's numbers are in t->ts.
double training_step(Training *t, float *x1, int *y);
void training_free(Training *t);

// Exit codes of trainer_run, which the CLI returns as they are.
#define TRAIN_OK 0
#define TRAIN_ERROR 1       // data, I/O, out of memory: the message says what
#define TRAIN_USAGE 2       // bad options
#define TRAIN_DIVERGED 3    // NaN or Inf loss: stopped, last checkpoint kept
#define TRAIN_STOPPED 4     // stop_after reached (tests)

int trainer_run(const TrainOptions *o);

