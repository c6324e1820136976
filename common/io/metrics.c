// metrics.c: metrics.json back into numbers, and the scorecard table (see metrics.h).
#include <cJSON.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "nn/errors.h"
#include "fileio.h"
#include "metrics.h"

// A required number at a path of keys, e.g. {"raw", "val_mse"}. Writes the
// error (naming the file and the dotted field) and returns -1 when it is not
// there or not a number; allow_null lets a JSON null through as NAN.
static int get_number(const cJSON *root, const char *const *keys, int nkeys, bool allow_null,
                      const char *path, double *out, char *err, size_t errlen) {
    const cJSON *j = root;
    char dotted[128] = "";
    for (int i = 0; i < nkeys; i++) {
        size_t l = strlen(dotted);
        snprintf(dotted + l, sizeof dotted - l, "%s%s", i ? "." : "", keys[i]);
        j = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, keys[i]) : NULL;
    }
    if (j && cJSON_IsNumber(j)) { *out = j->valuedouble; return 0; }
    if (j && allow_null && cJSON_IsNull(j)) { *out = NAN; return 0; }
    snprintf(err, errlen, "%s: %s \"%s\" (a number%s)", path, j ? "wrong type for" : "no field", dotted,
             allow_null ? " or null" : "");
    return -1;
}

// The "config" object back into a Config, field by field through config_set,
// starting from the defaults as checkpoints do. false if any field is not
// understood (a file from another version): the config is then left out.
static bool read_config(const cJSON *obj, Config *cfg) {
    if (!cJSON_IsObject(obj)) return false;
    *cfg = config_default();
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        char kv[256];
        if (cJSON_IsString(item)) snprintf(kv, sizeof kv, "%s=%s", item->string, item->valuestring);
        else if (cJSON_IsNumber(item)) snprintf(kv, sizeof kv, "%s=%.17g", item->string, item->valuedouble);
        else if (cJSON_IsBool(item)) snprintf(kv, sizeof kv, "%s=%s", item->string, cJSON_IsTrue(item) ? "true" : "false");
        else return false;
        if (config_set(cfg, kv, NULL, 0) != 0) return false;
    }
    return true;
}

// obj's string field key into out, when there is one.
static bool read_string(const cJSON *obj, const char *key, char *out, size_t n) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(j)) snprintf(out, n, "%s", j->valuestring);
    return cJSON_IsString(j);
}

int diverged_read_step(const char *path) {
    char err[256];
    size_t len;
    if (!file_exists(path)) return -1;
    char *text = read_file_all(path, &len, err, sizeof err);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(root, "diverged_at_step");
    int out = cJSON_IsNumber(step) && step->valuedouble >= 0 ? (int)step->valuedouble : -1;
    cJSON_Delete(root);
    return out;
}

