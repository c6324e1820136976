// test_table.c: the table, the seed gap and the verdicts, on made-up
// metrics.json files in a temporary folder; then several seeds per
// configuration: the spread, the standard error of a difference of means,
// the verdicts (gain, loss, not resolved, one seed assumed), and --compare.
//
// The made-up runs carry the tutorial's own numbers (its Step 6 table), so
// the expected verdicts can be checked against what the tutorial says: the
// seed gap 0.0035, QK-norm "just above seed noise", RoPE "7× the seed gap",
// RMSNorm and SwiGLU "same".
#include "testutil.h"
#include "ablation_table.h"
#include "io/fileio.h"
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];

// The tutorial's table: params, val MSE, probe-FD, ms/step, spikes (no run
// spiked; it gives no ms/step for the lr 2e-3 pair: 150 and 190 are made up).
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
    { "p11_qknorm_lr2e3", 1152432, 0.2069, 42.1, 190.0, 0 },
};

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

// The probe every metrics.json below names (a "probe" object and a comma; "" for none): the
// shipped probe's key and test accuracy unless a test says otherwise.
#define PROBE_A "\"probe\": {\"key\": \"2c20f3f74af509e0\", \"test_acc\": 0.6129000186920166}, "
#define PROBE_B "\"probe\": {\"key\": \"2c20f3f74af509e0\", \"test_acc\": 0.6147000193595886}, "
static const char *g_probe = PROBE_B;

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
             " %s\"preset\": \"%s\", \"steps\": 4000}\n",
             r->name, r->params, 1000.0 / r->ms, r->ms, r->spikes, r->val, r->fd, curve,
             hi ? "0.00200000009" : "0.000300000014", strcmp(r->name, "p11_base_s1") == 0, g_probe, preset);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, r->name);
    write_text(path, text);
}

static void make_runs(void) {
    tmpdir_make(g_dir, sizeof g_dir, "table");
    for (size_t i = 0; i < sizeof TUTORIAL / sizeof TUTORIAL[0]; i++) write_run(g_dir, &TUTORIAL[i], "tutorial");
}

static void remove_runs(void) { tmpdir_remove(g_dir); }

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

// What print writes for res, in memory (free it).
static char *printed(void (*print)(const AblationResults *, FILE *), const AblationResults *res) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    print(res, f);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

