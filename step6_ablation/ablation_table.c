// ablation_table.c: the tutorial's table and ours, printed as text from the runs
// that ablation_runs.c read (the Markdown report, ablation_report.c, fills
// the same tables).
//
// Two ways to read a row, side by side:
//   the tutorial's  one run per configuration against one seed gap, the
//                   distance |val MSE(s0) - val MSE(s1)| of the baseline's two
//                   seeds: within one gap "same", beyond it a gain or a loss,
//                   counted in gaps;
//   over seeds      every configuration trained with n seeds: its mean and
//                   spread (sample standard deviation), the difference of its
//                   mean to the baseline's with the standard error of that
//                   difference, and a verdict only when the difference is
//                   more than two standard errors; else "not resolved".
// One pair's gap is one draw of a noisy distance: it can be far smaller (or
// larger) than the spread of the runs, and it is the baseline's, not the
// row's. The second table measures the noise of each row from its own seeds;
// a row with one seed has no noise of its own, so it gets no verdict there
// (beside it, the committed three-seed verdict of results/, marked so).
// Each table has one verdict column; the first is labelled the tutorial's.
// Neither shows ms/step: the runs shared the machine with whatever else ran;
// `lab speed` times the configurations fairly, in turns in one process.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ablation_table.h"
#include "io/bench.h"
#include "io/paths.h"

// ---------------------------------------------------------------------------
// Formatting helpers
// A run's probe-FD: by the folder's probe, else not shown beside it.
static void fmt_fd(const AblationRow *m, char *out, size_t n) {
    if (m->other_probe) snprintf(out, n, "other probe");
    else if (isfinite(m->m.probe_fd)) snprintf(out, n, "%.1f", m->m.probe_fd);
    else snprintf(out, n, "-");
}

// A configuration's: the mean over its seeds when one probe scored them all.
static void fmt_config_fd(const ConfigResults *cr, char *out, size_t n) {
    bool by_folders_probe = false;
    for (int k = 0; k < ABLATION_MAX_SEEDS; k++)
        by_folders_probe |= cr->seed[k].present && isfinite(cr->seed[k].m.probe_fd) && !cr->seed[k].other_probe;
    if (cr->other_probe) snprintf(out, n, "%s", by_folders_probe ? "mixed probes" : "other probe");
    else if (isfinite(cr->probe_fd)) snprintf(out, n, "%.1f", cr->probe_fd);
    else snprintf(out, n, "-");
}

static void fmt_or_dash(double v, const char *fmt, char *out, size_t n) {
    if (isfinite(v)) snprintf(out, n, fmt, v);
    else snprintf(out, n, "-");
}

// The tutorial prints every 4th point of its 16-point curves. Runs with
// fewer than 8 points (quick: 4, smoke: 4) would keep one or two that way,
// so they show every point.
static int curve_stride(const AblationRow *m) { return m->n_curve >= 8 ? 4 : 1; }

static void fmt_curve(const AblationRow *m, char *out, size_t n, int steps_not_losses) {
    size_t len = 0;
    int k = curve_stride(m);
    len += snprintf(out + len, n - len, "[");
    for (int i = 0; i < m->n_curve && len < n; i += k) {
        if (steps_not_losses) len += snprintf(out + len, n - len, "%s%d", i ? ", " : "", (int)m->curve_step[i]);
        else len += snprintf(out + len, n - len, "%s%.5g", i ? ", " : "", m->curve_loss[i]);
    }
    if (len < n) snprintf(out + len, n - len, "]");
}

// Run r's loss curve as two lists, its losses and their steps (n bytes
// each); false when the run or its curve is missing.
bool curve_lists(const AblationResults *res, int r, char *losses, char *steps, size_t n) {
    const AblationRow *m = results_run(res, r);
    if (!m->present || !m->n_curve) return false;
    fmt_curve(m, losses, n, 0);
    fmt_curve(m, steps, n, 1);
    return true;
}

