// estimate.h: how long the main job will take on this machine, said before
// it starts (estimate.c). `lab estimate` times a few real steps of every
// configuration here, then adds up the job: every run's steps, val checks and
// scorecard, one at a time or --jobs N side by side (the probe classifier of
// the scorecard is the shipped one: nothing to train). The timing is estimate.c's; the arithmetic
// is these functions, on given timings, so the tests can pin it.
#pragma once
#include <stdbool.h>
#include "plan.h"

// What one preset's work costs here, in milliseconds unless named otherwise.
typedef struct {
    double step_ms[ABLATION_CONFIGS]; // one training step of each configuration, on all threads
    double exam_ms_per_image;         // the val exam, one image, the baseline (a forward pass)
    double sample_ms_per_image;       // one Euler step of one sample, the baseline (a forward pass)
    double fresh_ms;                  // the scorecard's first passes through fresh buffers, beyond warm ones
    double probe_ms_per_image;        // the probe's features of one image
    double data_seconds;              // CIFAR-10 read from disk: once per run
    double jobs_factor;               // a step of one of --jobs 2's runs, the other beside it / on all threads
} JobTimings;

// The work left in one run of configuration c, whose config is cfg, of which
// steps_done steps are done (its loss.tsv; -1: finished, nothing left).
typedef struct {
    int config;
    Config cfg;
    int steps_done;
} RunWork;

// Seconds of one run: its steps, its val checks (every cfg.val_every steps,
// VAL_IMAGES images) and its scorecard (val MSE, FD_SAMPLES samples of
// FD_EULER_STEPS, the probe's features of the test set and of the samples;
// a class-conditional run's as many more at its guidance, flow_guided_rows
// forward passes a step),
// plus reading the data. The other configurations' forward passes cost the
// baseline's times the ratio of their steps. factor multiplies the compute
// (1 on all threads, t->jobs_factor for a run of --jobs 2). 0 for a finished run.
double estimate_run_seconds(const JobTimings *t, const RunWork *w, double factor);

// The wall time of runs of these durations started in this order, `jobs` at
// a time, each in the first free place (as xargs -P does).
double schedule_seconds(const double *run_s, int n, int jobs);

// The whole job's seconds: the baseline pair (the runs of phase 0), then
// the others (phase 1), each phase `jobs` at a time.
double estimate_job(const JobTimings *t, const RunWork *runs, const int *phase, int n, int jobs);

// The faster arrangement of the job by estimate_job: 2 (two runs side by
// side) if it is faster than 1 (one at a time), else 1.
int estimate_faster_jobs(const JobTimings *t, const RunWork *runs, const int *phase, int n);

// A duration as "1:02:03" or "12:34" (minutes and seconds).
void format_duration(double seconds, char *out, size_t n);

// `lab estimate` (argv[0] is the command's name).
int cmd_estimate(int argc, char **argv);
