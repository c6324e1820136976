// sweep_curves.c: does a gap between two configurations close with a longer
// run, and when? The runs' val.tsv (val_every > 0), lined up check by check:
// every configuration against the first of --configs over the seeds, by the
// ablation table's arithmetic (compare_means). val.tsv, not metrics.json, so
// a run still training has its curve too.
#include <math.h>
#include "lab.h"
#include "io/bench.h"

#define MAX_CHECKS 512

// The val curves of every seed of configuration c at value v: each run's
// val.tsv, its checks in order (none when the file is missing).
typedef struct {
    int n[ABLATION_MAX_SEEDS];
    int step[ABLATION_MAX_SEEDS][MAX_CHECKS];
    double val[ABLATION_MAX_SEEDS][MAX_CHECKS];
} SeedCurves;

static void read_seed_curves(const SweepPlan *p, int c, int v, SeedCurves *sc) {
    for (int k = 0; k < p->seeds; k++) {
        char name[128], path[PATH_MAX + 256], line[128];
        sweep_run_name(p, c, v, k, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s/val.tsv", p->out_dir, name);
        FILE *f = fopen(path, "r");
        int *n = &sc->n[k];
        for (*n = 0; f && *n < MAX_CHECKS && fgets(line, sizeof line, f);)
            *n += sscanf(line, "%d %lf", &sc->step[k][*n], &sc->val[k][*n]) == 2;   // the header does not scan
        if (f) fclose(f);
    }
}

// The mean and spread at one step over the seeds that have reached it.
static SeedSpread at_step(const SweepPlan *p, const SeedCurves *sc, int step) {
    double v[ABLATION_MAX_SEEDS];
    int n = 0;
    for (int k = 0; k < p->seeds; k++)
        for (int i = 0; i < sc->n[k]; i++)
            if (sc->step[k][i] == step) { v[n++] = sc->val[k][i]; break; }
    return seed_spread(v, n);
}

// Where the gap stands at the last check with a spread on both sides (runs
// still training may have one seed at the newest checks): resolved since
// which check, or not resolved since which (the step from which it stays so).
static void print_since(const char *label, const Comparison *cmp, const int *steps, int n) {
    while (n > 0 && (!isfinite(cmp[n - 1].se) || cmp[n - 1].assumed)) n--;
    if (n == 0) {
        printf("  %s: no verdict (it needs two seeds a side at a check)\n", label);
        return;
    }
    int i = n - 1;
    bool resolved = cmp[i].resolved, behind = cmp[i].diff > 0;
    while (i > 0 && cmp[i - 1].resolved == resolved && (!resolved || (cmp[i - 1].diff > 0) == behind)) i--;
    if (resolved)
        printf("  %s: %s by %+.4f +- %.4f at step %d, resolved at every check since step %d\n", label,
               behind ? "behind" : "ahead", cmp[n - 1].diff, cmp[n - 1].se, steps[n - 1], steps[i]);
    else
        printf("  %s: %+.4f +- %.4f at step %d, not resolved (inside %.0f se) since step %d%s\n", label,
               cmp[n - 1].diff, cmp[n - 1].se, steps[n - 1], COMPARE_SE, steps[i],
               i > 0 ? ": the gap closed there" : "");
}

static void curves_of_value(const SweepPlan *p, int v, bool tsv) {
    static SeedCurves ref, other;                 // static: 100 KB each, large for a stack frame
    static Comparison cmp[MAX_CHECKS];
    read_seed_curves(p, 0, v, &ref);
    int furthest = 0;   // the checks are those of the reference's seed that got furthest
    for (int k = 1; k < p->seeds; k++)
        if (ref.n[k] > ref.n[furthest]) furthest = k;
    const int *steps = ref.step[furthest], n = ref.n[furthest];
    const char *ref_label = ABLATION_CONFIG[p->config[0]].label;
    if (!tsv) printf("%s %s: val MSE at every check, mean over seeds, against %s\n", p->key, p->values[v], ref_label);
    if (n == 0) {
        if (!tsv) printf("  no val.tsv from %s yet (runs with --set val_every=N write one)\n\n", ref_label);
        return;
    }
    for (int c = 1; c < p->n_configs; c++) {
        const char *label = ABLATION_CONFIG[p->config[c]].label;
        read_seed_curves(p, c, v, &other);
        Table t;
        table_init(&t, 6, "step", ref_label, label, "difference", "+- se", "verdict");
        int shown = 0;
        for (int i = 0; i < n; i++) {
            SeedSpread a = at_step(p, &other, steps[i]), b = at_step(p, &ref, steps[i]);
            if (!a.n) break;                      // this configuration's runs have not got here yet
            compare_means(a, b, &cmp[i]);
            shown = i + 1;
            if (tsv) {
                printf("%s\t%s\t%s\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\t%.6f\n", config_short(p->config[c]), label,
                       p->values[v], steps[i], b.n, a.n, b.mean, a.mean, cmp[i].diff, cmp[i].se);
                continue;
            }
            table_cell(&t, "%d", steps[i]);
            table_cell(&t, "%.4f (%d)", b.mean, b.n);
            table_cell(&t, "%.4f (%d)", a.mean, a.n);
            table_cell(&t, "%+.4f", cmp[i].diff);
            if (isfinite(cmp[i].se)) table_cell(&t, "%.4f", cmp[i].se); else table_cell(&t, "-");
            table_cell(&t, "%s", cmp[i].verdict);
        }
        if (tsv) continue;
        if (!shown) { printf("  %s: no val.tsv yet\n", label); continue; }
        table_print(&t);
        print_since(label, cmp, steps, shown);
    }
    if (!tsv) printf("\n");
}

void sweep_curves(const SweepPlan *p, bool tsv) {
    if (tsv) printf("config\tlabel\tvalue\tstep\tn_ref\tn\tref_mean\tmean\tdiff\tse\n");
    else
        printf("val MSE along the runs of %s (each run's val.tsv), %d seed%s a point; in brackets the seeds\n"
               "that reached the check. difference: mean minus %s's, +- its standard error; a verdict\n"
               "needs more than %.0f se (gain: lower val MSE)\n\n", p->out_dir, p->seeds, p->seeds == 1 ? "" : "s",
               ABLATION_CONFIG[p->config[0]].label, COMPARE_SE);
    if (p->n_configs < 2) {
        if (!tsv) printf("--curves compares configurations: give --configs two or more (the first is the reference)\n");
        return;
    }
    for (int v = 0; v < p->n_values; v++) curves_of_value(p, v, tsv);
}