// The tutorial's verdict of one of the nine runs, and its difference from
// the mean of the baseline pair.
static void row_verdict(const AblationResults *res, int r, char *delta, size_t dn, char *v, size_t vn) {
    const AblationRow *m = results_run(res, r);
    if (!res->have_gap) { snprintf(delta, dn, "-"); snprintf(v, vn, "? (no seed gap)"); return; }
    snprintf(delta, dn, "%+.4f", m->m.val_mse - res->base_mean);
    if (r == RUN_BASE_S0 || r == RUN_BASE_S1) snprintf(v, vn, "noise floor");
    else verdict(m->m.val_mse, res->base_mean, res->gap, v, vn, NULL);
}

static double lr_ratio(const AblationResults *res, double *lr_hi, double *lr_lo) {
    const AblationRow *b = results_run(res, RUN_BASE_LR2E3), *q = results_run(res, RUN_QKNORM_LR2E3);
    const AblationRow *s0 = results_run(res, RUN_BASE_S0), *s1 = results_run(res, RUN_BASE_S1);
    *lr_hi = b->present ? b->lr : q->lr;
    *lr_lo = s0->present ? s0->lr : s1->lr;
    return *lr_hi / *lr_lo;
}

const char *preset_of(const AblationResults *res) {
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++)
            if (res->cfg[c].seed[k].present && res->cfg[c].seed[k].m.preset[0]) return res->cfg[c].seed[k].m.preset;
    return NULL;
}

// The seeds of a configuration that are there, as "0,1,2".
static void fmt_seeds(const ConfigResults *cr, char *out, size_t n) {
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < ABLATION_MAX_SEEDS && len < n; k++)
        if (cr->seed[k].present) len += snprintf(out + len, n - len, "%s%d", len ? "," : "", k);
}

// ---------------------------------------------------------------------------
// The tables, filled once and printed as text or as Markdown.

// The tutorial's: the nine runs (one per configuration, two baselines), each
// against the seed gap of the baseline pair.
void fill_tutorial_table(const AblationResults *res, Table *t) {
    table_init(t, 7, "run", "params", "val MSE", "probe-FD", "spikes", "vs baseline", "the tutorial's verdict");
    for (int r = RUN_BASE_S0; r <= RUN_ALL; r++) {
        const AblationRow *m = results_run(res, r);
        table_cell(t, "%s", ABLATION[r].label);
        if (!m->present) {
            for (int c = 0; c < 5; c++) table_cell(t, "-");
            table_cell(t, "missing");
            continue;
        }
        char params[32], fd[32], delta[32], v[48];
        with_commas(m->m.params, params, sizeof params);
        fmt_fd(m, fd, sizeof fd);
        row_verdict(res, r, delta, sizeof delta, v, sizeof v);
        table_cell(t, "%s", params);
        table_cell(t, "%.4f", m->m.val_mse);
        table_cell(t, "%s", fd);
        table_cell(t, "%d", m->m.loss_spikes);
        table_cell(t, "%s", delta);
        table_cell(t, "%s", v);
    }
}

// The committed runs of res's preset (results/quick or results/tutorial),
// whose verdicts stand beside a row of one seed; NULL when there are none,
// or when res is that folder itself. Free it.
AblationResults *load_committed(const AblationResults *res) {
    const char *preset = preset_of(res);
    char dir[2048], a[PATH_MAX], b[PATH_MAX];
    if (!preset || strcmp(preset, "smoke") == 0) return NULL;
    snprintf(a, sizeof a, "results/%s", preset);
    if (project_path(dir, sizeof dir, a) != 0) return NULL;
    if (realpath(dir, a) && realpath(res->dir, b) && strcmp(a, b) == 0) return NULL;
    AblationResults *c = malloc(sizeof *c);
    if (!c) return NULL;
    results_load(dir, c);
    if (!c->n_present) { free(c); return NULL; }
    snprintf(c->dir, sizeof c->dir, "results/%s", preset);   // the name a reader finds it by
    return c;
}

