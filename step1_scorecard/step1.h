// step1.h: the parts of step1_scorecard, shared by main.c and the tests.
//   main.c     the scorecard of the runs, the seed gap, the noise
//   runs.c     which runs: the baseline's seeds trained or found, given folders
//   options.c  the command line
//   legend.c   the words under the scorecard
//   figures.c  the pictures of the noise: the seeds' loss curves and val MSEs
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "io/metrics.h"
#include "train/trainer.h"

// The most baseline seeds step 1 reads.
#define STEP1_MAX_SEEDS 32

// Draws into dir, with common/io/figure.h:
//   step1_loss_curves  the training loss of every seed (from each run's
//                      loss.tsv, beside its metrics.json), raw and smoothed
//   step1_val_mse      every seed's val MSE, the band of the first pair's seed
//                      gap around their mean (the tutorial's yardstick) and the
//                      band of one spread around the mean of all seeds
// and prints one figure_report line. Returns the number of PNGs drawn, or -1
// after an error message (the scorecard printed before it stands).
int step1_figures(const RunMetrics *runs, int n, const char *dir);

// ---------------------------------------------------------------------------
// options.c: the command line.

// The project's own baseline seeds, committed: what the program shows when
// it is given nothing to do.
#define COMMITTED_RUNS "results/quick"

typedef struct {
    Preset preset;
    int seeds, threads;
    const char *out_dir;
    const char *figures;        // NULL: --no-figures
} BaselinePlan;

typedef struct {
    BaselinePlan plan;
    bool train;                 // --preset, --seeds, --threads or --out: train the baseline
    bool figures_given;
    bool preset_given;
    char **paths;               // the run folders given (inside argv)
    int npaths;
} Step1Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step1_parse_options(int argc, char **argv, Step1Options *o);

// ---------------------------------------------------------------------------
// runs.c: where the runs come from.

// Seeds 0 .. p->seeds - 1 of the baseline, each found finished, continued or
// trained now, then every further seed found finished (trained by step 6's
// --seeds, or by --seeds here before), read into runs (room for
// STEP1_MAX_SEEDS). The count, or -1 after a message.
int step1_baseline_seeds(const BaselinePlan *p, RunMetrics *runs);

// The run folder arg names, as a path that exists if one does: a relative
// path not found from here is tried from the project root and in its runs/.
void step1_resolve_run(const char *arg, char *out, size_t n);

// The committed seeds COMMITTED_RUNS/p11_base_s0, _s1, ... that are finished:
// their folders in paths (room for STEP1_MAX_SEEDS, each malloc'd), the
// folder they are in in dir. The count, or -1 after a message.
int step1_committed_seeds(char *dir, size_t dirlen, char **paths);

// ---------------------------------------------------------------------------
// legend.c: the words under the scorecard.

// What the numbers are, built from the constants the scorecard uses, so the
// words cannot drift from what was measured.
void print_legend(const RunMetrics *runs, int n);
// The probe the table of runs[0..n) shows probe-FDs by: the shipped one
// (into *shipped), or the first run's with a probe-FD when the shipped file
// cannot be read; NULL when no run has a probe-FD.
const RunMetrics *table_probe(const RunMetrics *runs, int n, RunMetrics *shipped);
// What N seeds per configuration buy at the spread sd: the standard error
// of a difference of two means, and the smallest difference it resolves.
void print_what_seeds_buy(double sd);
