// ablation_runs.c: the runs' metrics.json files, read into one structure;
// and the two ways of judging a difference (the tutorial's seed gap; the
// standard error over seeds). Everything that prints them reads from here:
// ablation_table.c (text), ablation_curves.c (the loss curves over seeds)
// and ablation_report.c (Markdown).
//
// Every number comes from a metrics.json (parsed with cJSON), field names as
// in the tutorial's own table script: params, it_per_s, loss_spikes,
// raw.val_mse, raw.uncond.probe_fd, curve. A run that is missing or
// unreadable becomes a note, never a crash, so the table can be looked at
// while the runs are still going.
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ablation_runs.h"
#include "eval/probe.h"
#include "io/fileio.h"
#include "io/paths.h"
#include <sys/stat.h>

// ---------------------------------------------------------------------------
// Reading

// What the scorecard reader (common/io/metrics.h) leaves out: the loss curve
// and the run's times (the lr and steps come from its config).
static void read_extras(const char *path, AblationRow *row) {
    char err[512];
    size_t len;
    char *text = read_file_all(path, &len, err, sizeof err);
    if (!text) return;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "train_seconds");
    if (cJSON_IsNumber(j)) row->train_seconds = j->valuedouble;
    // not "wall_seconds": that is the clock time of the run's last start
    // only, which for a resumed run leaves out the starts before it
    const cJSON *part, *parts = cJSON_GetObjectItemCaseSensitive(root, "scorecard_seconds");
    if (cJSON_IsObject(parts)) {
        row->scorecard_seconds = 0;
        cJSON_ArrayForEach(part, parts) if (cJSON_IsNumber(part)) row->scorecard_seconds += part->valuedouble;
    }
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
    row->lr = row->train_seconds = row->scorecard_seconds = NAN;
    if (!file_exists(path)) {
        snprintf(row->note, sizeof row->note, "no %s (not run yet, or not finished)", path);
        return -1;
    }
    if (metrics_read(path, &row->m, row->note, sizeof row->note) != 0) return -1;
    if (row->m.has_config) {
        row->lr = row->m.cfg.run.lr;
        row->steps = row->m.cfg.run.steps;
    }
    read_extras(path, row);
    row->present = true;
    return 0;
}

void results_load(const char *dir, AblationResults *res) {
    memset(res, 0, sizeof *res);
    snprintf(res->dir, sizeof res->dir, "%s", dir);
    struct stat sb;
    res->dir_missing = stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode);
    const char *first_preset = NULL;
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            char name[64], path[2048];
            ablation_run_name(c, k, name, sizeof name);
            snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
            AblationRow *row = &res->cfg[c].seed[k];
            if (ablation_row_read(path, row) != 0 || !isfinite(row->m.probe_fd)) continue;
            if (!res->has_probe) {
                char err[512];
                res->has_probe = true;
                if (probe_shipped_metrics(&res->probe, err, sizeof err) != 0) {
                    fprintf(stderr, "warning: %s: probe-FDs shown by the first run's probe instead\n", err);
                    res->probe = row->m;
                }
            }
            row->other_probe = !metrics_same_probe(&row->m, &res->probe);
            res->other_probe_runs += row->other_probe;
        }
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        ConfigResults *cr = &res->cfg[c];
        double vals[ABLATION_MAX_SEEDS], fd_sum = 0, ms_sum = 0;
        int fd_n = 0;
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            AblationRow *row = &cr->seed[k];
            if (!row->present) continue;
            res->n_present++;
            if (!cr->n) cr->params = row->m.params;
            vals[cr->n++] = row->m.val_mse;
            ms_sum += row->m.ms_per_step;
            cr->spikes += row->m.loss_spikes;
            if (isfinite(row->m.probe_fd)) { fd_sum += row->m.probe_fd; fd_n++; }
            cr->other_probe |= row->other_probe;
            if (row->m.preset[0]) {
                if (!first_preset) first_preset = row->m.preset;
                else if (strcmp(first_preset, row->m.preset) != 0) res->mixed_presets = true;
            }
        }
        cr->val = seed_spread(vals, cr->n);
        cr->probe_fd = fd_n && !cr->other_probe ? fd_sum / fd_n : NAN;
        cr->ms_per_step = cr->n ? ms_sum / cr->n : NAN;
    }
    for (int r = 0; r < ABLATION_RUNS; r++) res->nine_present += results_run(res, r)->present;
    const AblationRow *s0 = results_run(res, RUN_BASE_S0), *s1 = results_run(res, RUN_BASE_S1);
    if (s0->present && s1->present) {
        res->have_gap = true;
        res->base_mean = 0.5 * (s0->m.val_mse + s1->m.val_mse);
        res->gap = metrics_val_mse_gap(&s0->m, &s1->m);
        // a gap is only a seed gap if nothing but the seed differs
        res->not_seed_pair = s0->m.has_config && s1->m.has_config && !metrics_is_seed_pair(&s0->m, &s1->m);
    }
}

const AblationRow *results_run(const AblationResults *res, int r) {
    return &res->cfg[ABLATION[r].config].seed[ABLATION[r].seed];
}

// ---------------------------------------------------------------------------
// Verdicts

// The tutorial's: one run against one seed gap.
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

// Ours: two means over seeds, and the standard error of their difference.
// ---------------------------------------------------------------------------
// For the commands

// Loads dir, and ref_dir when given (NULL otherwise). Both NULL when out of memory.
AblationResults *results_load_pair(const char *dir, const char *ref_dir, AblationResults **ref) {
    AblationResults *res = malloc(sizeof *res);
    *ref = ref_dir ? malloc(sizeof **ref) : NULL;
    if (!res || (ref_dir && !*ref)) {
        free(res); free(*ref); *ref = NULL;
        fprintf(stderr, "error: out of memory\n");
        return NULL;
    }
    results_load(dir, res);
    if (ref_dir) results_load(ref_dir, *ref);
    return res;
}
