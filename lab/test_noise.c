// test_noise.c: `lab noise` on made-up runs in two temporary folders: the
// same seeds' val MSE here and there (their mean and rms difference, the
// spreads) and the last check's wobble read from val.tsv.
#include "testutil.h"
#include "noise.h"
#include <sys/stat.h>
#include <unistd.h>

static char g_here[256], g_there[256];

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

// A minimal metrics.json of one seed's run; val.tsv too when checks != NULL.
static void write_run(const char *dir, const char *name, double val, const double *checks, int n_checks) {
    char path[512], text[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(text, sizeof text,
             "{\"params\": 1152176, \"it_per_s\": 10.0, \"loss_spikes\": 0, \"raw\": {\"val_mse\": %.4f, "
             "\"uncond\": {\"probe_fd\": 90.0}}, \"config\": {\"dim\": \"128\"}, \"preset\": \"tutorial\"}\n",
             val);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    write_text(path, text);
    if (!checks) return;
    int len = snprintf(text, sizeof text, "step\tval_mse\n");
    for (int i = 0; i < n_checks; i++) len += snprintf(text + len, sizeof text - len, "%d\t%.6f\n", 500 * (i + 1), checks[i]);
    snprintf(path, sizeof path, "%s/%s/val.tsv", dir, name);
    write_text(path, text);
}

static void make_two_dirs(void) {
    strcpy(g_here, "/tmp/test_noise_here_XXXXXX");
    strcpy(g_there, "/tmp/test_noise_there_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_here));
    ck_assert_ptr_nonnull(mkdtemp(g_there));
}

static void remove_two_dirs(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", g_here, g_there);
    ck_assert_int_eq(system(cmd), 0);
}

// The baseline's three seeds here and there: differences +0.0010, -0.0010
// and 0, so the mean difference is 0 and the rms sqrt(2e-6 / 3); the spread
// here is sd(0.2400, 0.2420, 0.2410) = 0.0010. QK-norm has seed 0 only here
// and seeds 0 and 1 there: one pair, a difference of +0.0030.
START_TEST(test_reruns_pair_by_seed) {
    make_two_dirs();
    write_run(g_here, "p11_base_s0", 0.2400, NULL, 0);
    write_run(g_here, "p11_base_s1", 0.2420, NULL, 0);
    write_run(g_here, "p11_base_s2", 0.2410, NULL, 0);
    write_run(g_there, "p11_base_s0", 0.2390, NULL, 0);
    write_run(g_there, "p11_base_s1", 0.2430, NULL, 0);
    write_run(g_there, "p11_base_s2", 0.2410, NULL, 0);
    write_run(g_here, "p11_qknorm", 0.2360, NULL, 0);
    write_run(g_there, "p11_qknorm", 0.2330, NULL, 0);
    write_run(g_there, "p11_qknorm_s1", 0.2350, NULL, 0);
    AblationResults *there = NULL;
    AblationResults *here = results_load_pair(g_here, g_there, &there);
    ck_assert_ptr_nonnull(here);
    NoiseRerun r;
    noise_rerun(here, there, CFG_BASE, &r);
    ck_assert_int_eq(r.n_pairs, 3);
    ck_assert_double_eq_tol(r.mean_diff, 0.0, 1e-9);
    ck_assert_double_eq_tol(r.rms_diff, sqrt(2e-6 / 3), 1e-9);
    ck_assert_double_eq_tol(r.sd_here, 0.0010, 1e-9);
    noise_rerun(here, there, CFG_QKNORM, &r);
    ck_assert_int_eq(r.n_pairs, 1);
    ck_assert_int_eq(r.n_here, 1);
    ck_assert_int_eq(r.n_there, 2);
    ck_assert(isnan(r.sd_here));
    ck_assert_double_eq_tol(r.mean_diff, 0.0030, 1e-9);
    ck_assert_double_eq_tol(r.rms_diff, 0.0030, 1e-9);
    noise_rerun(here, there, CFG_SWIGLU, &r);   // in neither folder
    ck_assert_int_eq(r.n_pairs, 0);
    ck_assert(isnan(r.rms_diff));
    free(here);
    free(there);
    remove_two_dirs();
}
END_TEST

// The last three checks 0.30, 0.25, 0.22: the middle lies 0.25 - 0.26 = -0.01
// off the line through the others; the earlier checks do not count. Two
// checks, or none, give no wobble.
START_TEST(test_last_wobble) {
    make_two_dirs();
    const double four[] = { 0.40, 0.30, 0.25, 0.22 }, two[] = { 0.30, 0.25 };
    write_run(g_here, "p11_base_s0", 0.22, four, 4);
    write_run(g_here, "p11_base_s1", 0.25, two, 2);
    write_run(g_here, "p11_base_s2", 0.25, NULL, 0);
    char dir[512];
    double w = 0;
    snprintf(dir, sizeof dir, "%s/p11_base_s0", g_here);
    ck_assert_int_eq(noise_last_wobble(dir, &w), 0);
    ck_assert_double_eq_tol(w, -0.01, 1e-9);
    snprintf(dir, sizeof dir, "%s/p11_base_s1", g_here);
    ck_assert_int_eq(noise_last_wobble(dir, &w), -1);
    snprintf(dir, sizeof dir, "%s/p11_base_s2", g_here);
    ck_assert_int_eq(noise_last_wobble(dir, &w), -1);
    remove_two_dirs();
}
END_TEST

int main(void) {
    return run_tests("lab_noise", "noise", 0, TESTS(test_reruns_pair_by_seed, test_last_wobble));
}
