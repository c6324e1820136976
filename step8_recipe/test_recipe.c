// test_recipe.c: the claims of step 8, each as a test.
//   - with no arguments: 60.3% of logit-normal times in [0.3, 0.7] against
//     40% of uniform ones; γ of σ_rel 0.10 is 6.9372 and the EMA's width
//     tends to σ_rel of the run; Euler's error halves and Heun's quarters
//     when the evaluations double; figures drawn, or their data without
//     gnuplot;
//   - `table`: raw and EMA over seeds against the first configuration, and
//     a table that would mix probes, or runs without an EMA, refused;
//   - `curves`: the mean, lowest and highest over the nfe tables;
//   - bad input refused with a message and nothing written.
#include "testutil.h"
#include <sys/stat.h>
#include "io/figure.h"
#include "step8.h"

#define PROGRAM "step8_recipe/step8_recipe"
static const char *const FIGURES[] = { "step8_times", "step8_orders" };

// The slope column of section 3 at `nfe` evaluations: Euler's (column 0) or Heun's (1).
static double slope_at(const char *out, int nfe, int which) {
    const char *s = strstr(out, "3. Euler against Heun");
    ck_assert_ptr_nonnull(s);
    char want[32];
    snprintf(want, sizeof want, "\n  %d ", nfe);
    const char *line = strstr(s, want);
    ck_assert_msg(line != NULL, "no row for %d evaluations in:\n%s", nfe, s);
    double e1, s1, e2, s2;
    ck_assert_int_eq(sscanf(line + 1, "%*d %lf %lf %lf %lf", &e1, &s1, &e2, &s2), 4);
    return which ? s2 : s1;
}

START_TEST(test_no_arguments) {
    char dir[256], opts[400];
    tmpdir_make(dir, sizeof dir, "step8");
    snprintf(opts, sizeof opts, "--figures '%s/figures'", dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 0);
    const char *out = read_text_in(dir, "out.txt");
    const char *const want[] = { "the share in [0.3, 0.7]: uniform 0.400, logit-normal 0.60", "(exact 0.603)",
                                 "0.10 -> 6.9372", "try it:" };
    assert_contains_all(out, want, 4);
    // the EMA's relative width after 4,000 steps is sigma_rel
    const char *row = strstr(out, "\n  4000 ");
    ck_assert_ptr_nonnull(row);
    double beta, mean, width, rel;
    ck_assert_int_eq(sscanf(row + 1, "%*d %lf %lf %lf %lf", &beta, &mean, &width, &rel), 4);
    ck_assert_msg(fabs(rel - 0.10) < 0.002, "the EMA's width / k after 4000 steps: %g, not 0.10", rel);
    for (int nfe = 16; nfe <= 64; nfe *= 2) {
        double e = slope_at(out, nfe, 0), h = slope_at(out, nfe, 1);
        ck_assert_msg(e > 0.85 && e < 1.15, "Euler's slope at %d evaluations: %g, not about 1", nfe, e);
        ck_assert_msg(h > 1.8 && h < 2.5, "Heun's slope at %d evaluations: %g, not about 2", nfe, h);
    }
    if (gnuplot_or_skip("test_no_arguments: the figures")) {
        char figures[300];
        snprintf(figures, sizeof figures, "%s/figures", dir);
        check_figures_drawn(figures, FIGURES, 2);
    }
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_figures_without_gnuplot) {
    const char *const want[] = { "1. Logit-normal times", "3. Euler against Heun", NULL };
    check_figures_not_drawn(PROGRAM, "", "step8_recipe", FIGURES, 2, want);
}
END_TEST

// A run folder with the metrics.json fields the table reads.
static void fake_run(const char *dir, const char *name, double raw, double ema, double fd, const char *probe) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"params\": 1000, \"it_per_s\": 5, \"loss_spikes\": 0, \"raw\": {\"val_mse\": %.4f, \"uncond\": "
               "{\"probe_fd\": %.2f}}", raw, fd);
    if (ema > 0) fprintf(f, ", \"ema\": {\"val_mse\": %.4f, \"uncond\": {\"probe_fd\": %.2f}}", ema, fd - 5);
    fprintf(f, ", \"probe\": {\"key\": \"%s\", \"test_acc\": 0.6147, \"weights\": \"f2043fe15e1cb445\"}}\n", probe);
    fclose(f);
}

