// test_table.c: the table, the seed gap and the verdicts, on made-up
// metrics.json files in a temporary folder.
//
// The made-up runs carry the tutorial's own numbers (its Step 6 table), so
// the expected verdicts can be checked against what the tutorial says: the
// seed gap 0.0035, QK-norm "just above seed noise", RoPE "7× the seed gap",
// RMSNorm and SwiGLU "same".
#include "testutil.h"
#include "ablation.h"
#include "io/fileio.h"
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];

// The tutorial's table: params, val MSE, probe-FD, ms/step, spikes.
typedef struct { const char *name; long params; double val, fd, ms; int spikes; } Row;
static const Row TUTORIAL[] = {
    { "p11_base_s0",      1152176, 0.2562, 72.2, 149.5, 0 },
    { "p11_base_s1",      1152176, 0.2527, 70.5, 148.6, 0 },
    { "p11_rmsnorm",      1152176, 0.2559, 71.7, 177.6, 0 },
    { "p11_qknorm",       1152432, 0.2499, 75.0, 192.7, 0 },
    { "p11_swiglu",       1152344, 0.2564, 77.7, 231.5, 0 },
    { "p11_rope",         1150128, 0.2289, 63.9, 246.9, 0 },
    { "p11_all",          1150552, 0.2266, 62.3, 357.1, 0 },
    { "p11_base_lr2e3",   1152176, 0.2085, 46.4, 150.0, 0 },
    { "p11_qknorm_lr2e3", 1152432, 0.2069, 42.1, 190.0, 2 },
};

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

// A metrics.json in the trainer's schema (the fields the table reads, and a
// few it does not). lr2e3 runs get a 16-point curve whose every 4th point is
// the tutorial's printed curve.
static void write_run(const char *dir, const Row *r, const char *preset) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, r->name);
    mkdir(path, 0755);
    bool hi = strstr(r->name, "lr2e3") != NULL;
    const double printed_b[4] = { 0.39736, 0.24498, 0.21672, 0.20865 };
    const double printed_q[4] = { 0.39411, 0.24116, 0.21273, 0.20661 };
    const double *pr = strstr(r->name, "qknorm") ? printed_q : printed_b;
    char curve[2048] = "";
    size_t len = 0;
    for (int i = 0; i < 16; i++) {
        double loss = i % 4 == 0 ? pr[i / 4] : 0.3 - 0.001 * i;
        len += snprintf(curve + len, sizeof curve - len, "%s[%d, %.5f]", i ? ", " : "", 250 * (i + 1), loss);
    }
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\": \"%s\", \"params\": %ld, \"it_per_s\": %.6f, \"ms_per_step\": %.3f,\n"
             " \"loss_spikes\": %d, \"raw\": {\"val_mse\": %.4f, \"uncond\": {\"probe_fd\": %.1f}},\n"
             " \"curve\": [%s], \"curve_window\": 250,\n"
             " \"config\": {\"dim\": \"128\", \"lr\": \"%s\", \"steps\": \"4000\", \"seed\": \"%d\"},\n"
             " \"preset\": \"%s\", \"steps\": 4000}\n",
             r->name, r->params, 1000.0 / r->ms, r->ms, r->spikes, r->val, r->fd, curve,
             hi ? "0.00200000009" : "0.000300000014", strcmp(r->name, "p11_base_s1") == 0, preset);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, r->name);
    write_text(path, text);
}

static void make_runs(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/step6_table_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    for (size_t i = 0; i < sizeof TUTORIAL / sizeof TUTORIAL[0]; i++) write_run(g_dir, &TUTORIAL[i], "tutorial");
}

static void remove_runs(void) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    ck_assert_int_eq(system(cmd), 0);
}

// Runs fn with stdout going into a file and returns what it printed.
static char *capture_stdout(void (*fn)(void *), void *ctx) {
    char path[] = "/tmp/step6_out_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    fn(ctx);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *text = calloc((size_t)n + 1, 1);
    ck_assert_int_eq(pread(fd, text, (size_t)n, 0), n);
    close(fd);
    unlink(path);
    return text;
}

static void print_results(void *res) { results_print(res); }

