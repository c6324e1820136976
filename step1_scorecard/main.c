// Step 1: how we measure "better".
//
// Before changing anything in the block, we fix how a change will be judged.
// Every training run in this project ends with the same four numbers, and
// every one of them is computed by the same code for every model:
//
//   val MSE    the flow-matching loss on the first 2,000 CIFAR-10 test images.
//              The noise and the times are drawn once from a seed of their
//              own (VAL_SEED), not from the run's seed, so every model sits
//              exactly the same exam. Lower is better.
//              -> scorecard_val_mse in common/eval/scorecard.c
//   probe-FD   1,000 samples (20 Euler steps from fixed noise) against the
//              10,000 real test images, as a Fréchet distance between two
//              clouds of features of a small CIFAR-10 classifier that the
//              project trained once and ships. FID's formula, our own network:
//              compare it only with the same probe's. Lower is better.
//              -> common/eval/probe.c (features), common/eval/frechet.c (distance)
//   ms/step    how long a training step took, on a machine shared with other
//              work: small differences are noise.
//              -> the step loop of trainer_run in common/train/train_loop.c
//   spikes     steps whose loss jumps above 1.5x the median of the 100 before.
//              -> count_loss_spikes in common/eval/spikes.c
//
// And the noise judges the others. We train the baseline several times,
// changing nothing but the seed (0, 1, ...). The distance between two seeds'
// val MSEs is the seed gap; the spread of all of them (their standard
// deviation) is the noise of one run. A change to the model that moves val
// MSE by less than the noise has not been shown to do anything. One pair is
// one draw of a noisy distance: it can be several times smaller than the
// spread, so the program prints what more seeds buy.
//
// The runs are the project's committed baseline seeds (no arguments: read
// in a second, nothing written), the baseline trained here at two seeds or
// more (--preset, --seeds, --out, --threads), or the run folders given.
// Every number is read back from the runs' metrics.json files
// (common/io/metrics.c), none is typed in here. This file is the scorecard
// and the noise; which runs to read is runs.c's (step1.h).
//
//   cd step1_scorecard && make step1 && ./step1_scorecard
//   ./step1_scorecard --preset smoke
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step1.h"
#include "io/paths.h"
#include "io/bench.h"
#include "io/blas_kernel.h"

// The table, then the seed gap of every pair that is one config at two seeds.
// A probe-FD by another probe than the shipped one is not shown.
static void print_scorecard(const RunMetrics *runs, int n) {
    printf("\n");
    metrics_print_header(stdout);
    RunMetrics shipped;
    const RunMetrics *probe = table_probe(runs, n, &shipped);
    for (int i = 0; i < n; i++)
        metrics_print_row(stdout, NULL, &runs[i], probe && !metrics_same_probe(&runs[i], probe));
    int pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!metrics_is_seed_pair(&runs[i], &runs[j])) continue;
            if (pairs++ == 0) printf("\n");
            printf("seed gap |val MSE(seed %llu) - val MSE(seed %llu)| = %.4f   (%s, %s)\n",
                   runs[i].cfg.run.seed, runs[j].cfg.run.seed, metrics_val_mse_gap(&runs[i], &runs[j]),
                   runs[i].name, runs[j].name);
        }
    if (pairs == 0 && n > 1)
        printf("\n(no two of these runs are one config at two seeds, so there is no seed gap here)\n");
}

// ---------------------------------------------------------------------------
// The noise: n runs of one config at n seeds (n >= 2).
static void print_noise(const RunMetrics *runs, int n) {
    double vals[STEP1_MAX_SEEDS] = {0};
    for (int i = 0; i < n; i++) vals[i] = runs[i].val_mse;
    SeedSpread s = seed_spread(vals, n);
    double gap = metrics_val_mse_gap(&runs[0], &runs[1]);
    printf("\nthe noise of one run, from %d seeds of one config (", n);
    for (int i = 0; i < n && i < 4; i++) printf("%s%s", i ? ", " : "", runs[i].name);
    printf("%s):\n", n > 4 ? ", ..." : "");
    printf("  mean val MSE %.4f, spread (sample standard deviation) %.4f, standard error of the mean %.4f\n",
           s.mean, s.sd, s.se);
    printf("  the seed gap of the first pair, %.4f, is one draw of the distance between two runs.\n"
           "  Two draws of the same noise differ on average by 2/sqrt(pi) = 1.13 spreads (%.4f here),\n"
           "  and one pair in four falls below half a spread: one gap can make the noise look several\n"
           "  times smaller (or larger) than it is, and it is the baseline's noise, not another config's.\n",
           gap, 1.1284 * s.sd);
    if (n == 2)
        printf("  with two seeds the spread is the gap / sqrt(2) and just as uncertain: a third seed\n"
               "  (--seeds 3) is the first that measures it.\n");
    print_what_seeds_buy(s.sd);
}

