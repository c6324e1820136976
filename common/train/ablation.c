// ablation.c: the ablation's configurations and the names of their runs
// (ablation.h).
#include <stdio.h>
#include <string.h>
#include "ablation.h"

// The order is the table's order. Every configuration differs from the
// baseline in its own switches; the baseline's seeds differ only in the seed,
// and their spread is the yardstick for every other row.
const AblationConfig ABLATION_CONFIG[ABLATION_CONFIGS] = {
    { "p11_base",         "baseline",          { NULL } },
    { "p11_rmsnorm",      "+ RMSNorm",         { "norm=rmsnorm", NULL } },
    { "p11_qknorm",       "+ QK-norm",         { "qk_norm=true", NULL } },
    { "p11_swiglu",       "+ SwiGLU",          { "mlp=swiglu", NULL } },
    { "p11_rope",         "+ 2D RoPE",         { "pos=rope2d", NULL } },
    { "p11_all",          "all four",          { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL } },
    { "p11_base_lr2e3",   "baseline, lr 2e-3", { "lr=2e-3", NULL } },
    { "p11_qknorm_lr2e3", "+ QK-norm, lr 2e-3",{ "qk_norm=true", "lr=2e-3", NULL } },
    { "p11_adazero",      "+ adaLN-Zero",      { "ada=zero", NULL } },
};

const AblationRun ABLATION[ABLATION_RUNS] = {
    { "p11_base_s0",      "baseline (seed 0)",  CFG_BASE, 0 },
    { "p11_base_s1",      "baseline (seed 1)",  CFG_BASE, 1 },
    { "p11_rmsnorm",      "+ RMSNorm",          CFG_RMSNORM, 0 },
    { "p11_qknorm",       "+ QK-norm",          CFG_QKNORM, 0 },
    { "p11_swiglu",       "+ SwiGLU",           CFG_SWIGLU, 0 },
    { "p11_rope",         "+ 2D RoPE",          CFG_ROPE, 0 },
    { "p11_all",          "all four",           CFG_ALL, 0 },
    { "p11_base_lr2e3",   "baseline, lr 2e-3",  CFG_BASE_LR2E3, 0 },
    { "p11_qknorm_lr2e3", "+ QK-norm, lr 2e-3", CFG_QKNORM_LR2E3, 0 },
};

void ablation_run_name(int config, int seed, char *out, size_t outlen) {
    if (config == CFG_BASE || seed > 0) snprintf(out, outlen, "%s_s%d", ABLATION_CONFIG[config].name, seed);
    else snprintf(out, outlen, "%s", ABLATION_CONFIG[config].name);
}

int ablation_run_parse(const char *name, int *config, int *seed) {
    // by construction every name is made by ablation_run_name: try them all
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            char n[64];
            ablation_run_name(c, k, n, sizeof n);
            if (strcmp(n, name) == 0) { *config = c; *seed = k; return 0; }
        }
    return -1;
}

int ablation_config_seeds(int config, int n) {
    if (config == CFG_ADAZERO && n < 2) return 0;   // not one of the tutorial's nine
    return config == CFG_BASE && n < 2 ? 2 : n;
}
