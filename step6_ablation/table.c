// table.c: the tutorial's table, read from the runs' metrics.json files.
//
// Every number printed here comes from a metrics.json (parsed with cJSON),
// field names as in the tutorial's own table script: params, it_per_s,
// loss_spikes, raw.val_mse, raw.uncond.probe_fd, curve. A run that is missing
// or unreadable becomes a note under the table, never a crash, so the table
// can be looked at while the runs are still going.
//
// The verdict of a row is read against the seed gap: the two baselines differ
// only in their seed, so |val MSE(s0) - val MSE(s1)| is how much the score
// moves when nothing real changes. A row is compared with the mean of the two
// baselines; a difference within one gap is "same", beyond it a gain (lower
// val MSE) or a loss, counted in gaps.
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "ablation.h"
#include "io/bench.h"
#include "io/fileio.h"
#include "io/paths.h"
#include <sys/stat.h>

// ---------------------------------------------------------------------------
// Reading

// The two things the scorecard reader (common/io/metrics.h) leaves out: the
// loss curve, and the lr and steps of the run's config.
static void read_curve(const char *path, AblationRow *row) {
    char err[512];
    size_t len;
    char *text = read_file_all(path, &len, err, sizeof err);
    if (!text) return;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *curve = cJSON_GetObjectItemCaseSensitive(root, "curve"), *pt;
    cJSON_ArrayForEach(pt, curve) {
        if (row->n_curve >= CURVE_MAX) break;
        if (cJSON_GetArraySize(pt) != 2) continue;
        const cJSON *s = cJSON_GetArrayItem(pt, 0), *l = cJSON_GetArrayItem(pt, 1);
        if (!cJSON_IsNumber(s) || !cJSON_IsNumber(l)) continue;
        row->curve_step[row->n_curve] = s->valuedouble;
        row->curve_loss[row->n_curve] = l->valuedouble;
        row->n_curve++;
    }
    cJSON_Delete(root);
}

int ablation_row_read(const char *path, AblationRow *row) {
    memset(row, 0, sizeof *row);
    row->lr = NAN;
    if (!file_exists(path)) {
        snprintf(row->note, sizeof row->note, "no %s (not run yet, or not finished)", path);
        return -1;
    }
    if (metrics_read(path, &row->m, row->note, sizeof row->note) != 0) return -1;
    if (row->m.has_config) {
        row->lr = row->m.cfg.lr;
        row->steps = row->m.cfg.steps;
    }
    read_curve(path, row);
    row->present = true;
    return 0;
}

void results_load(const char *dir, AblationResults *res) {
    memset(res, 0, sizeof *res);
    snprintf(res->dir, sizeof res->dir, "%s", dir);
    struct stat sb;
    res->dir_missing = stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode);
    const char *first_preset = NULL;
    for (int r = 0; r < ABLATION_RUNS; r++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/metrics.json", dir, ABLATION[r].name);
        AblationRow *row = &res->run[r];
        if (ablation_row_read(path, row) != 0) continue;
        res->n_present++;
        if (row->m.preset[0]) {
            if (!first_preset) first_preset = row->m.preset;
            else if (strcmp(first_preset, row->m.preset) != 0) res->mixed_presets = true;
        }
    }
    const AblationRow *s0 = &res->run[RUN_BASE_S0], *s1 = &res->run[RUN_BASE_S1];
    if (s0->present && s1->present) {
        res->have_gap = true;
        res->base_mean = 0.5 * (s0->m.val_mse + s1->m.val_mse);
        res->gap = metrics_val_mse_gap(&s0->m, &s1->m);
        // a gap is only a seed gap if nothing but the seed differs
        res->not_seed_pair = s0->m.has_config && s1->m.has_config && !metrics_is_seed_pair(&s0->m, &s1->m);
    }
}

