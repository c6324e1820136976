// ablation_runs.h: the runs of the ablation (common/train/ablation.h: its
// configurations and the names of their runs) read back (ablation_runs.c):
// the metrics.json of every seed, the tutorial's seed gap and the standard
// error over seeds. Step 6 prints them as tables (ablation_table.c) and as
// the Markdown report (ablation_report.c); the lab trains them (lab/).
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "io/metrics.h"
#include "train/ablation.h"

// Reading the runs. The scorecard fields of each metrics.json are
// read by common/io/metrics.h; the table adds the loss curve and the config's lr.
#define CURVE_MAX 512

typedef struct {
    bool present;             // metrics.json read and understood
    char note[METRICS_ERRLEN];// why not, when !present
    RunMetrics m;             // params, val_mse, probe_fd (NAN if null), ms_per_step, loss_spikes, preset, cfg
    bool other_probe;         // its probe-FD is by another probe than the folder's (AblationResults.probe)
    double lr;                // config.lr, NAN if the file has no config
    int steps;                // config.steps, 0 if the file has no config
    double train_seconds;     // "train_seconds": the steps, summed over a resumed run's starts; NAN if absent
    double scorecard_seconds; // the sum of "scorecard_seconds" (val MSE, sampling, probe-FD); NAN if absent
    int n_curve;              // "curve": [[step, mean loss of the window], ...]
    double curve_step[CURVE_MAX], curve_loss[CURVE_MAX];
} AblationRow;

// One configuration over its seeds.
typedef struct {
    AblationRow seed[ABLATION_MAX_SEEDS];   // seed[k]: the run of seed k, present or not
    int n;                    // seeds present
    SeedSpread val;           // val MSE over the present seeds (common/io/metrics.h)
    double probe_fd;          // mean over the seeds that have one, NAN if none or if other_probe
    bool other_probe;         // a seed's probe-FD is by another probe than the folder's: no mean
    double ms_per_step;       // mean over the present seeds
    int spikes;               // summed over the present seeds
    long long params;         // of the first present seed
} ConfigResults;

typedef struct {
    char dir[1024];
    ConfigResults cfg[ABLATION_CONFIGS];
    int n_present;            // runs (any seed) with a metrics.json
    int nine_present;         // of the tutorial's nine
    // the tutorial's method: one pair of baseline seeds
    bool have_gap;            // both p11_base_s0 and p11_base_s1 are there
    double base_mean, gap;    // mean of the two seeds' val MSE, |s0 - s1|
    bool not_seed_pair;       // the two baselines differ in more than the seed
    bool mixed_presets;       // the present runs come from different presets
    // the probe the folder's probe-FDs are by: the shipped one (the first
    // run's with one when its file cannot be read); a run by another probe
    // (metrics_same_probe) is other_probe, never averaged or shown beside it
    bool has_probe;           // a run has a probe-FD
    RunMetrics probe;         // its probe_* fields name the probe
    int other_probe_runs;     // runs with a probe-FD by another probe
    bool dir_missing;         // there is no such folder at all
} AblationResults;

// Reads DIR/<name>/metrics.json of every configuration's seeds 0 to
// ABLATION_MAX_SEEDS - 1. A missing or broken file gives a run with
// present = false and a note, never an error.
void results_load(const char *dir, AblationResults *res);
// results_load of dir, and of ref_dir when it is not NULL (else *ref = NULL).
// NULL (and *ref = NULL) with a message when out of memory; free both.
AblationResults *results_load_pair(const char *dir, const char *ref_dir, AblationResults **ref);
// One of the tutorial's nine runs (r = RUN_BASE_S0 ... RUN_QKNORM_LR2E3).
const AblationRow *results_run(const AblationResults *res, int r);
// Reads one metrics.json into a row. 0, or -1 with row->note saying why.
int ablation_row_read(const char *path, AblationRow *row);

// The tutorial's verdict of one val MSE against one seed gap: delta = val -
// base_mean; within the gap (|delta| <= gap) it is "same", beyond it a gain
// (lower is better) or a loss, with |delta| in units of the gap. Writes e.g.
// "same", "gain, 7.3 gaps", "loss, 1.2 gaps" into out; *gaps = |delta| / gap.
void verdict(double val, double base_mean, double gap, char *out, size_t outlen, double *gaps);

// Our verdict, two means over seeds: compare_means (common/io/metrics.h).
