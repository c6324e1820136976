// run.h: what the files of common/train share (programs call trainer.h):
//   train_loop.c   the loop: a step, its numbers, the val checks, the
//                  checkpoints, Ctrl-C; trainer_run. Read this one first.
//   run_folder.c   the run's folder: its files, its lock, loss.tsv and
//                  val.tsv, the checkpoint glue, a fresh start or a resume
//   run_metrics.c  what a finished (or diverged) run writes: the scorecard,
//                  metrics.json, samples.png, diverged.json
//   presets.c      the presets smoke, quick and tutorial
#pragma once
#include <stddef.h>
#include "dataloader.h"
#include "eval/scorecard.h"
#include "io/cifar.h"
#include "io/safetensors.h"
#include "nn/train_step.h"
#include "trainer.h"

#define ERRLEN 4608

// "error: <err>" on stderr, then rc: how a run reports a failure a call
// described into err.
static inline int run_error(const char *err, int rc) {
    fprintf(stderr, "error: %s\n", err);
    return rc;
}

// The files of a run folder (run_paths).
typedef struct {
    char dir[2048], ckpt[2100], loss[2100], val[2100], metrics[2100], samples[2100], samples_ema[2100], diverged[2100];
} RunPaths;

// The trainer's state in a checkpoint's metadata that a resume and the
// scorecard read.
typedef struct {
    int step;                       // -1 when missing or not a whole number
    double train_seconds;
    float max_logit_layers[TINYDIT_MAX_DEPTH];
} SavedProgress;

// Everything a run holds while it trains.
typedef struct {
    Training tr;                   // the model, its training state, data order and noise
    double train_seconds;
    int start, steps;              // the loop runs steps start+1 .. steps
    float max_logit_layers[TINYDIT_MAX_DEPTH];
    float *loss_hist, *gn_hist, *ml_hist;   // (steps + 1) each
    float *val_hist;                        // (steps + 1), NaN between val checks
    float last_val;                         // the latest val check, for the progress bar (NaN: none yet)
    const CifarSet *test;                   // the val exam's images
    ValExam exam; int have_exam;            // its buffers, made at the first check and kept
} Run;

// run_folder.c
void run_paths(RunPaths *p, const char *dir);
// loss.tsv (step, loss, grad_norm, max_logit) and val.tsv (step, val MSE):
// the rows with step <= upto into arrays indexed step - 1. The last step
// read (loss.tsv) or the rows read (val.tsv), or -1.
int read_loss_tsv(const char *path, int upto, float *loss, float *gnorm, float *logit, char *err, size_t errlen);
int read_val_tsv(const char *path, int upto, float *val, char *err, size_t errlen);
// val.tsv rewritten whole from the checks among the first n steps.
int write_val_tsv(const char *path, int n, const float *val, char *err, size_t errlen);
int save_checkpoint(const RunPaths *rp, const Model *m, const RunConfig *run, const TrainState *ts, const Rng *noise,
                    const DataLoader *dl, double train_seconds, const float *max_logit_layers,
                    Preset preset, char *err, size_t errlen);
void read_progress(const SafeTensors *st, int depth, SavedProgress *p);
void remove_stale_temp_files(const char *dir);
int lock_run_dir(const char *dir);
int check_existing_run(const TrainOptions *o, const RunPaths *rp, int have_ckpt, int steps);
// A fresh run, or one resumed from its checkpoint: TRAIN_OK or TRAIN_ERROR.
int start_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train);
int resume_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train);
void run_free(Run *r);

// run_metrics.c
// The scorecard of the run's checkpoint, metrics.json and samples.png.
int finish_run(const RunPaths *rp, const char *name, Preset preset, const CifarSet *test, double wall_before);
// diverged.json: the step whose loss or gradient was not finite.
void record_divergence(const Run *r, const RunPaths *rp, int step, double loss);