static void print_results(void *res) { results_print(res, NULL); }

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
    const RunMetrics *q = &results_run(res, RUN_QKNORM)->m;
    ck_assert_int_eq(q->params, 1152432);
    ck_assert(fabs(q->val_mse - 0.2499) < 1e-9 && fabs(q->probe_fd - 75.0) < 1e-9);
    ck_assert(fabs(q->ms_per_step - 192.7) < 1e-3);   // 1000 / it_per_s, as the tutorial computes it
    ck_assert_int_eq(results_run(res, RUN_QKNORM_LR2E3)->steps, 4000);
    ck_assert_int_eq(results_run(res, RUN_BASE_LR2E3)->n_curve, 16);
    ck_assert(fabs(results_run(res, RUN_BASE_LR2E3)->lr - 2e-3) < 1e-9);

    char *out = capture_stdout(print_results, res);
    // the rows, as the tutorial prints them, with the verdicts it reaches
    assert_has(out, "1,152,176");
    assert_has(out, "seed gap (|val MSE seed 0 - seed 1| of the baseline): 0.0035; baseline mean 0.2544");
    // the rows, with the verdicts the tutorial reaches in words
    assert_row(out, "baseline (seed 0)", "1,152,176", "0.2562", "72.2", "noise floor", NULL);
    assert_row(out, "+ RMSNorm", "0.2559", "71.7", "same", NULL);
    assert_row(out, "+ QK-norm", "1,152,432", "0.2499", "-0.0045", "gain, 1.3 gaps", NULL);  // "just above seed noise"
    assert_row(out, "+ SwiGLU", "0.2564", "same", NULL);
    assert_row(out, "+ 2D RoPE", "1,150,128", "0.2289", "63.9", "gain, 7.3 gaps", NULL);  // "7x the seed gap"
    // no ms/step: the runs shared the machine (each verdict column says whose verdict it is)
    assert_has(out, "the tutorial's verdict");
    ck_assert_ptr_null(strstr(out, "246.9"));
    assert_has(out, "No ms/step here");
    assert_row(out, "all four", "0.2266", "gain, 8.0 gaps", NULL);
    // the lr 2e-3 pair: the tutorial's curve[::4], and QK-norm vs its own baseline
    assert_has(out, "lr 0.002 (6.7x the baseline's 0.0003)");
    assert_has(out, "[0.39736, 0.24498, 0.21672, 0.20865] at steps [250, 1250, 2250, 3250]");
    assert_has(out, "[0.39411, 0.24116, 0.21273, 0.20661]");
    assert_has(out, "+ QK-norm against the baseline, both at the high lr: -0.0016, the tutorial's verdict: same");
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
    snprintf(path, sizeof path, "%s/p11_swiglu", g_dir);
    tmpdir_remove(path);
    snprintf(path, sizeof path, "%s/p11_rope/metrics.json", g_dir);
    write_text(path, "{\"params\": 1150128, \"raw\": {\"val_mse\": 0.22");
    snprintf(path, sizeof path, "%s/p11_all/metrics.json", g_dir);
    write_text(path, "{\"params\": 1150552, \"it_per_s\": 3.0, \"loss_spikes\": 0, \"raw\": {}}");
    snprintf(path, sizeof path, "%s/p11_rmsnorm/metrics.json", g_dir);
    write_text(path, "{\"params\": 1152176, \"it_per_s\": 5.0, \"loss_spikes\": 1, "
                     "\"raw\": {\"val_mse\": 0.2559, \"uncond\": {\"probe_fd\": null}}, \"curve\": []}");
    AblationResults *res = load();
    ck_assert_int_eq(res->n_present, 6);
    ck_assert(!results_run(res, RUN_SWIGLU)->present);
    assert_has(results_run(res, RUN_SWIGLU)->note, "not run yet");
    ck_assert(!results_run(res, RUN_ROPE)->present);
    assert_has(results_run(res, RUN_ROPE)->note, "not a JSON object");
    ck_assert(!results_run(res, RUN_ALL)->present);
    assert_has(results_run(res, RUN_ALL)->note, "raw.val_mse");
    ck_assert(results_run(res, RUN_RMSNORM)->present);
    ck_assert(isnan(results_run(res, RUN_RMSNORM)->m.probe_fd));
    ck_assert_int_eq(results_run(res, RUN_RMSNORM)->m.loss_spikes, 1);
    char *out = capture_stdout(print_results, res);
    assert_has(out, "6 of 9 have a metrics.json");
    assert_row(out, "+ SwiGLU", "missing", NULL);
    assert_has(out, "notes:");
    assert_has(out, "p11_swiglu: no ");
    assert_has(out, "p11_rope: ");
    // the row without a probe: "-" in the probe-FD column, the rest intact
    assert_row(out, "+ RMSNorm", "1,152,176   0.2559         -       1", "same", NULL);
    free(out);

    // without the second seed there is no gap and no verdict, but a table
    snprintf(path, sizeof path, "%s/p11_base_s1", g_dir);
    tmpdir_remove(path);
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
    ck_assert_int_eq(report_write(res, g_dir, err, sizeof err), 0);
    char *md = read_whole_file(path);
    assert_has(md, "| run | params | val MSE | probe-FD | spikes | vs baseline | the tutorial's verdict |");
    assert_has(md, "| + 2D RoPE | 1,150,128 | 0.2289 | 63.9 | 0 | -0.0255 | gain, 7.3 gaps |");
    assert_has(md, "| + QK-norm | 1,152,432 | 0.2499 | 75.0 | 0 | -0.0045 | gain, 1.3 gaps |");
    ck_assert_ptr_null(strstr(md, "ms/step |"));
    ck_assert_ptr_null(strstr(md, "smoke runs"));
    assert_has(md, "**Seed gap**");
    assert_has(md, "(plots/loss.png)");
    ck_assert_ptr_null(strstr(md, "(plots/val_mse.png)"));
    free(md);

    // the TSV that scripts/plots.sh reads: a header and all nine runs
    char *t = printed(results_print_tsv, res);
    int lines = 0;
    for (char *c = t; *c; c++) lines += *c == '\n';
    ck_assert_int_eq(lines, 10);
    assert_has(t, "p11_rope\t+ 2D RoPE\t1\t1150128\t0.228900\t63.900\t246.900\t0\t0.254450\t0.003500\n");
    free(t);
    free(res);
    remove_runs();
}
END_TEST

