// sweep.h: the sweep's plan, shared by sweep.c (running it, its table) and
// sweep_curves.c (val MSE along the runs, each configuration against the
// first).
#pragma once
#include <limits.h>
#include <stdbool.h>
#include "ablation.h"

#define SWEEP_MAX_VALUES 16
#define SWEEP_MAX_SETS 8
#define SWEEP_CONFIGS CFG_BASE_LR2E3   // the six configurations at their own lr

typedef struct {
    Preset preset;
    char key[32];
    int n_values;
    char values[SWEEP_MAX_VALUES][24];
    int n_configs, config[SWEEP_CONFIGS];
    int n_sets;                         // --set key=value: the same for every run of the sweep
    char sets[SWEEP_MAX_SETS][64];
    int seeds, jobs, threads;
    char out_dir[PATH_MAX];
    const char *exe;
    bool log_to_file;
} SweepPlan;

// A configuration's name in a sweep: its ablation name without "p11_".
const char *config_short(int c);

// The folder of configuration p->config[c] at value v and seed k:
// <config>_<key><value>_s<seed>, e.g. base_lr8e-3_s0.
void sweep_run_name(const SweepPlan *p, int c, int v, int seed, char *out, size_t n);

// --curves: at every val check (val.tsv), each configuration's mean val MSE
// over its seeds minus the first configuration's, with its standard error;
// as a table, or with tsv one line per check for scripts/sweep_plots.sh.
void sweep_curves(const SweepPlan *p, bool tsv);