// ---------------------------------------------------------------------------
// Verdicts
void verdict(double val, double base_mean, double gap, char *out, size_t outlen, double *gaps) {
    double delta = val - base_mean;
    double g = gap > 0 ? fabs(delta) / gap : (delta == 0 ? 0 : INFINITY);
    if (gaps) *gaps = g;
    // "within" includes a hair of rounding: a difference equal to the gap
    // (0.2510 vs 0.2545 and a gap of 0.0035) is the gap, not just above it
    if (!(gap > 0) && delta != 0) snprintf(out, outlen, "? (seed gap is 0)");
    else if (fabs(delta) <= gap * (1 + 1e-9)) snprintf(out, outlen, "same");
    else snprintf(out, outlen, "%s, %.1f gaps", delta < 0 ? "gain" : "loss", g);
}

// ---------------------------------------------------------------------------
// Formatting helpers
static void fmt_fd(double fd, char *out, size_t n) {
    if (isfinite(fd)) snprintf(out, n, "%.1f", fd);
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

// The row's verdict and its difference from the baseline mean.
static void row_verdict(const AblationResults *res, int r, char *delta, size_t dn, char *v, size_t vn) {
    const AblationRow *m = &res->run[r];
    if (!res->have_gap) { snprintf(delta, dn, "-"); snprintf(v, vn, "? (no seed gap)"); return; }
    snprintf(delta, dn, "%+.4f", m->m.val_mse - res->base_mean);
    if (r == RUN_BASE_S0 || r == RUN_BASE_S1) snprintf(v, vn, "noise floor");
    else verdict(m->m.val_mse, res->base_mean, res->gap, v, vn, NULL);
}

static double lr_ratio(const AblationResults *res, double *lr_hi, double *lr_lo) {
    *lr_hi = res->run[RUN_BASE_LR2E3].present ? res->run[RUN_BASE_LR2E3].lr : res->run[RUN_QKNORM_LR2E3].lr;
    *lr_lo = res->run[RUN_BASE_S0].present ? res->run[RUN_BASE_S0].lr : res->run[RUN_BASE_S1].lr;
    return *lr_hi / *lr_lo;
}

static const char *preset_of(const AblationResults *res) {
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (res->run[r].present && res->run[r].m.preset[0]) return res->run[r].m.preset;
    return NULL;
}

// ---------------------------------------------------------------------------
// The text table
void results_print(const AblationResults *res) {
    const char *preset = preset_of(res);
    printf("runs in %s%s%s%s: %d of %d have a metrics.json\n\n", res->dir, preset ? " (" : "",
           preset ? preset : "", preset ? " preset)" : "", res->n_present, ABLATION_RUNS);
    Table t;
    table_init(&t, 8, "run", "params", "val MSE", "probe-FD", "ms/step", "spikes", "vs baseline", "verdict");
    for (int r = RUN_BASE_S0; r <= RUN_ALL; r++) {
        const AblationRow *m = &res->run[r];
        char params[32], fd[32], delta[32], v[48];
        table_cell(&t, "%s", ABLATION[r].label);
        if (!m->present) {
            table_cell(&t, "-"); table_cell(&t, "-"); table_cell(&t, "-"); table_cell(&t, "-");
            table_cell(&t, "-"); table_cell(&t, "-"); table_cell(&t, "missing");
            continue;
        }
        with_commas(m->m.params, params, sizeof params);
        fmt_fd(m->m.probe_fd, fd, sizeof fd);
        row_verdict(res, r, delta, sizeof delta, v, sizeof v);
        table_cell(&t, "%s", params);
        table_cell(&t, "%.4f", m->m.val_mse);
        table_cell(&t, "%s", fd);
        table_cell(&t, "%.1f", m->m.ms_per_step);
        table_cell(&t, "%d", m->m.loss_spikes);
        table_cell(&t, "%s", delta);
        table_cell(&t, "%s", v);
    }
    table_print(&t);

    if (res->have_gap)
        printf("\nseed gap (|val MSE seed 0 - seed 1| of the baseline): %.4f; baseline mean %.4f.\n"
               "\"vs baseline\" is val MSE minus that mean; within one seed gap the verdict is \"same\",\n"
               "beyond it a gain (lower val MSE) or a loss, and by how many gaps.\n",
               res->gap, res->base_mean);
    else
        printf("\nno seed gap yet: it needs both p11_base_s0 and p11_base_s1, so there are no verdicts.\n");

    // The stress test: the same baseline and QK-norm at a much larger lr
    const AblationRow *b = &res->run[RUN_BASE_LR2E3], *q = &res->run[RUN_QKNORM_LR2E3];
    double hi, lo, ratio = lr_ratio(res, &hi, &lo);
    if (isfinite(ratio))
        printf("\nhigh learning rate: lr %.3g (%.1fx the baseline's %.3g)\n", hi, ratio, lo);
    else
        printf("\nhigh learning rate (lr 2e-3):\n");
    if (!b->present && !q->present) {
        printf("  neither run is there yet\n");
    } else {
        Table u;
        table_init(&u, 6, "run", "val MSE", "probe-FD", "spikes", "vs baseline", "verdict");
        for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
            const AblationRow *m = &res->run[r];
            table_cell(&u, "%s", r == RUN_BASE_LR2E3 ? "baseline" : "+ QK-norm");
            if (!m->present) {
                for (int c = 0; c < 4; c++) table_cell(&u, "-");
                table_cell(&u, "missing");
                continue;
            }
            char fd[32], delta[32], v[48];
            fmt_fd(m->m.probe_fd, fd, sizeof fd);
            row_verdict(res, r, delta, sizeof delta, v, sizeof v);
            table_cell(&u, "%.4f", m->m.val_mse);
            table_cell(&u, "%s", fd);
            table_cell(&u, "%d", m->m.loss_spikes);
            table_cell(&u, "%s", delta);
            table_cell(&u, "%s", v);
        }
        table_print(&u);
        if (res->have_gap)
            printf("  (vs baseline: against the baseline at the default lr, in its seed gaps)\n");
        if (b->present && q->present && res->have_gap) {
            char v[48];
            verdict(q->m.val_mse, b->m.val_mse, res->gap, v, sizeof v, NULL);
            printf("  + QK-norm against the baseline, both at the high lr: %+.4f, %s\n", q->m.val_mse - b->m.val_mse, v);
        }
        printf("  loss curves (mean training loss per window%s):\n",
               (b->present && curve_stride(b) > 1) || (q->present && curve_stride(q) > 1) ? ", every 4th window" : "");
        for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
            const AblationRow *m = &res->run[r];
            if (!m->present) continue;
            char losses[4096], steps[4096];
            fmt_curve(m, losses, sizeof losses, 0);
            fmt_curve(m, steps, sizeof steps, 1);
            printf("    %-10s %s at steps %s\n", r == RUN_BASE_LR2E3 ? "baseline" : "+ QK-norm", losses, steps);
        }
    }

    int notes = 0;
    if (res->dir_missing) {
        notes++;
        printf("\nnotes:\n  there is no folder %s: no runs yet? (step6_ablation ablation makes them)\n", res->dir);
    }
    for (int r = 0; r < ABLATION_RUNS && !res->dir_missing; r++)
        if (!res->run[r].present) {
            if (!notes++) printf("\nnotes:\n");
            printf("  %s: %s\n", ABLATION[r].name, res->run[r].note);
        }
    if (res->not_seed_pair) {
        if (!notes++) printf("\nnotes:\n");
        printf("  p11_base_s0 and p11_base_s1 differ in more than their seed: their gap is not a seed gap\n");
    }
    if (res->mixed_presets) {
        if (!notes++) printf("\nnotes:\n");
        printf("  the runs come from different presets: their numbers are not comparable\n");
        for (int r = 0; r < ABLATION_RUNS; r++)
            if (res->run[r].present) printf("    %-18s %s\n", ABLATION[r].name, res->run[r].m.preset);
    }
}