static AblationResults *load(void) {
    AblationResults *res = malloc(sizeof *res);
    ck_assert_ptr_nonnull(res);
    results_load(g_dir, res);
    return res;
}

static void assert_has(const char *text, const char *what) {
    ck_assert_msg(strstr(text, what) != NULL, "expected \"%s\" in:\n%s", what, text);
}

// The line of text that starts (after indentation) with label, and checks
// that it holds each of the NULL-terminated strings that follow.
static void assert_row(const char *text, const char *label, ...) {
    const char *line = text;
    size_t n = strlen(label);
    for (;;) {
        while (*line == ' ') line++;
        if (strncmp(line, label, n) == 0 && line[n] == ' ') break;
        line = strchr(line, '\n');
        ck_assert_msg(line != NULL, "no row \"%s\" in:\n%s", label, text);
        line++;
    }
    const char *eol = strchr(line, '\n');
    char row[512];
    snprintf(row, sizeof row, "%.*s", eol ? (int)(eol - line) : (int)strlen(line), line);
    va_list ap;
    va_start(ap, label);
    for (const char *want; (want = va_arg(ap, const char *));)
        ck_assert_msg(strstr(row, want) != NULL, "row \"%s\" lacks \"%s\"", row, want);
    va_end(ap);
}

// ---------------------------------------------------------------------------
START_TEST(test_verdict_rule) {
    char v[64];
    double g;
    // within one gap, either side, and exactly on it: noise
    verdict(0.2545, 0.2545, 0.0035, v, sizeof v, &g);   ck_assert_str_eq(v, "same");
    verdict(0.2575, 0.2545, 0.0035, v, sizeof v, &g);   ck_assert_str_eq(v, "same");
    verdict(0.2510, 0.2545, 0.0035, v, sizeof v, &g);   ck_assert_str_eq(v, "same");
    // beyond it: lower val MSE is a gain, higher a loss, counted in gaps
    verdict(0.2289, 0.25445, 0.0035, v, sizeof v, &g);
    ck_assert_str_eq(v, "gain, 7.3 gaps");
    ck_assert(fabs(g - 0.02555 / 0.0035) < 1e-9);
    verdict(0.2650, 0.2545, 0.0035, v, sizeof v, &g);   ck_assert_str_eq(v, "loss, 3.0 gaps");
    // no gap to measure with: say so rather than divide by zero
    verdict(0.25, 0.26, 0.0, v, sizeof v, &g);          ck_assert_str_eq(v, "? (seed gap is 0)");
    verdict(0.26, 0.26, 0.0, v, sizeof v, &g);          ck_assert_str_eq(v, "same");
}
END_TEST

