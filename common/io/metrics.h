// metrics.h: reading a run's metrics.json back, and printing scorecards.
//
// A run's metrics.json is in the tutorial's schema, plus fields of its own:
//   {"params": 1152176, "it_per_s": 6.7, "loss_spikes": 0,
//    "raw": {"val_mse": 0.2562, "uncond": {"probe_fd": 72.2}}, ...}
// These five are required (probe_fd may be null: NAN, printed "-"); every
// number a program prints about a run is the number the run saved.
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
    double ms_per_step;     // 1000 / it_per_s
    int loss_spikes;
    // optional extras of this project's trainer
    char preset[16];        // "" if absent
    bool has_config;        // "config" read back into cfg (every field config_set accepts)
    Config cfg;
    char probe_key[17];     // probe.key, "" if absent
    double probe_test_acc;  // probe.test_acc in [0, 1], NAN if absent
    char probe_weights[17]; // probe.weights (the fingerprint of its weights), "" if absent
    char probe_source[16];  // probe.source: "shipped", "trained", "file"; "" if absent
    // a run with an EMA of its weights (ema > 0): the same scorecard of the EMA's
    bool has_ema;           // "ema" there
    double ema_val_mse;     // ema.val_mse
    double ema_probe_fd;    // ema.uncond.probe_fd, NAN when null
} RunMetrics;

// Reads a metrics.json, or the one in the run folder `path`. 0, or -1 with a
// message naming the file and, for a missing or mistyped field, the field.
int metrics_read(const char *path, RunMetrics *out, char *err, size_t errlen);

// The step a diverged run's diverged.json records, or -1 when there is none.
int diverged_read_step(const char *path);

// |val MSE(a) − val MSE(b)|: the seed gap of a seed pair.
double metrics_val_mse_gap(const RunMetrics *a, const RunMetrics *b);

// True when both runs carry their config, the configs agree on every key
// but the seeds (configs_agree, config_parse.h) and the runs draw
// differently (another seed, or another data order's seed): a seed pair,
// whose val MSE gap is a seed gap.
bool metrics_is_seed_pair(const RunMetrics *a, const RunMetrics *b);

// The noise of one config over seeds: the mean of n values, their sample
// standard deviation sd (dividing by n - 1) and the standard error of the
// mean se = sd / sqrt(n); sd and se are NAN for n < 2.
typedef struct { int n; double mean, sd, se; } SeedSpread;
SeedSpread seed_spread(const double *values, int n);

// Our verdict: two means over seeds, compared with the standard error of
// their difference, se = sqrt(sd_a^2 / n_a + sd_b^2 / n_b). A difference of
// more than COMPARE_SE standard errors is a gain (lower val MSE) or a loss;
// anything smaller is "not resolved": the seeds cannot tell it from noise.
// When one side has a single seed its spread is not measured: the other
// side's is assumed (assumed = true, and the verdict ends in '*'). With no
// spread on either side there is no verdict ("? no spread").
#define COMPARE_SE 2.0
typedef struct {
    double diff;              // mean(a) - mean(b)
    double se;                // standard error of diff, NAN when unknown
    double z;                 // |diff| / se
    bool assumed;             // one side's spread was assumed, not measured
    bool resolved;            // |diff| > COMPARE_SE * se
    char verdict[48];         // "gain (3.1 se)", "loss (2.4 se)", "not resolved (0.8 se)", + "*"
} Comparison;
void compare_means(SeedSpread a, SeedSpread b, Comparison *out);

// Two probe-FDs compare only when one probe made both: the same key and
// test accuracy, and the same weights' fingerprint where both recorded one
// (the project's older runs recorded none: key and accuracy tell theirs).
bool metrics_same_probe(const RunMetrics *a, const RunMetrics *b);
// The probe as a reader is told it: "the shipped probe (weights 0123...,
// test accuracy 61.47%)", "probe 2c20... (test accuracy 61.29%, weights not
// recorded)", or "no probe recorded".
void metrics_probe_label(const RunMetrics *r, char *out, size_t n);
// The run whose probe a table of runs[0..n) shows probe-FDs by: the first
// with a probe-FD; -1 when none has one.
int metrics_table_probe(const RunMetrics *runs, int n);

// The scorecard as a table, a row a run (label NULL: the run's name):
// params, val MSE, probe-FD ("other probe" when other_probe), ms/step, spikes;
// a run with an EMA, a second row "its EMA" with the EMA's val MSE and probe-FD.
void metrics_print_header(FILE *f);
void metrics_print_row(FILE *f, const char *label, const RunMetrics *r, bool other_probe);

// 1152176 -> "1,152,176" (thousands separated by commas, as the tables print counts)
void with_commas(long long v, char *out, size_t n);