// The verdict cell of configuration c over its seeds: its own when it and
// the baseline have two seeds or more; with one seed none, and the
// committed one beside it when there is one.
void seeds_verdict(const AblationResults *res, const AblationResults *committed, int c, char *out, size_t n) {
    const ConfigResults *cr = &res->cfg[c], *base = &res->cfg[CFG_BASE];
    if (c == CFG_BASE) { snprintf(out, n, "reference"); return; }
    if (!base->n) { snprintf(out, n, "? no baseline"); return; }
    if (cr->n >= 2 && base->n >= 2) {
        Comparison cmp;
        compare_means(cr->val, base->val, &cmp);
        snprintf(out, n, "%s", cmp.verdict);
        return;
    }
    const ConfigResults *cc = committed ? &committed->cfg[c] : NULL, *cb = committed ? &committed->cfg[CFG_BASE] : NULL;
    if (cc && cc->n >= 2 && cb->n >= 2) {
        Comparison cmp;
        compare_means(cc->val, cb->val, &cmp);
        snprintf(out, n, "one seed: none (%s, %d seeds: %s)", committed->dir, cc->n, cmp.verdict);
    } else {
        snprintf(out, n, "one seed: none");
    }
}

// Ours: every configuration over its seeds, against the baseline's seeds.
void fill_seeds_table(const AblationResults *res, const AblationResults *committed, Table *t) {
    table_init(t, 8, "configuration", "seeds", "val MSE", "spread", "probe-FD", "vs baseline", "+- se", "verdict");
    const ConfigResults *base = &res->cfg[CFG_BASE];
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        const ConfigResults *cr = &res->cfg[c];
        char seeds[64], sd[32], fd[32], diff[32], se[32] = "-", v[TABLE_CELL];
        if (!cr->n && ablation_config_seeds(c, 1) == 0) continue;   // beyond the nine, not trained here
        table_cell(t, "%s", ABLATION_CONFIG[c].label);
        if (!cr->n) {
            for (int k = 0; k < 6; k++) table_cell(t, "-");
            table_cell(t, "missing");
            continue;
        }
        fmt_seeds(cr, seeds, sizeof seeds);
        fmt_or_dash(cr->val.sd, "%.4f", sd, sizeof sd);
        fmt_config_fd(cr, fd, sizeof fd);
        seeds_verdict(res, committed, c, v, sizeof v);
        if (c == CFG_BASE) snprintf(diff, sizeof diff, "0");
        else if (!base->n) snprintf(diff, sizeof diff, "-");
        else {
            Comparison cmp;
            compare_means(cr->val, base->val, &cmp);
            snprintf(diff, sizeof diff, "%+.4f", cmp.diff);
            // an error bar only where both sides measured their noise
            if (cr->n >= 2 && base->n >= 2) fmt_or_dash(cmp.se, "%.4f", se, sizeof se);
        }
        table_cell(t, "%d (%s)", cr->n, seeds);
        table_cell(t, "%.4f", cr->val.mean);
        table_cell(t, "%s", sd);
        table_cell(t, "%s", fd);
        table_cell(t, "%s", diff);
        table_cell(t, "%s", se);
        table_cell(t, "%s", v);
    }
}