int metrics_read(const char *path, RunMetrics *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->probe_fd = NAN;
    out->probe_test_acc = NAN;
    // a run folder, or a path that is not there and does not look like a file:
    // the message then names the metrics.json we looked for
    struct stat sb;
    size_t pl = strlen(path);
    bool is_dir = stat(path, &sb) == 0 ? S_ISDIR(sb.st_mode) : !(pl >= 5 && strcmp(path + pl - 5, ".json") == 0);
    if (is_dir)
        snprintf(out->path, sizeof out->path, "%s%smetrics.json", path,
                 path[0] && path[strlen(path) - 1] == '/' ? "" : "/");
    else
        snprintf(out->path, sizeof out->path, "%s", path);
    const char *file = out->path;
    if (!file_exists(file))
        return errorf(err, errlen, "%s: no such file (is this a finished run? metrics.json is written when "
                                   "training ends)", file);
    size_t len;
    char *text = read_file_all(file, &len, err, errlen);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return errorf(err, errlen, "%s: not a JSON object", file);
    }

    double params, val, fd, ips, spikes;
    if (get_number(root, (const char *[]){ "params" }, 1, false, file, &params, err, errlen) != 0
        || get_number(root, (const char *[]){ "raw", "val_mse" }, 2, false, file, &val, err, errlen) != 0
        || get_number(root, (const char *[]){ "raw", "uncond", "probe_fd" }, 3, true, file, &fd, err, errlen) != 0
        || get_number(root, (const char *[]){ "it_per_s" }, 1, false, file, &ips, err, errlen) != 0
        || get_number(root, (const char *[]){ "loss_spikes" }, 1, false, file, &spikes, err, errlen) != 0) {
        cJSON_Delete(root);
        return -1;
    }
    out->params = (long long)params;
    out->val_mse = val;
    out->probe_fd = fd;
    out->ms_per_step = ips > 0 ? 1000.0 / ips : NAN;
    out->loss_spikes = (int)spikes;
    out->has_ema = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "ema"));
    out->ema_val_mse = out->ema_probe_fd = NAN;
    if (out->has_ema &&
        (get_number(root, (const char *[]){ "ema", "val_mse" }, 2, false, file, &out->ema_val_mse, err, errlen) != 0 ||
         get_number(root, (const char *[]){ "ema", "uncond", "probe_fd" }, 3, true, file, &out->ema_probe_fd, err,
                    errlen) != 0)) {
        cJSON_Delete(root);
        return -1;
    }

    // the name: the file's own, else the folder's
    if (!read_string(root, "name", out->name, sizeof out->name)) {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s", file);
        snprintf(out->name, sizeof out->name, "%.127s", basename(dirname(dir)));
    }
    read_string(root, "preset", out->preset, sizeof out->preset);
    out->has_config = read_config(cJSON_GetObjectItemCaseSensitive(root, "config"), &out->cfg);
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(root, "probe");
    read_string(probe, "key", out->probe_key, sizeof out->probe_key);
    const cJSON *j;
    if (cJSON_IsNumber(j = cJSON_GetObjectItemCaseSensitive(probe, "test_acc")))
        out->probe_test_acc = j->valuedouble;
    read_string(probe, "weights", out->probe_weights, sizeof out->probe_weights);
    read_string(probe, "source", out->probe_source, sizeof out->probe_source);
    cJSON_Delete(root);
    return 0;
}

double metrics_val_mse_gap(const RunMetrics *a, const RunMetrics *b) {
    return fabs(a->val_mse - b->val_mse);
}

bool metrics_is_seed_pair(const RunMetrics *a, const RunMetrics *b) {
    if (!a->has_config || !b->has_config || !configs_agree(&a->cfg, &b->cfg, true)) return false;
    // two draws: they differ in the seed, or in the data order's seed alone
    return a->cfg.run.seed != b->cfg.run.seed || run_data_seed(&a->cfg.run) != run_data_seed(&b->cfg.run);
}

SeedSpread seed_spread(const double *values, int n) {
    SeedSpread s = { n, NAN, NAN, NAN };
    if (n < 1) return s;
    double sum = 0;
    for (int i = 0; i < n; i++) sum += values[i];
    s.mean = sum / n;
    if (n < 2) return s;
    double sq = 0;                           // two passes: no cancellation
    for (int i = 0; i < n; i++) sq += (values[i] - s.mean) * (values[i] - s.mean);
    s.sd = sqrt(sq / (n - 1));
    s.se = s.sd / sqrt((double)n);
    return s;
}

void with_commas(long long v, char *out, size_t n) {
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", v < 0 ? -v : v);
    int len = (int)strlen(digits), k = 0;
    char buf[48];
    if (v < 0) buf[k++] = '-';
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = 0;
    snprintf(out, n, "%s", buf);
}

void metrics_print_header(FILE *f) {
    fprintf(f, "%-20s %10s %8s %11s %8s %6s\n", "run", "params", "val MSE", "probe-FD", "ms/step", "spikes");
}

