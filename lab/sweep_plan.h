// sweep_plan.h: a sweep's plan and its run names, shared by sweep.c
// (parsing it, running it, its table) and sweep_curves.c (val MSE along the
// runs, each configuration against the first).
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "../step6_ablation/ablation_runs.h"
#include "train/trainer.h"

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
static inline const char *config_short(int c) { return ABLATION_CONFIG[c].name + strlen("p11_"); }

// The folder of configuration p->config[c] at value v and seed k:
// <config>_<key><value>_s<seed>, e.g. base_lr8e-3_s0.
static inline void sweep_run_name(const SweepPlan *p, int c, int v, int seed, char *out, size_t n) {
    snprintf(out, n, "%s_%s%s_s%d", config_short(p->config[c]), p->key, p->values[v], seed);
}

// `lab sweep` (sweep.c; argv[0] is the command's name).
int cmd_sweep(int argc, char **argv);