// --compare: the user's mean of each configuration against the committed one.
void fill_compare_table(const AblationResults *res, const AblationResults *ref, Table *t) {
    table_init(t, 6, "configuration", "yours", "ours", "ours' spread", "difference +- se", "lands");
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        const ConfigResults *you = &res->cfg[c], *us = &ref->cfg[c];
        if (!you->n && !us->n) continue;
        table_cell(t, "%s", ABLATION_CONFIG[c].label);
        char yours[48] = "-", ours[48] = "-", sd[32] = "-", diff[48] = "-", lands[48];
        if (you->n) snprintf(yours, sizeof yours, "%.4f (n=%d)", you->val.mean, you->n);
        if (us->n) snprintf(ours, sizeof ours, "%.4f (n=%d)", us->val.mean, us->n);
        if (us->n) fmt_or_dash(us->val.sd, "%.4f", sd, sizeof sd);
        Comparison cmp;
        compare_means(you->val, us->val, &cmp);
        if (!you->n || !us->n) snprintf(lands, sizeof lands, "%s", you->n ? "not in ours" : "not in yours");
        else {
            if (isfinite(cmp.se)) snprintf(diff, sizeof diff, "%+.4f +- %.4f%s", cmp.diff, cmp.se, cmp.assumed ? "*" : "");
            else snprintf(diff, sizeof diff, "%+.4f", cmp.diff);
            if (!isfinite(cmp.se)) snprintf(lands, sizeof lands, "? no spread measured");
            else if (!cmp.resolved) snprintf(lands, sizeof lands, "inside the noise (%.1f se)", cmp.z);
            else snprintf(lands, sizeof lands, "outside: %s (%.1f se)", cmp.diff < 0 ? "lower" : "higher", cmp.z);
        }
        table_cell(t, "%s", yours);
        table_cell(t, "%s", ours);
        table_cell(t, "%s", sd);
        table_cell(t, "%s", diff);
        table_cell(t, "%s", lands);
    }
}

// The lr 2e-3 pair, seed 0 of each, against the baseline pair's gap.
void fill_lr_table(const AblationResults *res, Table *u) {
    table_init(u, 6, "run", "val MSE", "probe-FD", "spikes", "vs baseline", "the tutorial's verdict");
    for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
        const AblationRow *m = results_run(res, r);
        table_cell(u, "%s", r == RUN_BASE_LR2E3 ? "baseline" : "+ QK-norm");
        if (!m->present) {
            for (int c = 0; c < 4; c++) table_cell(u, "-");
            table_cell(u, "missing");
            continue;
        }
        char fd[32], delta[32], v[48];
        fmt_fd(m, fd, sizeof fd);
        row_verdict(res, r, delta, sizeof delta, v, sizeof v);
        table_cell(u, "%.4f", m->m.val_mse);
        table_cell(u, "%s", fd);
        table_cell(u, "%d", m->m.loss_spikes);
        table_cell(u, "%s", delta);
        table_cell(u, "%s", v);
    }
}

// ---------------------------------------------------------------------------
// The words around the tables, one string each, shared by the text and the
// report (which joins the lines of a paragraph).
const char *const SEEDS_FOOTNOTE =
    "val MSE is the mean over the seeds listed; spread is their sample standard deviation (n - 1).\n"
    "vs baseline is that mean minus the baseline's mean; +- se is the standard error of this\n"
    "difference of two means, sqrt(sd_a^2/n_a + sd_b^2/n_b). The verdict is a gain (lower val MSE)\n"
    "or a loss only when the difference is more than 2 standard errors, else \"not resolved\": the\n"
    "seeds cannot tell it from noise. With 3 seeds a side even 2 se is a lenient bar (a t-test\n"
    "with 4 degrees of freedom asks for 2.8); more seeds make se smaller and the bar honest.\n";
const char *const ONE_SEED_FOOTNOTE =
    "one seed: a configuration trained once has no spread of its own, so it gets no verdict here:\n"
    "its difference alone cannot be told from noise. make tutorial SEEDS=3 (lab ablation --seeds 3)\n"
    "measures its noise. Where the project's committed runs of this preset have several seeds, their\n"
    "verdict stands beside it, marked with the folder it comes from.\n";
const char *const SHARED_MACHINE_NOTE =
    "No ms/step here: each run was timed while it shared the machine with whatever else ran, so\n"
    "its wall time per step (in its metrics.json) says nothing about its model. lab speed times the\n"
    "configurations fairly, in turns in one process (docs/performance.md).\n";