void results_print_tsv(const AblationResults *res, FILE *f) {
    // Every run, present or not, so that a script gets the names and labels
    // from here too; gnuplot reads "NaN" as a missing value.
    fprintf(f, "# name\tlabel\tpresent\tparams\tval_mse\tprobe_fd\tms_step\tspikes\tbase_mean\tgap\n");
    for (int r = 0; r < ABLATION_RUNS; r++) {
        const AblationRow *m = &res->run[r];
        double nan = NAN;
        fprintf(f, "%s\t%s\t%d\t%lld\t%.6f\t%.3f\t%.3f\t%d\t%.6f\t%.6f\n", ABLATION[r].name, ABLATION[r].label,
                m->present, m->present ? m->m.params : 0, m->present ? m->m.val_mse : nan, m->present ? m->m.probe_fd : nan,
                m->present ? m->m.ms_per_step : nan, m->present ? m->m.loss_spikes : 0, res->have_gap ? res->base_mean : nan,
                res->have_gap ? res->gap : nan);
    }
}

// ---------------------------------------------------------------------------
// runs/report.md
typedef struct { char *buf; size_t len, cap; } Str;

static void sadd(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sadd(Str *s, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (s->len + (size_t)n < s->cap) { s->len += (size_t)n; return; }
        s->cap = 2 * (s->cap + (size_t)n);
        s->buf = realloc(s->buf, s->cap);
        if (!s->buf) { s->len = s->cap = 0; return; }
    }
}