void metrics_print_row(FILE *f, const char *label, const RunMetrics *r, bool other_probe) {
    char params[48], fd[32], ms[32];
    with_commas(r->params, params, sizeof params);
    if (isfinite(r->probe_fd) && other_probe) snprintf(fd, sizeof fd, "other probe");
    else if (isfinite(r->probe_fd)) snprintf(fd, sizeof fd, "%.1f", r->probe_fd);
    else snprintf(fd, sizeof fd, "-");
    if (isfinite(r->ms_per_step)) snprintf(ms, sizeof ms, "%.1f", r->ms_per_step);
    else snprintf(ms, sizeof ms, "-");
    fprintf(f, "%-20s %10s %8.4f %11s %8s %6d\n", label ? label : r->name, params, r->val_mse, fd, ms,
            r->loss_spikes);
    if (!r->has_ema) return;   // the EMA's weights, a row of their own below the run's
    if (isfinite(r->ema_probe_fd) && other_probe) snprintf(fd, sizeof fd, "other probe");
    else if (isfinite(r->ema_probe_fd)) snprintf(fd, sizeof fd, "%.1f", r->ema_probe_fd);
    else snprintf(fd, sizeof fd, "-");
    fprintf(f, "%-20s %10s %8.4f %11s %8s %6s\n", "  its EMA", params, r->ema_val_mse, fd, "", "");
}

// ---------------------------------------------------------------------------
// The probe behind a probe-FD

bool metrics_same_probe(const RunMetrics *a, const RunMetrics *b) {
    if (strcmp(a->probe_key, b->probe_key) != 0) return false;
    // weights compare where both runs recorded them (older runs did not)
    if (a->probe_weights[0] && b->probe_weights[0] && strcmp(a->probe_weights, b->probe_weights) != 0) return false;
    // test_acc is a float32 written as a double: equal, or both absent
    if (isnan(a->probe_test_acc) || isnan(b->probe_test_acc)) return isnan(a->probe_test_acc) && isnan(b->probe_test_acc);
    return fabs(a->probe_test_acc - b->probe_test_acc) < 1e-6;
}

void metrics_probe_label(const RunMetrics *r, char *out, size_t n) {
    char acc[48] = "test accuracy not recorded";
    if (isfinite(r->probe_test_acc)) snprintf(acc, sizeof acc, "test accuracy %.2f%%", 100.0 * r->probe_test_acc);
    if (!r->probe_key[0] && !r->probe_weights[0]) snprintf(out, n, "no probe recorded");
    else if (!r->probe_weights[0]) snprintf(out, n, "probe %s (%s, weights not recorded)", r->probe_key, acc);
    else if (!strcmp(r->probe_source, "shipped")) snprintf(out, n, "the shipped probe (weights %s, %s)", r->probe_weights, acc);
    else snprintf(out, n, "probe %s (%s, weights %s, %s)", r->probe_key,
                  r->probe_source[0] ? r->probe_source : "source not recorded", r->probe_weights, acc);
}

int metrics_table_probe(const RunMetrics *runs, int n) {
    for (int i = 0; i < n; i++)
        if (isfinite(runs[i].probe_fd)) return i;
    return -1;
}

void compare_means(SeedSpread a, SeedSpread b, Comparison *out) {
    memset(out, 0, sizeof *out);
    out->diff = a.mean - b.mean;
    out->se = out->z = NAN;
    double sd_a = a.sd, sd_b = b.sd;
    // one seed has no spread of its own: borrow the other side's, and say so
    if (a.n < 2 && b.n >= 2) { sd_a = b.sd; out->assumed = true; }
    if (b.n < 2 && a.n >= 2) { sd_b = a.sd; out->assumed = true; }
    if (a.n < 1 || b.n < 1 || !isfinite(sd_a) || !isfinite(sd_b)) {
        snprintf(out->verdict, sizeof out->verdict, "? no spread measured");
        return;
    }
    out->se = sqrt(sd_a * sd_a / a.n + sd_b * sd_b / b.n);
    out->z = out->se > 0 ? fabs(out->diff) / out->se : (out->diff == 0 ? 0 : INFINITY);
    out->resolved = out->z > COMPARE_SE;
    const char *what = !out->resolved ? "not resolved" : out->diff < 0 ? "gain" : "loss";
    snprintf(out->verdict, sizeof out->verdict, "%s (%.1f se)%s", what, out->z, out->assumed ? "*" : "");
}