const char *const SMOKE_NOTE =
    "These are smoke runs (a tiny model, a few steps): they test the machinery, not the model.\n"
    "No number below says anything about the upgrades; the quick and tutorial presets do.\n";

void print_probe_note(FILE *f, const AblationResults *res, bool markdown) {
    if (!res->has_probe) return;
    char label[160];
    metrics_probe_label(&res->probe, label, sizeof label);
    if (!res->probe.probe_key[0] && !res->probe.probe_weights[0])
        snprintf(label, sizeof label, "a probe the runs do not name");
    fprintf(f, "%sprobe-FD: by %s.", markdown ? "" : "\n", label);
    if (!res->other_probe_runs) { fprintf(f, "\n"); return; }
    fprintf(f, "%sTwo probes' FDs do not compare: the %d run%s by another show \"other probe\" (both: "
            "\"mixed probes\"):\n%s", markdown ? " " : "\n", res->other_probe_runs,
            res->other_probe_runs == 1 ? "" : "s", markdown ? "\n" : "");
    // each other probe once, with its runs
    bool *done = calloc((size_t)ABLATION_CONFIGS * ABLATION_MAX_SEEDS, sizeof *done);
    for (int i = 0; done && i < ABLATION_CONFIGS * ABLATION_MAX_SEEDS; i++) {
        const AblationRow *a = &res->cfg[i / ABLATION_MAX_SEEDS].seed[i % ABLATION_MAX_SEEDS];
        if (done[i] || !a->other_probe) continue;
        metrics_probe_label(&a->m, label, sizeof label);
        int col = fprintf(f, "%s%s:", markdown ? "- " : "  ", label);
        for (int j = i; j < ABLATION_CONFIGS * ABLATION_MAX_SEEDS; j++) {
            const AblationRow *b = &res->cfg[j / ABLATION_MAX_SEEDS].seed[j % ABLATION_MAX_SEEDS];
            if (done[j] || !b->other_probe || !metrics_same_probe(&a->m, &b->m)) continue;
            done[j] = true;
            char name[64];
            ablation_run_name(j / ABLATION_MAX_SEEDS, j % ABLATION_MAX_SEEDS, name, sizeof name);
            if (!markdown && col > 90) col = fprintf(f, "\n   ");
            col += fprintf(f, markdown ? " `%s`" : " %s", name);
        }
        fprintf(f, "\n");
    }
    free(done);
}

// The tutorial's seed gap against the spread: for two draws of the same
// noise the expected |a - b| is 2 sd / sqrt(pi), about 1.13 sd, and one pair
// often falls far below it.
static void print_gap_vs_spread(const AblationResults *res) {
    const ConfigResults *base = &res->cfg[CFG_BASE];
    if (!res->have_gap || base->n < 3) return;
    printf("\nthe tutorial's one pair against the baseline's %d seeds: the pair's gap %.4f, the spread %.4f;\n"
           "two draws of the same noise differ by 1.13 spreads on average (2 sd / sqrt(pi)), so one\n"
           "pair is one noisy draw of the noise, not a measure of it.\n",
           base->n, res->gap, base->val.sd);
}

bool any_one_seed(const AblationResults *res) {
    for (int c = 1; c < ABLATION_CONFIGS; c++)
        if (res->cfg[c].n == 1) return true;
    return false;
}

bool is_smoke(const AblationResults *res) {
    const char *p = preset_of(res);
    return p && strcmp(p, "smoke") == 0;
}