START_TEST(test_tutorial_numbers) {
    make_runs();
    AblationResults *res = load();
    ck_assert_int_eq(res->n_present, 9);
    ck_assert(res->have_gap);
    ck_assert(!res->mixed_presets);
    ck_assert(fabs(res->gap - 0.0035) < 1e-9);
    ck_assert(fabs(res->base_mean - 0.25445) < 1e-9);
    const RunMetrics *q = &res->run[RUN_QKNORM].m;
    ck_assert_int_eq(q->params, 1152432);
    ck_assert(fabs(q->val_mse - 0.2499) < 1e-9 && fabs(q->probe_fd - 75.0) < 1e-9);
    ck_assert(fabs(q->ms_per_step - 192.7) < 1e-3);   // 1000 / it_per_s, as the tutorial computes it
    ck_assert_int_eq(res->run[RUN_QKNORM_LR2E3].m.loss_spikes, 2);
    ck_assert_int_eq(res->run[RUN_QKNORM_LR2E3].steps, 4000);
    ck_assert_int_eq(res->run[RUN_BASE_LR2E3].n_curve, 16);
    ck_assert(fabs(res->run[RUN_BASE_LR2E3].lr - 2e-3) < 1e-9);

    char *out = capture_stdout(print_results, res);
    // the rows, as the tutorial prints them, with the verdicts it reaches
    assert_has(out, "1,152,176");
    assert_has(out, "seed gap (|val MSE seed 0 - seed 1| of the baseline): 0.0035; baseline mean 0.2544");
    // the rows, with the verdicts the tutorial reaches in words
    assert_row(out, "baseline (seed 0)", "1,152,176", "0.2562", "72.2", "149.5", "noise floor", NULL);
    assert_row(out, "+ RMSNorm", "0.2559", "71.7", "same", NULL);
    assert_row(out, "+ QK-norm", "1,152,432", "0.2499", "-0.0045", "gain, 1.3 gaps", NULL);  // "just above seed noise"
    assert_row(out, "+ SwiGLU", "0.2564", "same", NULL);
    assert_row(out, "+ 2D RoPE", "1,150,128", "0.2289", "63.9", "246.9", "gain, 7.3 gaps", NULL);  // "7x the seed gap"
    assert_row(out, "all four", "0.2266", "gain, 8.0 gaps", NULL);
    // the lr 2e-3 pair: the tutorial's curve[::4], and QK-norm vs its own baseline
    assert_has(out, "lr 0.002 (6.7x the baseline's 0.0003)");
    assert_has(out, "[0.39736, 0.24498, 0.21672, 0.20865] at steps [250, 1250, 2250, 3250]");
    assert_has(out, "[0.39411, 0.24116, 0.21273, 0.20661]");
    assert_has(out, "+ QK-norm against the baseline, both at the high lr: -0.0016, same");
    ck_assert_ptr_null(strstr(out, "notes:"));
    free(out);
    free(res);
    remove_runs();
}
END_TEST

