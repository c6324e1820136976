// metrics.h: reading a run's metrics.json back, and printing scorecards.
//
// The trainer (common/train/run_metrics.c) writes runs/<name>/metrics.json in the
// tutorial's schema:
//   {"params": 1152176, "it_per_s": 6.7, "loss_spikes": 0,
//    "raw": {"val_mse": 0.2562, "uncond": {"probe_fd": 72.2}}, ...}
// plus more fields of its own (ms_per_step, preset, seed, config, probe, ...).
// This module reads those files, so that every number a program prints about
// a run is the number the run saved, never one typed into the program.
//
// The five fields above are required: a file without one of them (or with
// the wrong type) is an error naming the file and the field. probe_fd may be
// null (the trainer writes null when there was no probe); it then reads as
// NAN and prints as "-". Everything else is optional, so metrics files from
// the tutorial's own scripts read too.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "config_parse.h"

#define METRICS_ERRLEN 2400

typedef struct {
    char path[2048];        // the metrics.json it was read from
    char name[128];         // "name", else the run folder's name
    // the scorecard (required)
    long long params;
    double val_mse;         // raw.val_mse
    double probe_fd;        // raw.uncond.probe_fd, NAN when null
    double it_per_s;
    double ms_per_step;     // 1000 / it_per_s
    int loss_spikes;
    // optional extras of this project's trainer
    char preset[16];        // "" if absent
    bool has_seed;
    unsigned long long seed;
    bool has_config;        // "config" read back into cfg (every field config_set accepts)
    Config cfg;
    char probe_key[17];     // probe.key, "" if absent
    double probe_test_acc;  // probe.test_acc in [0, 1], NAN if absent
    char probe_weights[17]; // probe.weights (the fingerprint of its weights), "" if absent
    char probe_source[16];  // probe.source: "shipped", "trained", "file"; "" if absent
} RunMetrics;

// Reads `path`, which is either a metrics.json file or a run folder holding
// one. 0 on success; -1 with a message naming the file (missing file, not
// JSON, a required field missing or of the wrong type).
int metrics_read(const char *path, RunMetrics *out, char *err, size_t errlen);

// A run that diverged leaves diverged.json instead of metrics.json
// (common/train/run_metrics.c). The step it records, or -1 when path is missing
// or holds no "diverged_at_step".
int diverged_read_step(const char *path);

// |val MSE(a) − val MSE(b)|: the seed gap when a and b are one config trained
// with two seeds.
double metrics_val_mse_gap(const RunMetrics *a, const RunMetrics *b);

// True when both runs carry their config, the configs agree on every key
// but the seeds (configs_agree, config_parse.h) and the runs draw
// differently (another seed, or another data order's seed): a seed pair,
// whose val MSE gap is a seed gap.
bool metrics_is_seed_pair(const RunMetrics *a, const RunMetrics *b);

// The noise of one config measured over seeds: n values of val MSE, their
// mean, their spread sd (the sample standard deviation, dividing by n - 1)
// and the standard error of the mean se = sd / sqrt(n). With n < 2 there is
// no spread to measure: sd and se are NAN.
typedef struct { int n; double mean, sd, se; } SeedSpread;
SeedSpread seed_spread(const double *values, int n);

// The probe that scored a run. Two probe-FDs compare only when one probe
// made both: the same weights' fingerprint, key and test accuracy. A run
// that recorded no fingerprint (key and test accuracy only, as the project's
// older runs did) names a probe that can be told apart from no other: its
// probe-FD compares only with runs that recorded the same key and accuracy
// and no fingerprint either.
bool metrics_same_probe(const RunMetrics *a, const RunMetrics *b);
// The probe as a reader is told it: "the shipped probe (weights 0123...,
// test accuracy 61.47%)", "probe 2c20... (test accuracy 61.29%, weights not
// recorded)", or "no probe recorded".
void metrics_probe_label(const RunMetrics *r, char *out, size_t n);
// The run whose probe a table of runs[0..n) shows probe-FDs by: the first
// with a probe-FD; -1 when none has one.
int metrics_table_probe(const RunMetrics *runs, int n);

// The scorecard as a table, one row per run, with the columns of the
// tutorial's table script: params, val MSE, probe-FD, ms/step, spikes.
// label NULL means the run's name. other_probe: the run's probe-FD is by
// another probe than the table's (metrics_same_probe): "other probe" is
// printed instead of the number.
void metrics_print_header(FILE *f);
void metrics_print_row(FILE *f, const char *label, const RunMetrics *r, bool other_probe);

// 1152176 -> "1,152,176" (thousands separated by commas, as the tables print counts)
void with_commas(long long v, char *out, size_t n);