// ---------------------------------------------------------------------------
// The text
static void print_lr_pair(const AblationResults *res) {
    const AblationRow *b = results_run(res, RUN_BASE_LR2E3), *q = results_run(res, RUN_QKNORM_LR2E3);
    double hi, lo, ratio = lr_ratio(res, &hi, &lo);
    if (isfinite(ratio)) printf("\nhigh learning rate: lr %.3g (%.1fx the baseline's %.3g)\n", hi, ratio, lo);
    else printf("\nhigh learning rate (lr 2e-3):\n");
    if (!b->present && !q->present) { printf("  neither run is there yet\n"); return; }
    Table u;
    fill_lr_table(res, &u);
    table_print(&u);
    if (res->have_gap) printf("  (vs baseline: against the baseline at the default lr, in its seed gaps)\n");
    if (b->present && q->present && res->have_gap) {
        char v[48];
        verdict(q->m.val_mse, b->m.val_mse, res->gap, v, sizeof v, NULL);
        printf("  + QK-norm against the baseline, both at the high lr: %+.4f, the tutorial's verdict: %s\n",
               q->m.val_mse - b->m.val_mse, v);
    }
    const ConfigResults *cb = &res->cfg[CFG_BASE_LR2E3], *cq = &res->cfg[CFG_QKNORM_LR2E3];
    if (cb->n >= 2 && cq->n >= 2) {
        Comparison cmp;
        compare_means(cq->val, cb->val, &cmp);
        printf("  over seeds (%d and %d): %+.4f, %s\n", cq->n, cb->n, cmp.diff, cmp.verdict);
    }
    printf("  loss curves (mean training loss per window%s):\n",
           (b->present && curve_stride(b) > 1) || (q->present && curve_stride(q) > 1) ? ", every 4th window" : "");
    for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
        char losses[4096], steps[4096];
        if (!curve_lists(res, r, losses, steps, sizeof losses)) continue;
        printf("    %-10s %s at steps %s\n", r == RUN_BASE_LR2E3 ? "baseline" : "+ QK-norm", losses, steps);
    }
}

static void print_compare(const AblationResults *res, const AblationResults *ref) {
    const char *p = preset_of(ref);
    printf("\nyour runs against ours in %s (%s%s%d runs):\n", ref->dir, p ? p : "", p ? " preset, " : "",
           ref->n_present);
    if (ref->dir_missing || !ref->n_present) { printf("  there are no runs in %s\n", ref->dir); return; }
    Table t;
    fill_compare_table(res, ref, &t);
    table_print(&t);
    printf("  \"inside the noise\": your mean is within 2 standard errors of ours (the same rule as the\n"
           "  verdicts); * marks a side with one seed, whose spread is taken from the other.\n");
    const char *q = preset_of(res);
    if (p && q && strcmp(p, q) != 0)
        printf("  note: your runs are %s, ours %s: different presets are not comparable\n", q, p);
}

static void print_notes(const AblationResults *res) {
    int notes = 0;
    if (res->dir_missing) {
        printf("\nnotes:\n  there is no folder %s: no runs yet? (lab ablation makes them)\n", res->dir);
        return;
    }
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (!results_run(res, r)->present) {
            if (!notes++) printf("\nnotes:\n");
            printf("  %s: %s\n", ABLATION[r].name, results_run(res, r)->note);
        }
    if (res->not_seed_pair) {
        if (!notes++) printf("\nnotes:\n");
        printf("  p11_base_s0 and p11_base_s1 differ in more than their seed: their gap is not a seed gap\n");
    }
    if (res->mixed_presets) {
        if (!notes++) printf("\nnotes:\n");
        printf("  the runs come from different presets: their numbers are not comparable\n");
        for (int r = 0; r < ABLATION_RUNS; r++)
            if (results_run(res, r)->present) printf("    %-18s %s\n", ABLATION[r].name, results_run(res, r)->m.preset);
    }
}