// The plots that `make plots` draws (scripts/plots.sh), in the report's order.
static const struct { const char *file, *what; } PLOTS[] = {
    { "loss.png",      "Training loss of every run (smoothed)" },
    { "lr2e3.png",     "The lr 2e-3 pair against the baseline at the default lr" },
    { "max_logit.png", "Largest attention logit during training: baseline vs QK-norm, both learning rates" },
    { "ms_step.png",   "Training speed of each run (ms per step, measured while runs shared the machine)" },
    { "val_mse.png",   "Val MSE of each run, with the band of one seed gap around the baseline" },
    { "samples.png",   "Samples of every run (20 Euler steps, the same noise for all)" },
};

int report_write(const AblationResults *res, const char *path, char *err, size_t errlen) {
    Str s = { malloc(4096), 0, 4096 };
    if (!s.buf) { snprintf(err, errlen, "out of memory"); return -1; }
    s.buf[0] = 0;
    const char *preset = preset_of(res);
    sadd(&s, "# TinyDiT ablation: RMSNorm, QK-norm, SwiGLU, 2D RoPE\n\n");
    sadd(&s, "Written by `step6_ablation report` from the runs in `%s`%s%s%s: %d of %d runs have a "
             "`metrics.json`, and every number below is read from them.\n\n",
         res->dir, preset ? " (" : "", preset ? preset : "", preset ? " preset)" : "", res->n_present, ABLATION_RUNS);
    sadd(&s, "| run | params | val MSE | probe-FD | ms/step | spikes | vs baseline | verdict |\n");
    sadd(&s, "|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (int r = 0; r < ABLATION_RUNS; r++) {
        const AblationRow *m = &res->run[r];
        if (!m->present) { sadd(&s, "| %s | | | | | | | missing |\n", ABLATION[r].label); continue; }
        char params[32], fd[32], delta[32], v[48];
        with_commas(m->m.params, params, sizeof params);
        fmt_fd(m->m.probe_fd, fd, sizeof fd);
        row_verdict(res, r, delta, sizeof delta, v, sizeof v);
        sadd(&s, "| %s | %s | %.4f | %s | %.1f | %d | %s | %s |\n", ABLATION[r].label, params, m->m.val_mse, fd,
             m->m.ms_per_step, m->m.loss_spikes, delta, v);
    }
    if (res->have_gap)
        sadd(&s, "\n**Seed gap** (|val MSE seed 0 − seed 1| of the baseline): %.4f; baseline mean %.4f. "
                 "*vs baseline* is a run's val MSE minus that mean. Within one seed gap the verdict is "
                 "*same* (noise); beyond it a *gain* (lower val MSE) or a *loss*, counted in gaps. "
                 "The two lr 2e-3 rows are compared with the same baseline, at the default lr.\n",
             res->gap, res->base_mean);
    else
        sadd(&s, "\nNo seed gap yet (it needs both `p11_base_s0` and `p11_base_s1`), so no verdicts.\n");
    const AblationRow *b = &res->run[RUN_BASE_LR2E3], *q = &res->run[RUN_QKNORM_LR2E3];
    if (b->present && q->present && res->have_gap) {
        char v[48];
        verdict(q->m.val_mse, b->m.val_mse, res->gap, v, sizeof v, NULL);
        sadd(&s, "\nAt lr 2e-3, QK-norm against the baseline at the same lr: %+.4f (%s); loss spikes %d and %d.\n",
             q->m.val_mse - b->m.val_mse, v, b->m.loss_spikes, q->m.loss_spikes);
    }
    for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
        const AblationRow *m = &res->run[r];
        if (!m->present || !m->n_curve) continue;
        char losses[4096], steps[4096];
        fmt_curve(m, losses, sizeof losses, 0);
        fmt_curve(m, steps, sizeof steps, 1);
        sadd(&s, "%s- %s, loss curve: %s at steps %s\n", r == RUN_BASE_LR2E3 ? "\n" : "", ABLATION[r].label,
             losses, steps);
    }

    // Links to the plots that exist, relative to the report's folder.
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = 0; else dir[0] = 0;
    sadd(&s, "\n## Plots\n\n");
    int shown = 0;
    for (size_t i = 0; i < sizeof PLOTS / sizeof PLOTS[0]; i++) {
        char p[2200];
        snprintf(p, sizeof p, "%splots/%s", dir, PLOTS[i].file);
        if (!file_exists(p)) continue;
        sadd(&s, "%s\n\n![%s](plots/%s)\n\n", PLOTS[i].what, PLOTS[i].what, PLOTS[i].file);
        shown++;
    }
    if (!shown) sadd(&s, "No plots yet: `make plots` draws them into `plots/` next to this report.\n\n");

    int notes = 0;
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (!res->run[r].present) {
            if (!notes++) sadd(&s, "## Notes\n\n");
            sadd(&s, "- `%s`: %s\n", ABLATION[r].name, res->run[r].note);
        }
    if (res->not_seed_pair) {
        if (!notes++) sadd(&s, "## Notes\n\n");
        sadd(&s, "- `p11_base_s0` and `p11_base_s1` differ in more than their seed: their gap is not a seed gap.\n");
    }
    if (res->mixed_presets) {
        if (!notes++) sadd(&s, "## Notes\n\n");
        sadd(&s, "- The runs come from different presets, so their numbers are not comparable.\n");
    }
    if (!s.buf) { snprintf(err, errlen, "out of memory"); return -1; }
    int rc = write_file_atomic(path, s.buf, s.len, err, errlen);
    free(s.buf);
    return rc;
}