START_TEST(test_missing_and_broken_runs) {
    make_runs();
    char path[512];
    // one run never started, one cut off mid-write, one without val MSE, one
    // without a probe (probe_fd null is allowed: "-")
    snprintf(path, sizeof path, "rm -rf '%s/p11_swiglu'", g_dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(path, sizeof path, "%s/p11_rope/metrics.json", g_dir);
    write_text(path, "{\"params\": 1150128, \"raw\": {\"val_mse\": 0.22");
    snprintf(path, sizeof path, "%s/p11_all/metrics.json", g_dir);
    write_text(path, "{\"params\": 1150552, \"it_per_s\": 3.0, \"loss_spikes\": 0, \"raw\": {}}");
    snprintf(path, sizeof path, "%s/p11_rmsnorm/metrics.json", g_dir);
    write_text(path, "{\"params\": 1152176, \"it_per_s\": 5.0, \"loss_spikes\": 1, "
                     "\"raw\": {\"val_mse\": 0.2559, \"uncond\": {\"probe_fd\": null}}, \"curve\": []}");
    AblationResults *res = load();
    ck_assert_int_eq(res->n_present, 6);
    ck_assert(!res->run[RUN_SWIGLU].present);
    assert_has(res->run[RUN_SWIGLU].note, "not run yet");
    ck_assert(!res->run[RUN_ROPE].present);
    assert_has(res->run[RUN_ROPE].note, "not a JSON object");
    ck_assert(!res->run[RUN_ALL].present);
    assert_has(res->run[RUN_ALL].note, "raw.val_mse");
    ck_assert(res->run[RUN_RMSNORM].present);
    ck_assert(isnan(res->run[RUN_RMSNORM].m.probe_fd));
    char *out = capture_stdout(print_results, res);
    assert_has(out, "6 of 9 have a metrics.json");
    assert_row(out, "+ SwiGLU", "missing", NULL);
    assert_has(out, "notes:");
    assert_has(out, "p11_swiglu: no ");
    assert_has(out, "p11_rope: ");
    // the row without a probe: "-" in the probe-FD column, the rest intact
    assert_row(out, "+ RMSNorm", "1,152,176   0.2559         -    200.0       1", "same", NULL);
    free(out);

    // without the second seed there is no gap and no verdict, but a table
    snprintf(path, sizeof path, "rm -rf '%s/p11_base_s1'", g_dir);
    ck_assert_int_eq(system(path), 0);
    results_load(g_dir, res);
    ck_assert(!res->have_gap);
    out = capture_stdout(print_results, res);
    assert_has(out, "no seed gap yet");
    assert_has(out, "? (no seed gap)");
    free(out);

    // an empty folder, and no folder at all
    snprintf(path, sizeof path, "%s/empty", g_dir);
    mkdir(path, 0755);
    results_load(path, res);
    ck_assert_int_eq(res->n_present, 0);
    ck_assert(!res->dir_missing);
    out = capture_stdout(print_results, res);
    assert_has(out, "neither run is there yet");
    free(out);
    snprintf(path, sizeof path, "%s/nowhere", g_dir);
    results_load(path, res);
    ck_assert(res->dir_missing);
    out = capture_stdout(print_results, res);
    assert_has(out, "there is no folder");
    free(out);
    free(res);
    remove_runs();
}
END_TEST

START_TEST(test_mixed_presets_are_flagged) {
    make_runs();
    write_run(g_dir, &TUTORIAL[RUN_ROPE], "quick");
    AblationResults *res = load();
    ck_assert(res->mixed_presets);
    ck_assert(!res->not_seed_pair);
    char *out = capture_stdout(print_results, res);
    assert_has(out, "different presets");
    free(out);
    // a "seed pair" whose configs differ in more than the seed
    char path[512];
    snprintf(path, sizeof path, "%s/p11_base_s1/metrics.json", g_dir);
    write_text(path, "{\"params\": 1152176, \"it_per_s\": 6.7, \"loss_spikes\": 0, \"raw\": {\"val_mse\": 0.2527, "
                     "\"uncond\": {\"probe_fd\": 70.5}}, \"config\": {\"dim\": \"64\", \"seed\": \"1\"}}");
    results_load(g_dir, res);
    ck_assert(res->have_gap && res->not_seed_pair);
    out = capture_stdout(print_results, res);
    assert_has(out, "not a seed gap");
    free(out);
    free(res);
    remove_runs();
}
END_TEST

START_TEST(test_report_and_tsv) {
    make_runs();
    AblationResults *res = load();
    char path[512], err[256];
    // one plot exists: the report links it, and only it
    snprintf(path, sizeof path, "%s/plots", g_dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/plots/loss.png", g_dir);
    write_text(path, "png");
    snprintf(path, sizeof path, "%s/report.md", g_dir);
    ck_assert_int_eq(report_write(res, path, err, sizeof err), 0);
    size_t len;
    char *md = read_file_all(path, &len, err, sizeof err);
    ck_assert_ptr_nonnull(md);
    assert_has(md, "| run | params | val MSE | probe-FD | ms/step | spikes | vs baseline | verdict |");
    assert_has(md, "| + 2D RoPE | 1,150,128 | 0.2289 | 63.9 | 246.9 | 0 | -0.0255 | gain, 7.3 gaps |");
    assert_has(md, "| + QK-norm | 1,152,432 | 0.2499 | 75.0 | 192.7 | 0 | -0.0045 | gain, 1.3 gaps |");
    assert_has(md, "**Seed gap**");
    assert_has(md, "(plots/loss.png)");
    ck_assert_ptr_null(strstr(md, "(plots/val_mse.png)"));
    free(md);

    // the TSV that scripts/plots.sh reads: a header and all nine runs
    char tsv[] = "/tmp/step6_tsv_XXXXXX";
    int fd = mkstemp(tsv);
    FILE *f = fdopen(fd, "w");
    results_print_tsv(res, f);
    fclose(f);
    char *t = read_file_all(tsv, &len, err, sizeof err);
    int lines = 0;
    for (char *c = t; *c; c++) lines += *c == '\n';
    ck_assert_int_eq(lines, 10);
    assert_has(t, "p11_rope\t+ 2D RoPE\t1\t1150128\t0.228900\t63.900\t246.900\t0\t0.254450\t0.003500\n");
    free(t);
    unlink(tsv);
    free(res);
    remove_runs();
}
END_TEST

int main(void) {
    Suite *s = suite_create("step6_table");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_verdict_rule);
    tcase_add_test(tc, test_tutorial_numbers);
    tcase_add_test(tc, test_missing_and_broken_runs);
    tcase_add_test(tc, test_mixed_presets_are_flagged);
    tcase_add_test(tc, test_report_and_tsv);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