// Given runs: the noise of every group of two or more that are one config at
// several seeds; the largest group is copied into *largest (n_largest runs)
// for the figures.
static void print_noise_of_groups(const RunMetrics *runs, int n, RunMetrics *largest, int *n_largest) {
    bool *done = calloc((size_t)n, sizeof *done);
    RunMetrics *group = calloc(STEP1_MAX_SEEDS, sizeof *group);
    *n_largest = 0;
    for (int i = 0; i < n && done && group; i++) {
        if (done[i] || !runs[i].has_config) continue;
        int g = 0;
        group[g++] = runs[i];
        for (int j = i + 1; j < n && g < STEP1_MAX_SEEDS; j++)
            if (!done[j] && metrics_is_seed_pair(&runs[i], &runs[j])) { group[g++] = runs[j]; done[j] = true; }
        if (g < 2) continue;
        print_noise(group, g);
        if (g > *n_largest) { memcpy(largest, group, sizeof *group * (size_t)g); *n_largest = g; }
    }
    free(done);
    free(group);
}

// ---------------------------------------------------------------------------
// Asked to train: the baseline at seeds 0, 1, ... (runs.c finds or trains them)
static const char *const SMOKE_WARNING =
    "note: smoke runs (a tiny model, a few steps) test the machinery, not the model: their numbers\n"
    "say nothing about it. Use --preset quick or tutorial.\n";

static int baseline_runs(const BaselinePlan *p) {
    printf("Step 1: the baseline trained with seeds 0 to %d, at the %s preset\n", p->seeds - 1,
           preset_name(p->preset));
    if (p->preset == PRESET_SMOKE) printf("%s", SMOKE_WARNING);
    RunMetrics *runs = calloc(STEP1_MAX_SEEDS, sizeof *runs);
    if (!runs) { fprintf(stderr, "error: out of memory\n"); return 1; }
    int n = step1_baseline_seeds(p, runs);
    if (n < 0) { free(runs); return 1; }
    print_scorecard(runs, n);
    print_noise(runs, n);
    print_legend(runs, n);
    if (p->preset == PRESET_SMOKE) printf("\n%s", SMOKE_WARNING);
    if (p->figures) step1_figures(runs, n, p->figures);
    free(runs);
    return 0;
}

// ---------------------------------------------------------------------------
// Given folders: their scorecard. committed: the project's own runs, each
// timed beside whatever else its machine ran, so their ms/step is not shown.
static int existing_runs(char **paths, int n, const char *figures, bool committed) {
    RunMetrics *runs = calloc((size_t)n, sizeof *runs), *group = calloc(STEP1_MAX_SEEDS, sizeof *group);
    if (!runs || !group) { free(runs); free(group); fprintf(stderr, "error: out of memory\n"); return 1; }
    for (int i = 0; i < n; i++) {
        char path[2048], err[METRICS_ERRLEN];
        step1_resolve_run(paths[i], path, sizeof path);
        if (metrics_read(path, &runs[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            free(runs); free(group);
            return 1;
        }
        if (committed) runs[i].ms_per_step = NAN;
    }
    print_scorecard(runs, n);
    int n_group;
    print_noise_of_groups(runs, n, group, &n_group);
    print_legend(runs, n);
    // the figures of the largest group of seeds, if there is one
    int rc = figures && n_group >= 2 && step1_figures(group, n_group, figures) < 0;
    free(runs); free(group);
    return rc;
}

// ---------------------------------------------------------------------------
// No arguments: the committed seeds, and how to train your own.
static int committed_runs(const char *figures) {
    char dir[2048], *paths[STEP1_MAX_SEEDS];
    int n = step1_committed_seeds(dir, sizeof dir, paths);
    if (n < 0) return 1;
    int rc = 1;
    char step1[4096], lab[4096];   // the programs, named as a command typed here would name them
    project_command(step1, sizeof step1, "step1_scorecard/step1_scorecard");
    project_command(lab, sizeof lab, "lab/lab");
    if (n < 2) {
        fprintf(stderr, "error: %s holds %d finished baseline seed(s) (p11_base_s0, _s1, ...); two are needed.\n"
                        "Train your own: %s --preset quick\n", dir, n, step1);
    } else {
        printf("Step 1: the scorecard of the project's %d committed baseline seeds (%s, quick preset)\n",
               n, COMMITTED_RUNS);
        rc = existing_runs(paths, n, figures, true);
        printf("\ntrain your own: %s --preset quick   (two seeds, into runs/; how long they\n"
               "take on this machine: %s estimate --preset quick, which times a few steps first;\n"
               "--preset smoke trains two tiny ones, to try the machinery)\n", step1, lab);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    return rc;
}

// ---------------------------------------------------------------------------
int main(int argc, char **argv) {
    restart_fitted(argv);   // OpenBLAS's kernel and OpenMP's waiting: io/blas_kernel.h
    Step1Options o;
    int rc = step1_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.npaths > 0) return existing_runs(o.paths, o.npaths, o.plan.figures, false);
    if (o.train) return baseline_runs(&o.plan);
    return committed_runs(o.figures_given ? o.plan.figures : NULL);   // draws only if asked
}