START_TEST(test_table) {
    char dir[256], opts[1800];
    tmpdir_make(dir, sizeof dir, "step8");
    const double base[3] = { 0.280, 0.282, 0.281 }, ln[3] = { 0.270, 0.271, 0.269 };
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "r8_uniform_s%d", k);
        fake_run(dir, name, base[k], base[k] - 0.004, 70 + k, "2c20f3f74af509e0");
        snprintf(name, sizeof name, "r8_logitnormal_s%d", k);
        fake_run(dir, name, ln[k], ln[k] - 0.001, 60 + k, "2c20f3f74af509e0");
    }
    snprintf(opts, sizeof opts, "table '%s'/r8_uniform_s0 '%s'/r8_uniform_s1 '%s'/r8_uniform_s2 '%s'/r8_logitnormal_s0 "
             "'%s'/r8_logitnormal_s1 '%s'/r8_logitnormal_s2", dir, dir, dir, dir, dir, dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 0);
    const char *out = read_text_in(dir, "out.txt");
    const char *const want[] = { "against r8_uniform's raw weights", "r8_uniform", "r8_logitnormal", "(baseline)",
                                 "0.2810 +- 0.0010", "-0.0040 gain", "-0.0110 gain", "-0.0120 gain" };
    assert_contains_all(out, want, 8);
    // another probe's probe-FD beside these: refused
    fake_run(dir, "other_s0", 0.28, 0.27, 70, "0000000000000000");
    snprintf(opts, sizeof opts, "table '%s'/r8_uniform_s0 '%s'/other_s0", dir, dir);
    ck_assert_int_ne(run_program("", PROGRAM, opts, dir), 0);
    ck_assert(strstr(read_text_in(dir, "err.txt"), "another probe") != NULL);
    // a run without an EMA: refused
    fake_run(dir, "plain_s0", 0.28, 0, 70, "2c20f3f74af509e0");
    snprintf(opts, sizeof opts, "table '%s'/plain_s0", dir);
    ck_assert_int_ne(run_program("", PROGRAM, opts, dir), 0);
    ck_assert(strstr(read_text_in(dir, "err.txt"), "no EMA scores") != NULL);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_curves) {
    char dir[256], opts[1200], path[400];
    tmpdir_make(dir, sizeof dir, "step8");
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/nfe%d.tsv", dir, k);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "# step8_recipe nfe\n# NFE\tEuler probe_fd\tHeun probe_fd\tEuler distance\tHeun distance\n");
        for (int i = 0; i < NFE_COUNT; i++)
            fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%.4f\n", NFE_LIST[i], 100.0 / (i + 1) + k, 90.0 / (i + 1) + 2 * k,
                    0.5 / (i + 1), 0.25 / (i + 1) + 0.1 * k);
        fclose(f);
    }
    snprintf(opts, sizeof opts, "curves '%s/nfe0.tsv' '%s/nfe1.tsv' --figures '%s/figures'", dir, dir, dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 0);
    char figures[300];
    snprintf(figures, sizeof figures, "%s/figures", dir);
    char *tsv = read_text_in(figures, "step8_nfe.tsv");
    ck_assert_msg(strstr(tsv, "\n2\t100.50000\t100.00000\t101.00000\t91.00000\t90.00000\t92.00000\t0.50000\t0.50000"
                              "\t0.50000\t0.30000\t0.25000\t0.35000\n") != NULL, "%s", tsv);
    // a table that is not one: refused, no figure
    snprintf(path, sizeof path, "%s/bad.tsv", dir);
    FILE *f = fopen(path, "w");
    fputs("# nothing\n2\t1\t1\n", f);
    fclose(f);
    snprintf(opts, sizeof opts, "curves '%s/bad.tsv' --figures '%s/figures2'", dir, dir);
    ck_assert_int_ne(run_program("", PROGRAM, opts, dir), 0);
    ck_assert(strstr(read_text_in(dir, "err.txt"), "not a step8_recipe nfe table") != NULL);
    struct stat sb;
    snprintf(path, sizeof path, "%s/figures2", dir);
    ck_assert_msg(stat(path, &sb) != 0, "a refused curves wrote %s", path);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_bad_input) {
    char dir[256];
    tmpdir_make(dir, sizeof dir, "step8");
    ck_assert_int_eq(run_program("", PROGRAM, "rk4", dir), 2);
    ck_assert(strstr(read_text_in(dir, "err.txt"), "unknown argument 'rk4'") != NULL);
    ck_assert_int_eq(run_program("", PROGRAM, "nfe", dir), 2);
    ck_assert(strstr(read_text_in(dir, "err.txt"), "nfe wants --out FILE") != NULL);
    ck_assert_int_eq(run_program("", PROGRAM, "table", dir), 2);
    char opts[600];
    snprintf(opts, sizeof opts, "nfe --model '%s/none.safetensors' --out '%s/out.tsv'", dir, dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 1);
    ck_assert(!file_in(dir, "out.tsv"));
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    return run_tests("recipe", "recipe", 300,
                     TESTS(test_no_arguments, test_figures_without_gnuplot, test_table, test_curves, test_bad_input));
}