// ---------------------------------------------------------------------------
// Several seeds per configuration.

// A minimal metrics.json of one seed's run, with its config's seed, and the
static void write_seed_run(const char *dir, const char *name, double val, int seed, const char *preset) {
    char path[512], text[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(text, sizeof text,
             "{\"params\": 1152176, \"it_per_s\": 10.0, \"loss_spikes\": 0, \"raw\": {\"val_mse\": %.4f, "
             "\"uncond\": {\"probe_fd\": 90.0}}, \"config\": {\"dim\": \"128\", \"seed\": \"%d\"}, %s"
             "\"preset\": \"%s\"}\n", val, seed, g_probe, preset);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    write_text(path, text);
}

// Made-up quick-preset runs: the baseline and three upgrades with 3 seeds
// (one clear gain, one clear loss, one inside the noise), QK-norm with one
// seed, "all four" not run, the lr 2e-3 pair with 2 and 1 seeds.
static void make_seed_runs(const char *dir) {
    static const struct { const char *config; double val[3]; int n; } SEEDS[] = {
        { "p11_base",         { 0.2809, 0.2821, 0.2790 }, 3 },
        { "p11_rmsnorm",      { 0.2845, 0.2790, 0.2800 }, 3 },
        { "p11_swiglu",       { 0.2916, 0.2872, 0.2900 }, 3 },
        { "p11_rope",         { 0.2606, 0.2500, 0.2550 }, 3 },
        { "p11_qknorm",       { 0.2795 }, 1 },
        { "p11_base_lr2e3",   { 0.2500, 0.2510 }, 2 },
        { "p11_qknorm_lr2e3", { 0.2490 }, 1 },
    };
    for (size_t i = 0; i < sizeof SEEDS / sizeof SEEDS[0]; i++)
        for (int k = 0; k < SEEDS[i].n; k++) {
            char name[64];
            bool base = strcmp(SEEDS[i].config, "p11_base") == 0;
            if (base || k > 0) snprintf(name, sizeof name, "%s_s%d", SEEDS[i].config, k);
            else snprintf(name, sizeof name, "%s", SEEDS[i].config);
            write_seed_run(dir, name, SEEDS[i].val[k], k, "quick");
        }
}

START_TEST(test_seed_spread_and_compare) {
    double base[3] = { 0.2809, 0.2821, 0.2790 }, rope[3] = { 0.2606, 0.2500, 0.2550 }, one[1] = { 0.2795 };
    SeedSpread b = seed_spread(base, 3), r = seed_spread(rope, 3), q = seed_spread(one, 1), none = seed_spread(NULL, 0);
    ck_assert_int_eq(b.n, 3);
    ck_assert_double_eq_tol(b.mean, 0.2806666667, 1e-9);
    ck_assert_double_eq_tol(b.sd, 0.0015631165, 1e-9);          // sample std, n - 1
    ck_assert_double_eq_tol(b.se, 0.0015631165 / sqrt(3.0), 1e-9);
    ck_assert(q.n == 1 && q.mean == 0.2795 && isnan(q.sd) && isnan(q.se));
    ck_assert(none.n == 0 && isnan(none.mean));

    // a gain far outside the noise: se = sqrt(sd_a^2/n_a + sd_b^2/n_b)
    Comparison c;
    compare_means(r, b, &c);
    ck_assert_double_eq_tol(c.diff, -0.0254666667, 1e-9);
    ck_assert_double_eq_tol(c.se, sqrt(0.0053028294 * 0.0053028294 / 3 + 0.0015631165 * 0.0015631165 / 3), 1e-9);
    ck_assert(c.resolved && !c.assumed);
    ck_assert_str_eq(c.verdict, "gain (8.0 se)");
    // one seed: the baseline's spread is assumed, and the verdict says so
    compare_means(q, b, &c);
    ck_assert(c.assumed && !c.resolved);
    ck_assert_double_eq_tol(c.se, 0.0015631165 * sqrt(1.0 + 1.0 / 3), 1e-9);
    ck_assert_str_eq(c.verdict, "not resolved (0.6 se)*");
    // no spread anywhere: no verdict
    SeedSpread b1 = seed_spread(base, 1);
    compare_means(q, b1, &c);
    ck_assert(isnan(c.se) && !c.resolved);
    ck_assert_str_eq(c.verdict, "? no spread measured");
    // the rule's edge: exactly 2 se is not resolved, a hair more is
    SeedSpread x = { 2, 0.0, 0.01, 0.01 / sqrt(2.0) }, y = { 2, 0.02, 0.01, 0.01 / sqrt(2.0) };
    compare_means(y, x, &c);                                    // diff 0.02, se 0.01
    ck_assert(!c.resolved);
    y.mean = 0.0201;
    compare_means(y, x, &c);
    ck_assert(c.resolved);
    ck_assert_str_eq(c.verdict, "loss (2.0 se)");
}
END_TEST

// Two runs are two draws of the noise when their seed differs, or only the
// seed of their data order (data_seed); not when both draw the same, and
// not when anything else of the config differs.
START_TEST(test_what_a_seed_pair_is) {
    RunMetrics a = { .has_config = true }, b;
    a.cfg = config_default();
    b = a;
    ck_assert(!metrics_is_seed_pair(&a, &b));             // one run twice
    b.cfg.run.seed = 1;
    ck_assert(metrics_is_seed_pair(&a, &b));
    b.cfg.run.seed = 0;
    b.cfg.run.data_seed = 1;                               // weights and noise of seed 0, seed 1's data order
    ck_assert(metrics_is_seed_pair(&a, &b));
    b.cfg.run.data_seed = 0;                               // seed 0's own order, spelt out
    ck_assert(!metrics_is_seed_pair(&a, &b));
    b.cfg.run.seed = 2;
    b.cfg.model.dim = 64;                                  // another model
    ck_assert(!metrics_is_seed_pair(&a, &b));
}
END_TEST

START_TEST(test_seeds_table) {
    tmpdir_make(g_dir, sizeof g_dir, "seeds");
    make_seed_runs(g_dir);
    AblationResults *res = load();
    ck_assert_int_eq(res->n_present, 3 + 3 + 3 + 3 + 1 + 2 + 1);
    ck_assert_int_eq(res->nine_present, 8);                     // all four is missing
    ck_assert_int_eq(res->cfg[CFG_BASE].n, 3);
    ck_assert_int_eq(res->cfg[CFG_ALL].n, 0);
    ck_assert(res->have_gap);
    ck_assert_double_eq_tol(res->gap, 0.0012, 1e-9);
    ck_assert_double_eq_tol(res->cfg[CFG_ROPE].val.sd, 0.0053028294, 1e-9);

    char *out = capture_stdout(print_results, res);
    assert_has(out, "8 of 9 have a metrics.json, and 8 more seeds");
    // the tutorial's method, kept: RMSNorm's seed 0 is "loss, 2.5 gaps" ...
    assert_has(out, "the tutorial's method");
    assert_row(out, "+ RMSNorm", "0.2845", "+0.0030", "loss, 2.5 gaps", NULL);
    // ... and over three seeds it is not resolved
    assert_has(out, "over seeds");
    assert_row(out, "baseline ", "3 (0,1,2)", "0.2807", "0.0016", "reference", NULL);
    const char *rows_over_seeds = strstr(out, "over seeds");
    assert_row(rows_over_seeds, "+ RMSNorm", "3 (0,1,2)", "0.2812", "0.0029", "+0.0005", "0.0019",
               "not resolved (0.3 se)", NULL);
    assert_row(rows_over_seeds, "+ SwiGLU", "0.2896", "+0.0089", "0.0016", "loss (5.7 se)", NULL);
    assert_row(rows_over_seeds, "+ 2D RoPE", "0.2552", "0.0053", "-0.0255", "0.0032", "gain (8.0 se)", NULL);
    // one seed: its difference, no error bar, no verdict of its own
    assert_row(rows_over_seeds, "+ QK-norm", "1 (0)", "0.2795", "-0.0012", "one seed: none", NULL);
    assert_row(rows_over_seeds, "all four", "missing", NULL);
    // the footnotes say how the error bar is computed and what * means
    assert_has(out, "standard error of this\ndifference of two means, sqrt(sd_a^2/n_a + sd_b^2/n_b)");
    assert_has(out, "more than 2 standard errors");
    assert_has(out, "one seed: a configuration trained once has no spread of its own, so it gets no verdict");
    assert_has(out, "SEEDS=3");
    // the one pair against the spread
    assert_has(out, "the pair's gap 0.0012, the spread 0.0016");
    // the lr pair over its seeds: one side has one seed, so no verdict over seeds
    ck_assert_ptr_null(strstr(out, "over seeds (1 and 2)"));
    free(out);

    // the report holds the same tables
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/report.md", g_dir);
    ck_assert_int_eq(report_write(res, g_dir, err, sizeof err), 0);
    char *md = read_whole_file(path);
    assert_has(md, "| configuration | seeds | val MSE | spread | probe-FD | vs baseline | +- se | verdict |");
    assert_has(md, "| + 2D RoPE | 3 (0,1,2) | 0.2552 | 0.0053 | 90.0 | -0.0255 | 0.0032 | gain (8.0 se) |");
    assert_has(md, "| + RMSNorm | 3 (0,1,2) | 0.2812 | 0.0029 | 90.0 | +0.0005 | 0.0019 | not resolved (0.3 se) |");
    assert_has(md, "| + QK-norm | 1 (0) | 0.2795 | - | 90.0 | -0.0012 | - | one seed: none");
    assert_has(md, "sqrt(sd_a^2/n_a + sd_b^2/n_b)");
    free(md);

    // the seeds TSV for the plot: one line per run, one per configuration
    char *t = printed(results_print_seeds_tsv, res);
    assert_has(t, "run\t4\t+ 2D RoPE\t1\t0.250000\t");
    assert_has(t, "\tp11_rope_s1\n");
    assert_has(t, "mean\t4\t+ 2D RoPE\t3\t0.255200\t0.005303\t0.003062\n");
    free(t);
    free(res);
    remove_runs();
}
END_TEST


// Probe-FDs of two probes are never shown side by side: the folder's probe
// is the shipped one (PROBE_B: its key and test accuracy, no weights
// recorded, as the older runs have it); a run that another probe scored shows
// "other probe", a configuration of both "mixed probes", and the note under
// the tutorial's table names both probes and the runs of the other. The
// TSV leaves their probe-FD out.
START_TEST(test_other_probe_refused) {
    tmpdir_make(g_dir, sizeof g_dir, "probes");
    g_probe = PROBE_B;
    make_seed_runs(g_dir);
    g_probe = PROBE_A;
    write_seed_run(g_dir, "p11_base_s2", 0.2790, 2, "quick");
    write_seed_run(g_dir, "p11_qknorm", 0.2795, 0, "quick");
    write_seed_run(g_dir, "p11_rope_s1", 0.2500, 1, "quick");
    g_probe = PROBE_B;
    AblationResults *res = load();
    ck_assert(res->has_probe);
    ck_assert_int_eq(res->other_probe_runs, 3);
    ck_assert(isnan(res->cfg[CFG_BASE].probe_fd) && isnan(res->cfg[CFG_ROPE].probe_fd));
    ck_assert_double_eq(res->cfg[CFG_RMSNORM].probe_fd, 90.0);
    char *out = capture_stdout(print_results, res);
    assert_row(out, "+ QK-norm", "0.2795", "other probe", NULL);
    assert_row(out, "+ RMSNorm", "0.2845", "90.0", NULL);
    const char *over_seeds = strstr(out, "over seeds");
    assert_row(over_seeds, "baseline ", "3 (0,1,2)", "mixed probes", NULL);
    assert_row(over_seeds, "+ 2D RoPE", "3 (0,1,2)", "mixed probes", NULL);
    assert_row(over_seeds, "+ QK-norm", "1 (0)", "other probe", NULL);
    assert_row(over_seeds, "+ SwiGLU", "3 (0,1,2)", "90.0", NULL);
    assert_has(out, "probe-FD: by the shipped probe (weights f2043fe15e1cb445, test accuracy 61.47%).\n"
                    "Two probes' FDs do not compare: the 3 runs by another show \"other probe\" (both: "
                    "\"mixed probes\"):\n");
    assert_has(out, "  probe 2c20f3f74af509e0 (test accuracy 61.29%, weights not recorded): p11_base_s2 p11_qknorm\n"
                    "    p11_rope_s1\n");
    free(out);
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/report.md", g_dir);
    ck_assert_int_eq(report_write(res, g_dir, err, sizeof err), 0);
    char *md = read_whole_file(path);
    assert_has(md, "| + QK-norm | 1 (0) | 0.2795 | - | other probe |");
    assert_has(md, "| baseline | 3 (0,1,2) | 0.2807 | 0.0016 | mixed probes |");
    assert_has(md, "- probe 2c20f3f74af509e0 (test accuracy 61.29%, weights not recorded): `p11_base_s2` "
                   "`p11_qknorm` `p11_rope_s1`\n");
    free(md);
    char *t = printed(results_print_tsv, res);
    assert_has(t, "p11_qknorm\t+ QK-norm\t1\t1152176\t0.279500\tnan\t");
    assert_has(t, "p11_rmsnorm\t+ RMSNorm\t1\t1152176\t0.284500\t90.000\t");
    free(t);
    // one probe for all: no refusal, no list
    g_probe = PROBE_B;
    make_seed_runs(g_dir);
    g_probe = PROBE_B;
    results_load(g_dir, res);
    ck_assert_int_eq(res->other_probe_runs, 0);
    out = capture_stdout(print_results, res);
    assert_has(out, "probe-FD: by the shipped probe (weights f2043fe15e1cb445, test accuracy 61.47%).\n");
    ck_assert_ptr_null(strstr(out, "other probe"));
    ck_assert_ptr_null(strstr(out, "mixed probes"));
    free(out);
    free(res);
    remove_runs();
}
END_TEST

// A configuration of one seed gets no verdict of its own; the committed
// verdict of a folder with several seeds stands beside it, named. Smoke runs
// say at the top that they test the machinery. The report links every plot
// there is, val_curve.png too.
START_TEST(test_one_seed_and_smoke) {
    char ours[256], yours[300], v[128];
    tmpdir_make(ours, sizeof ours, "committed");
    make_seed_runs(ours);                                       // RMSNorm, SwiGLU, RoPE: 3 seeds
    snprintf(yours, sizeof yours, "%s/yours", ours);
    mkdir(yours, 0755);
    write_seed_run(yours, "p11_base_s0", 0.2815, 0, "quick");
    write_seed_run(yours, "p11_base_s1", 0.2800, 1, "quick");
    write_seed_run(yours, "p11_swiglu", 0.2950, 0, "quick");   // far above the baseline, one seed
    write_seed_run(yours, "p11_qknorm", 0.2700, 0, "quick");
    AblationResults *res = malloc(sizeof *res), *ref = malloc(sizeof *ref);
    results_load(yours, res);
    results_load(ours, ref);
    ck_assert(any_one_seed(res));
    seeds_verdict(res, NULL, CFG_SWIGLU, v, sizeof v);
    ck_assert_str_eq(v, "one seed: none");
    seeds_verdict(res, ref, CFG_SWIGLU, v, sizeof v);
    char want[512];
    snprintf(want, sizeof want, "one seed: none (%s, 3 seeds: loss (5.7 se))", ours);
    ck_assert_str_eq(v, want);
    seeds_verdict(res, ref, CFG_QKNORM, v, sizeof v);          // the committed folder has one seed of it too
    ck_assert_str_eq(v, "one seed: none");
    seeds_verdict(res, ref, CFG_BASE, v, sizeof v);
    ck_assert_str_eq(v, "reference");
    Table t;
    fill_seeds_table(res, ref, &t);
    for (int r = 1; r <= t.nrows; r++) {                        // no row of one seed judges itself
        const char *verdict_cell = t.cell[r][t.ncols - 1];
        if (strncmp(verdict_cell, "one seed", 8) == 0) {
            const char *own_end = strchr(verdict_cell, '(');
            ck_assert(!own_end || strstr(verdict_cell, "3 seeds: "));   // only the committed folder's verdict
            ck_assert_str_eq(t.cell[r][t.ncols - 2], "-");       // and shows no error bar
        }
    }
    // the baseline with one seed: nothing has a verdict
    write_seed_run(ours, "p11_base_s1", 0.2800, 1, "quick");
    char path[512];
    snprintf(path, sizeof path, "%s/p11_base_s1", yours);
    tmpdir_remove(path);
    results_load(yours, res);
    seeds_verdict(res, NULL, CFG_SWIGLU, v, sizeof v);
    ck_assert_str_eq(v, "one seed: none");
    ck_assert_ptr_null(strstr(v, "loss"));

    // smoke: the warning first, in the text and at the top of the report
    write_seed_run(yours, "p11_base_s0", 1.15, 0, "smoke");
    write_seed_run(yours, "p11_base_s1", 1.16, 1, "smoke");
    write_seed_run(yours, "p11_swiglu", 1.10, 0, "smoke");
    write_seed_run(yours, "p11_qknorm", 1.12, 0, "smoke");
    results_load(yours, res);
    ck_assert(is_smoke(res));
    char *out = capture_stdout(print_results, res);
    ck_assert_msg(strncmp(out, "These are smoke runs", 20) == 0, "%.200s", out);
    assert_has(out, "they test the machinery, not the model");
    free(out);
    snprintf(path, sizeof path, "%s/plots", yours);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/plots/val_curve.png", yours);
    write_text(path, "png");
    char err[256];
    snprintf(path, sizeof path, "%s/report.md", yours);
    ck_assert_int_eq(report_write(res, yours, err, sizeof err), 0);
    char *md = read_whole_file(path);
    const char *title_end = strstr(md, "\n\n");
    ck_assert_ptr_nonnull(title_end);
    ck_assert_msg(strncmp(title_end + 2, "**These are smoke runs", 22) == 0, "%.300s", md);
    assert_has(md, "(plots/val_curve.png)");
    free(md);
    free(res);
    free(ref);
    snprintf(g_dir, sizeof g_dir, "%s", ours);
    remove_runs();
}
END_TEST

static const AblationResults *g_ref;
static void print_with_ref(void *res) { results_print(res, g_ref); }

START_TEST(test_compare_with_committed) {
    // ours: the made-up three-seed runs; yours: one seed of a few rows
    char ours[256], yours[300];
    tmpdir_make(ours, sizeof ours, "ours");
    make_seed_runs(ours);
    snprintf(yours, sizeof yours, "%s/yours", ours);
    mkdir(yours, 0755);
    write_seed_run(yours, "p11_base_s0", 0.2815, 0, "quick");
    write_seed_run(yours, "p11_rope", 0.2580, 0, "quick");     // 0.5 se from ours: inside
    write_seed_run(yours, "p11_swiglu", 0.2700, 0, "quick");   // far below ours: outside
    write_seed_run(yours, "p11_all", 0.2400, 0, "quick");      // we have no such run
    AblationResults *res = malloc(sizeof *res), *ref = malloc(sizeof *ref);
    results_load(yours, res);
    results_load(ours, ref);
    g_ref = ref;
    char *out = capture_stdout(print_with_ref, res);
    assert_has(out, "your runs against ours in");
    const char *cmp = strstr(out, "your runs against ours");
    assert_row(cmp, "+ 2D RoPE", "0.2580 (n=1)", "0.2552 (n=3)", "0.0053", "+0.0028 +- 0.0061*",
               "inside the noise (0.5 se)", NULL);
    assert_row(cmp, "+ SwiGLU", "0.2700 (n=1)", "0.2896 (n=3)", "outside: lower", NULL);
    assert_row(cmp, "all four", "0.2400 (n=1)", "not in ours", NULL);
    assert_row(cmp, "+ RMSNorm", "-", "0.2812 (n=3)", "not in yours", NULL);
    ck_assert_ptr_null(strstr(out, "different presets are not comparable"));
    free(out);

    // another preset: said so
    write_seed_run(yours, "p11_rope", 0.2580, 0, "smoke");
    write_seed_run(yours, "p11_base_s0", 0.2580, 0, "smoke");
    write_seed_run(yours, "p11_swiglu", 0.2580, 0, "smoke");
    write_seed_run(yours, "p11_all", 0.2580, 0, "smoke");
    results_load(yours, res);
    out = capture_stdout(print_with_ref, res);
    assert_has(out, "your runs are smoke, ours quick");
    free(out);
    free(res);
    free(ref);
    snprintf(g_dir, sizeof g_dir, "%s", ours);
    remove_runs();
}
END_TEST

// ---------------------------------------------------------------------------
// table --curves: the loss window by window against the baseline's.

// A run with a loss curve of four 250-step windows: base[w] + shift[w] + noise.
static void write_curve_run(const char *dir, int config, int seed, const double *shift, double noise, int window) {
    static const double base[4] = { 0.49, 0.32, 0.30, 0.29 };
    char name[64], path[512], text[2048], curve[512] = "";
    ablation_run_name(config, seed, name, sizeof name);
    size_t len = 0;
    for (int w = 0; w < 4; w++)
        len += snprintf(curve + len, sizeof curve - len, "%s[%d, %.6f]", w ? ", " : "", window * (w + 1),
                        base[w] + shift[w] + noise);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(text, sizeof text,
             "{\"params\": 1152176, \"it_per_s\": 10.0, \"loss_spikes\": 0, \"raw\": {\"val_mse\": 0.28, "
             "\"uncond\": {\"probe_fd\": 90.0}}, \"curve\": [%s], \"preset\": \"quick\"}\n", curve);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    write_text(path, text);
}

static void print_curves(void *res) { results_print_curves(res); }

// table --curves of the runs in g_dir prints the text what.
static void assert_curves_say(const char *what) {
    AblationResults *res = load();
    char *out = capture_stdout(print_curves, res);
    assert_has(out, what);
    free(out);
    free(res);
}

START_TEST(test_curves_window_by_window) {
    // seeds 0, 1, 2 one thousandth apart: a spread of 0.001, so the standard
    // error of a difference of two 3-seed means is 0.001 * sqrt(2/3) = 0.00082
    const double noise[3] = { -0.001, 0.0, 0.001 };
    const double none[4] = { 0, 0, 0, 0 };
    const double rope[4] = { 0, -0.001, -0.010, -0.020 };      // 0, 1.2, 12.2, 24.5 se: ahead from 501-750
    const double swiglu[4] = { 0.010, -0.0005, 0, 0.005 };     // behind, even, even, behind: from 751-1000
    const double rmsnorm[4] = { 0, 0, 0, 0.001 };              // 1.2 se at the end: not resolved
    const double qknorm[4] = { 0, 0, 0, -0.010 };              // one seed, the baseline's spread assumed: 8.7 se
    tmpdir_make(g_dir, sizeof g_dir, "curves");
    for (int k = 0; k < 3; k++) {
        write_curve_run(g_dir, CFG_BASE, k, none, noise[k], 250);
        write_curve_run(g_dir, CFG_ROPE, k, rope, noise[k], 250);
        write_curve_run(g_dir, CFG_SWIGLU, k, swiglu, noise[k], 250);
        write_curve_run(g_dir, CFG_RMSNORM, k, rmsnorm, noise[k], 250);
    }
    write_curve_run(g_dir, CFG_QKNORM, 0, qknorm, 0.0, 250);
    AblationResults *res = load();
    char *out = capture_stdout(print_curves, res);
    assert_has(out, "seeds: baseline 3, + RMSNorm 3, + QK-norm 1, + SwiGLU 3, + 2D RoPE 3, all four 0");
    assert_row(out, "501-750", "0.3000", "0.0010", "+0.0000 (0.0)", "+0.0000 (0.0)*", "+0.0000 (0.0)",
               "-0.0100 (12.2)", "-", NULL);
    assert_row(out, "751-1000", "0.2900", "0.0010", "+0.0010 (1.2)", "-0.0100 (8.7)*", "+0.0050 (6.1)",
               "-0.0200 (24.5)", "-", NULL);
    assert_has(out, "+ 2D RoPE  ahead (lower loss) from steps 501-750 to the end\n");
    assert_has(out, "+ SwiGLU   behind (higher loss) from steps 751-1000 to the end\n");
    assert_has(out, "+ RMSNorm  not resolved in the last window\n");
    assert_has(out, "+ QK-norm  no verdict: 1 seed, the baseline 3\n");
    assert_has(out, "all four   not run yet\n");
    free(out);
    free(res);

    // a run whose windows end elsewhere (another preset): said, not compared
    write_curve_run(g_dir, CFG_ALL, 0, none, 0.0, 15);
    assert_curves_say("no loss curves to compare: the runs' loss windows end at different steps (250 and 15)");
    remove_runs();

    // no baseline: nothing to set the others against
    tmpdir_make(g_dir, sizeof g_dir, "curves");
    write_curve_run(g_dir, CFG_ROPE, 0, rope, 0.0, 250);
    assert_curves_say("no loss curves to compare: no baseline run with a loss curve yet");
    remove_runs();
}
END_TEST

int main(void) {
    return run_tests("step6_table", "table", 0, TESTS(test_verdict_rule, test_tutorial_numbers, test_what_a_seed_pair_is,
                                                      test_missing_and_broken_runs, test_mixed_presets_are_flagged,
                                                      test_report_and_tsv, test_seed_spread_and_compare,
                                                      test_seeds_table, test_other_probe_refused, test_one_seed_and_smoke,
                                                      test_compare_with_committed, test_curves_window_by_window));
}