// ---------------------------------------------------------------------------
// Commands
int cmd_table(int argc, char **argv) {
    const char *dir = default_runs_dir();
    bool tsv = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--tsv") == 0) tsv = true;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "error: unknown option '%s'\nusage: step6_ablation table [--tsv] [runs-dir]\n", argv[i]);
            return 2;
        } else dir = argv[i];
    }
    AblationResults *res = malloc(sizeof *res);
    if (!res) { fprintf(stderr, "error: out of memory\n"); return 1; }
    results_load(dir, res);
    if (tsv) results_print_tsv(res, stdout);
    else results_print(res);
    free(res);
    return 0;
}

int cmd_report(int argc, char **argv) {
    const char *dir = default_runs_dir(), *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "error: unknown option '%s'\nusage: step6_ablation report [-o FILE] [runs-dir]\n", argv[i]);
            return 2;
        } else dir = argv[i];
    }
    char path[2048], err[2400];
    if (out) snprintf(path, sizeof path, "%s", out);
    else snprintf(path, sizeof path, "%s/report.md", dir);
    AblationResults *res = malloc(sizeof *res);
    if (!res) { fprintf(stderr, "error: out of memory\n"); return 1; }
    results_load(dir, res);
    int rc = report_write(res, path, err, sizeof err);
    if (rc == 0) printf("wrote %s (%d of %d runs)\n", path, res->n_present, ABLATION_RUNS);
    else fprintf(stderr, "error: %s\n", err);
    free(res);
    return rc == 0 ? 0 : 1;
}
