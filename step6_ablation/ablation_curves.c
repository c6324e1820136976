// ablation_curves.c: when does an upgrade pull ahead of the baseline?
//
// Each run's metrics.json keeps its loss curve: "curve" is the mean training
// loss of every window of steps (250 at the quick and tutorial presets). Over
// a configuration's seeds, window by window, that gives a mean, a spread and,
// against the baseline's seeds, a difference with its standard error: the
// same arithmetic as the val MSE table (compare_means), applied to the
// curve. The tutorial says 2D RoPE "pulled ahead from step 750"; this is
// the table that checks it:
//
//     step6_ablation table --curves RUNS
//
// The lr 2e-3 pair is left out: it trains at another learning rate, so its
// curve is not the baseline's to set it against (the table's lr section
// prints its curves).
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ablation_table.h"
#include "io/bench.h"

static const int CURVE_CONFIGS[] = { CFG_RMSNORM, CFG_QKNORM, CFG_SWIGLU, CFG_ROPE, CFG_ALL };
#define N_CURVE_CONFIGS (int)(sizeof CURVE_CONFIGS / sizeof CURVE_CONFIGS[0])

// Window w's mean loss over the seeds of cr that have the window.
static SeedSpread window_spread(const ConfigResults *cr, int w) {
    double v[ABLATION_MAX_SEEDS];
    int n = 0;
    for (int k = 0; k < ABLATION_MAX_SEEDS; k++)
        if (cr->seed[k].present && w < cr->seed[k].n_curve) v[n++] = cr->seed[k].curve_loss[w];
    return seed_spread(v, n);
}

// The windows every present run of the compared configurations has, their
// end steps from the first baseline seed. 0 with a message in why when the
// runs' windows do not line up (runs of different presets, say).
static int shared_windows(const AblationResults *res, const double **end_step, char *why, size_t n) {
    const AblationRow *first = NULL;
    int windows = CURVE_MAX;
    for (int i = -1; i < N_CURVE_CONFIGS; i++) {   // -1: the baseline, then the upgrades
        const ConfigResults *cr = &res->cfg[i < 0 ? CFG_BASE : CURVE_CONFIGS[i]];
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            const AblationRow *row = &cr->seed[k];
            if (!row->present) continue;
            if (!first) first = row;
            if (row->n_curve < windows) windows = row->n_curve;
            for (int w = 0; w < row->n_curve && w < first->n_curve; w++)
                if (row->curve_step[w] != first->curve_step[w]) {
                    snprintf(why, n, "the runs' loss windows end at different steps (%g and %g): "
                                     "runs of different presets or step counts", first->curve_step[w], row->curve_step[w]);
                    return 0;
                }
        }
    }
    if (!first || !res->cfg[CFG_BASE].n) {
        snprintf(why, n, "no baseline run with a loss curve yet");
        return 0;
    }
    if (windows < 1) snprintf(why, n, "a run has no loss curve in its metrics.json");
    *end_step = first->curve_step;
    return windows;
}

// "from steps 251-500 on" for the first window w0 of a run of resolved
// windows that lasts to the end; the side is the sign of the differences.
static void print_for_good(const char *label, const Comparison *cmp, int windows, const double *end_step) {
    int w0 = windows;
    while (w0 > 0 && cmp[w0 - 1].resolved && (cmp[w0 - 1].diff < 0) == (cmp[windows - 1].diff < 0)) w0--;
    if (w0 == windows) {
        printf("  %-10s not resolved in the last window\n", label);
        return;
    }
    printf("  %-10s %s from steps %.0f-%.0f to the end\n", label,
           cmp[windows - 1].diff < 0 ? "ahead (lower loss)" : "behind (higher loss)",
           w0 ? end_step[w0 - 1] + 1 : 1, end_step[w0]);
}

void results_print_curves(const AblationResults *res) {
    const double *end_step = NULL;
    char why[256] = "";
    int windows = shared_windows(res, &end_step, why, sizeof why);
    if (windows < 1) {
        printf("no loss curves to compare: %s\n", why);
        return;
    }
    const ConfigResults *base = &res->cfg[CFG_BASE];
    static Comparison cmp[N_CURVE_CONFIGS][CURVE_MAX];   // static: too large for the stack
    Table t;
    table_init(&t, 3 + N_CURVE_CONFIGS, "steps", "baseline", "spread", ABLATION_CONFIG[CFG_RMSNORM].label,
               ABLATION_CONFIG[CFG_QKNORM].label, ABLATION_CONFIG[CFG_SWIGLU].label, ABLATION_CONFIG[CFG_ROPE].label,
               ABLATION_CONFIG[CFG_ALL].label);
    bool assumed = false;
    for (int w = 0; w < windows; w++) {
        SeedSpread b = window_spread(base, w);
        table_cell(&t, "%.0f-%.0f", w ? end_step[w - 1] + 1 : 1, end_step[w]);
        table_cell(&t, "%.4f", b.mean);
        if (isfinite(b.sd)) table_cell(&t, "%.4f", b.sd);
        else table_cell(&t, "-");
        for (int i = 0; i < N_CURVE_CONFIGS; i++) {
            const ConfigResults *cr = &res->cfg[CURVE_CONFIGS[i]];
            if (!cr->n) { table_cell(&t, "-"); continue; }
            compare_means(window_spread(cr, w), b, &cmp[i][w]);
            assumed |= cmp[i][w].assumed;
            if (isfinite(cmp[i][w].z))
                table_cell(&t, "%+.4f (%.1f)%s", cmp[i][w].diff, cmp[i][w].z, cmp[i][w].assumed ? "*" : "");
            else table_cell(&t, "%+.4f (?)", cmp[i][w].diff);
        }
    }
    printf("the training loss per window of %.0f steps (each run's \"curve\"), over each configuration's seeds:\n"
           "the baseline's mean and spread, and each configuration's mean minus the baseline's, in brackets\n"
           "that difference in standard errors (negative: a lower loss than the baseline)\n", end_step[0]);
    printf("seeds: baseline %d", base->n);
    for (int i = 0; i < N_CURVE_CONFIGS; i++)
        printf(", %s %d", ABLATION_CONFIG[CURVE_CONFIGS[i]].label, res->cfg[CURVE_CONFIGS[i]].n);
    printf("\n");
    table_print(&t);
    if (assumed)
        printf("* one seed: that configuration's spread is assumed to be the baseline's\n");
    if (assumed || base->n < 3)
        printf("Few seeds make a rough ruler: the spread of 2 seeds is one draw of the noise, and where two\n"
               "seeds happen to agree closely the brackets run into the tens or hundreds. Read the differences\n"
               "against the spread column, and more seeds (ablation --seeds 3) for the brackets.\n");
    printf("\nahead or behind for good: more than %.0f standard errors from the baseline in every window\n"
           "from there to the end (a verdict needs 2 seeds or more a side: one seed has no spread)\n", COMPARE_SE);
    for (int i = 0; i < N_CURVE_CONFIGS; i++) {
        const char *label = ABLATION_CONFIG[CURVE_CONFIGS[i]].label;
        int n = res->cfg[CURVE_CONFIGS[i]].n;
        if (!n) printf("  %-10s not run yet\n", label);
        else if (n < 2 || base->n < 2)
            printf("  %-10s no verdict: %d seed%s, the baseline %d\n", label, n, n == 1 ? "" : "s", base->n);
        else print_for_good(label, cmp[i], windows, end_step);
    }
}