void results_print(const AblationResults *res, const AblationResults *ref) {
    const char *preset = preset_of(res);
    int extra = res->n_present - res->nine_present;
    if (is_smoke(res)) printf("%s\n", SMOKE_NOTE);
    printf("runs in %s%s%s%s: %d of %d have a metrics.json", res->dir, preset ? " (" : "",
           preset ? preset : "", preset ? " preset)" : "", res->nine_present, ABLATION_RUNS);
    if (extra > 0) printf(", and %d more seed%s", extra, extra == 1 ? "" : "s");
    printf("\n\nthe tutorial's method: one run per configuration, read against one seed gap\n");
    Table t;
    fill_tutorial_table(res, &t);
    table_print(&t);
    print_probe_note(stdout, res, false);
    if (res->have_gap)
        printf("\nseed gap (|val MSE seed 0 - seed 1| of the baseline): %.4f; baseline mean %.4f.\n"
               "\"vs baseline\" is val MSE minus that mean; within one seed gap the tutorial's verdict is\n"
               "\"same\", beyond it a gain (lower val MSE) or a loss, and by how many gaps. One pair is one\n"
               "draw of the noise: the table over seeds below measures it.\n",
               res->gap, res->base_mean);
    else
        printf("\nno seed gap yet: it needs both p11_base_s0 and p11_base_s1, so there are no verdicts.\n");

    printf("\nover seeds: each configuration's own noise, and the error bar of its difference\n");
    AblationResults *committed = any_one_seed(res) ? load_committed(res) : NULL;
    fill_seeds_table(res, committed, &t);
    free(committed);
    table_print(&t);
    printf("\n%s", SEEDS_FOOTNOTE);
    if (any_one_seed(res)) printf("%s", ONE_SEED_FOOTNOTE);
    printf("%s", SHARED_MACHINE_NOTE);
    print_gap_vs_spread(res);

    print_lr_pair(res);
    if (ref) print_compare(res, ref);
    print_notes(res);
}

void results_print_tsv(const AblationResults *res, FILE *f) {
    // Every run, present or not, so that a script gets the names and labels
    // from here too; gnuplot reads "NaN" as a missing value.
    fprintf(f, "# name\tlabel\tpresent\tparams\tval_mse\tprobe_fd\tms_step\tspikes\tbase_mean\tgap\n");
    for (int r = 0; r < ABLATION_RUNS; r++) {
        const AblationRow *m = results_run(res, r);
        double nan = NAN;
        fprintf(f, "%s\t%s\t%d\t%lld\t%.6f\t%.3f\t%.3f\t%d\t%.6f\t%.6f\n", ABLATION[r].name, ABLATION[r].label,
                m->present, m->present ? m->m.params : 0, m->present ? m->m.val_mse : nan, m->present && !m->other_probe ? m->m.probe_fd : nan,
                m->present ? m->m.ms_per_step : nan, m->present ? m->m.loss_spikes : 0, res->have_gap ? res->base_mean : nan,
                res->have_gap ? res->gap : nan);
    }
}

void results_print_seeds_tsv(const AblationResults *res, FILE *f) {
    fprintf(f, "# run\tconfig\tlabel\tseed\tval_mse\ttrain_seconds\tscorecard_seconds\tname\t(one line per run)\n");
    fprintf(f, "# mean\tconfig\tlabel\tn\tmean\tsd\tse\t(one line per configuration)\n");
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++)
            if (res->cfg[c].seed[k].present) {
                const AblationRow *row = &res->cfg[c].seed[k];
                char name[64];
                ablation_run_name(c, k, name, sizeof name);
                fprintf(f, "run\t%d\t%s\t%d\t%.6f\t%.1f\t%.1f\t%s\n", c, ABLATION_CONFIG[c].label, k, row->m.val_mse,
                        row->train_seconds, row->scorecard_seconds, name);
            }
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        const ConfigResults *cr = &res->cfg[c];
        fprintf(f, "mean\t%d\t%s\t%d\t%.6f\t%.6f\t%.6f\n", c, ABLATION_CONFIG[c].label, cr->n, cr->val.mean,
                cr->val.sd, cr->val.se);
    }
}
