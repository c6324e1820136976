// testutil.h: small helpers shared by the Check test programs.
#pragma once
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "crash.h"
#include "io/figure.h"
#include "io/fileio.h"
#include "io/paths.h"
#include "nn/rng.h"

// The PyTorch reference's golden files: $GOLDEN_DIR if set, else the
// project's tests/golden (made by tools/tinydit_ref.py, committed), wherever
// the test runs from. Writes the folder, or the file inside it, into out;
// returns 1 if it is there, 0 if not.
static inline int golden_path(const char *file, char *out, size_t outlen) {
    const char *env = getenv("GOLDEN_DIR"), *slash = file ? "/" : "";
    if (!file) file = "";
    if (env && *env) {
        snprintf(out, outlen, "%s%s%s", env, slash, file);
    } else {
        char relative[512];
        snprintf(relative, sizeof relative, "tests/golden%s%s", slash, file);
        if (project_path(out, outlen, relative) != 0) return 0;
    }
    return access(out, R_OK) == 0;
}

// Fills x (n) with N(0, std²) numbers from a fixed seed.
static inline void fill_normal(float *x, size_t n, float std, unsigned long long seed) {
    Rng r; rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) x[i] = std * rng_normal(&r);
}

static inline float *alloc_floats(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    ck_assert_ptr_nonnull(p);
    return p;
}

// ---------------------------------------------------------------------------
// Finite-difference gradient check.
//
// The layer under test is wrapped as a scalar function f(ctx) = Σ out · w, with
// fixed random weights w, so the analytic gradient of any input x is what the
// backward pass returns for dout = w. The numerical gradient is the central
// difference (f(x + h) - f(x - h)) / 2h, evaluated in float32 but summed in
// double.
//
// Tolerance: relative to the tensor's own gradient scale, the largest
// |analytic| over the whole tensor (or |numeric| over the probes, if larger):
//     |analytic - numeric| <= GRAD_TOL · scale,   GRAD_TOL = 1e-2 (1%).
// An absolute floor such as max(1, ·) makes the check blind to small
// gradients: most of the probe CNN's gradient entries are below 1e-2, so a
// tensor whose gradient was replaced by zeros could pass. Against its own
// scale, a zeroed, halved, sign-flipped or mis-indexed gradient is off by
// O(1), while float32 central differences with h = 1e-2 carry errors of
// about 1e-4..1e-3 of the scale (rounding ~1e-7·|f|/h, truncation ~h²·f''').
// A tensor whose analytic and numeric gradients are both zero everywhere has
// no scale; that fails too (the check would compare nothing).
#define GRAD_TOL 1e-2
#define GRAD_H 1e-2f

typedef double (*ScalarFn)(void *ctx);

// Checks analytic (n values) against the central difference of f in x (n).
// Returns the worst error relative to the tensor's scale; fails the test
// (ck_assert) if it is above GRAD_TOL. Probes at most max_probe elements
// (spread evenly) to keep big tensors fast.
//
// A network of ReLUs and max-pools is piecewise smooth: where a probe's ±h
// straddles a kink, the central difference is the mean of two different
// slopes and says nothing about the gradient. With skip_kinks, f is also
// evaluated at x itself, and an element whose one-sided slopes differ by
// more than GRAD_TOL of the scale is counted in *kinks and not judged; at
// least half the probes must be judged.
static inline double grad_check_core(const char *what, ScalarFn f, void *ctx, float *x,
                                     const float *analytic, size_t n, size_t max_probe,
                                     float h, int skip_kinks, int *kinks) {
    size_t stride = (max_probe && n > max_probe) ? n / max_probe : 1;
    double scale = 0.0, worst = 0.0;
    for (size_t i = 0; i < n; i++) if (fabs(analytic[i]) > scale) scale = fabs(analytic[i]);
    size_t nprobe = 0;
    double *num = malloc(sizeof(double) * (n / stride + 1));
    double *bend = malloc(sizeof(double) * (n / stride + 1));   // right slope − left slope
    size_t *idx = malloc(sizeof(size_t) * (n / stride + 1));
    double f0 = skip_kinks ? f(ctx) : 0.0;
    for (size_t i = 0; i < n; i += stride) {
        float keep = x[i];
        x[i] = keep + h; double fp = f(ctx);
        x[i] = keep - h; double fm = f(ctx);
        x[i] = keep;
        double d = (fp - fm) / (2.0 * h);
        num[nprobe] = d; bend[nprobe] = ((fp - f0) - (f0 - fm)) / h; idx[nprobe] = i; nprobe++;
        if (fabs(d) > scale) scale = fabs(d);
    }
    int skipped = 0;
    size_t first_bad = nprobe;   // the first probe out of tolerance, for the message
    double bad_analytic = 0.0, bad_numeric = 0.0;
    for (size_t j = 0; j < nprobe && scale > 0.0; j++) {
        if (skip_kinks && fabs(bend[j]) > GRAD_TOL * scale) { skipped++; continue; }
        double err = fabs(analytic[idx[j]] - num[j]) / scale;
        if (err > worst) worst = err;
        if (err > GRAD_TOL && first_bad == nprobe) {
            first_bad = idx[j]; bad_analytic = analytic[idx[j]]; bad_numeric = num[j];
        }
    }
    free(num); free(bend); free(idx);
    if (kinks) *kinks = skipped;
    ck_assert_msg(scale > 0.0, "gradient check of %s: the gradient is zero everywhere", what);
    ck_assert_msg(2 * (size_t)skipped <= nprobe, "gradient check of %s: %d of %zu probes straddle a kink",
                  what, skipped, nprobe);
    printf("grad check %-30s worst error %.2e of scale %.3g, tolerance %.0e: margin %.0f\n",
           what, worst, scale, GRAD_TOL, worst > 0 ? GRAD_TOL / worst : INFINITY);
    fflush(stdout);   // before an assertion can end the test
    ck_assert_msg(worst <= GRAD_TOL, "gradient check of %s failed: first wrong at [%zu], backward %.6g, "
                  "finite differences %.6g (off by %.3g); worst error %.3g of its scale %.3g > %.0e",
                  what, first_bad, bad_analytic, bad_numeric, bad_analytic - bad_numeric, worst, scale,
                  GRAD_TOL);
    return worst;
}

static inline double grad_check(const char *what, ScalarFn f, void *ctx, float *x,
                                const float *analytic, size_t n, size_t max_probe) {
    return grad_check_core(what, f, ctx, x, analytic, n, max_probe, GRAD_H, 0, NULL);
}

static inline double dot_fd(const float *a, const float *b, size_t n) {
    double s = 0; for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i]; return s;
}

// A line appended to $TINYDIT_CHECK_LOG, the file `make check` sums up at
// its end (nothing when the variable is not set: a test run by hand).
// Only the program make check started writes (TINYDIT_CHECK_WHO), not the
// programs a test starts in turn.
static inline void check_log(const char *fmt, ...) {
    const char *path = getenv("TINYDIT_CHECK_LOG"), *who = getenv("TINYDIT_CHECK_WHO");
    if (!who || strcmp(who, program_invocation_short_name) != 0) return;
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

// A check that cannot run here: what it needs ("cifar", "gnuplot", "torch",
// "tmpfs") is missing. whole: the test returns right after (it is counted
// as skipped), else only a part of it is left out. Says SKIPPED and why,
// and `make check` lists it; when TINYDIT_NO_SKIPS is "1" or names what it
// needs (a comma-separated list: CI, which has them), it fails instead.
static inline void test_skip(const char *needs, int whole, const char *what, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *no = getenv("TINYDIT_NO_SKIPS");
    size_t n = strlen(needs);
    for (const char *p = no; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (!strcmp(no, "1") || (!strncmp(p, needs, n) && (p[n] == ',' || !p[n])))
            ck_abort_msg("%s: needs %s, which TINYDIT_NO_SKIPS=%s says is here: %s", what, needs, no, why);
    }
    printf("%s: %sSKIPPED (needs %s): %s\n", what, whole ? "" : "part ", needs, why);
    check_log("skipped %s %s (needs %s): %s\n", whole ? "test" : "part", what, needs, why);
}

// Runs a suite with Check and returns the process exit code; the number of
// tests it ran and failed goes to make check's log. A crash inside the code
// under test is reported as the call it came from (crash.h), before Check
// reports the signal.
static inline int run_suite(Suite *s) {
    crash_report_install();
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
    check_log("ran %d failed %d\n", ran, failed);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// The tests of one case, as a list: TESTS(test_a, test_b) (NULL-ended).
#define TESTS(...) ((const TTest *const[]){ __VA_ARGS__, NULL })

// Adds to s a case named name (the name CK_RUN_CASE picks) holding tests,
// each allowed timeout seconds (0: Check's default). Returns the case, for
// a fixture or a test of another kind.
static inline TCase *add_tests(Suite *s, const char *name, int timeout, const TTest *const *tests) {
    TCase *tc = tcase_create(name);
    if (timeout > 0) tcase_set_timeout(tc, timeout);
    for (; *tests; tests++) tcase_add_test(tc, *tests);
    suite_add_tcase(s, tc);
    return tc;
}

// A program whose tests are one case: runs them and returns the exit code.
static inline int run_tests(const char *suite, const char *name, int timeout, const TTest *const *tests) {
    Suite *s = suite_create(suite);
    add_tests(s, name, timeout, tests);
    return run_suite(s);
}

// ---------------------------------------------------------------------------
// Temporary folders, one helper for every test that writes files.
// tmpdir_make creates a fresh empty folder $TMPDIR/tinydit_<tag>_XXXXXX
// (TMPDIR defaults to /tmp), writes its path into buf (n bytes) and returns
// buf; the test fails if it cannot. tmpdir_remove deletes such a folder and
// everything under it (without following symbolic links); it refuses any
// path that tmpdir_make could not have made.
#include <ftw.h>

static inline char *tmpdir_make(char *buf, size_t n, const char *tag) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    int len = snprintf(buf, n, "%s/tinydit_%s_XXXXXX", base, tag);
    ck_assert_msg(len > 0 && (size_t)len < n, "temp folder name too long for its buffer");
    ck_assert_msg(mkdtemp(buf) != NULL, "cannot create a temp folder %s", buf);
    return buf;
}

static inline int tmpdir_remove_one(const char *path, const struct stat *st, int type, struct FTW *f) {
    (void)st; (void)type; (void)f;
    return remove(path);
}

static inline void tmpdir_remove(const char *path) {
    ck_assert_msg(path && strstr(path, "/tinydit_") != NULL,
                  "tmpdir_remove: %s is not a folder from tmpdir_make", path ? path : "(null)");
    ck_assert_msg(nftw(path, tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0,
                  "cannot remove the temp folder %s", path);
}

// ---------------------------------------------------------------------------
// Files in a test's folder, and the project's programs run from a test.

// True when dir/name exists.
static inline int file_in(const char *dir, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

// True when dir/name is a PNG file (figure_png_valid).
static inline int png_in(const char *dir, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return figure_png_valid(path);
}

// The text of dir/name (its first 64 KiB), in a buffer that the next call
// reuses; the test fails if the file cannot be read.
static inline char *read_text_in(const char *dir, const char *name) {
    static char text[1 << 16];
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

// The whole of the file at path, allocated (free it); the test fails if it
// cannot be read.
static inline char *read_whole_file(const char *path) {
    char err[4400];
    size_t len;
    char *text = read_file_all(path, &len, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    return text;
}

// Every one of the n strings want[] is somewhere in text, or the test fails
// showing the first one missing and the whole text.
static inline void assert_contains_all(const char *text, const char *const want[], size_t n) {
    for (size_t k = 0; k < n; k++) ck_assert_msg(strstr(text, want[k]), "no \"%s\" in:\n%s", want[k], text);
}

// Runs one of the project's programs, named from the project root (e.g.
// "step2_rmsnorm/step2_rmsnorm"), with options, after the environment
// prefix env ("" for none, or e.g. "TINYDIT_GNUPLOT=/nonexistent/gnuplot").
// Its standard output goes to dir/out.txt and its standard error to
// dir/err.txt. Returns its exit status, or -1 if it did not exit normally.
static inline int run_program(const char *env, const char *program, const char *options, const char *dir) {
    char cmd[8192];
    int len = snprintf(cmd, sizeof cmd, "%s '%s/%s' %s >'%s/out.txt' 2>'%s/err.txt'",
                       env, project_root(), program, options, dir, dir);
    ck_assert_msg(len > 0 && (size_t)len < sizeof cmd, "run_program: the command is too long");
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// ---------------------------------------------------------------------------
// The checks every step's figures share. names are the figures' NAMEs
// (e.g. "step2_norm_times"), n of them.

// True when gnuplot runs; otherwise that test is skipped (test_skip).
static inline int gnuplot_or_skip(const char *test) {
    if (figure_gnuplot_available()) return 1;
    test_skip("gnuplot", 1, test, "%s is not installed (make deps)", figure_gnuplot_command());
    return 0;
}

// dir holds NAME.tsv, NAME.gp and a valid NAME.png of each figure.
static inline void check_figures_drawn(const char *dir, const char *const names[], int n) {
    static const char *const kinds[3] = { "tsv", "gp", "png" };
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            char file[300];
            snprintf(file, sizeof file, "%s.%s", names[i], kinds[k]);
            ck_assert_msg(file_in(dir, file), "no %s in %s", file, dir);
            if (k == 2) ck_assert_msg(png_in(dir, file), "%s/%s is not a PNG", dir, file);
        }
}

// Runs program (named from the project root) with options and --figures,
// gnuplot pointed at a missing program, in a temp folder of its own. It must
// exit 0, end by saying gnuplot was not found and how to install it, and
// write each figure's NAME.tsv but no NAME.png. Returns its standard output
// (in read_text_in's buffer) for the step's own checks.
static inline const char *check_figures_without_gnuplot(const char *program, const char *options,
                                                        const char *const names[], int n) {
    char dir[256], all[4600], figures[300];
    tmpdir_make(dir, sizeof dir, "figures");
    snprintf(figures, sizeof figures, "%s/figures", dir);
    int len = snprintf(all, sizeof all, "%s --figures '%s'", options, figures);
    ck_assert_msg(len > 0 && (size_t)len < sizeof all, "the options are too long");
    int st = run_program("TINYDIT_GNUPLOT=/nonexistent/gnuplot", program, all, dir);
    ck_assert_msg(st == 0, "%s %s: exit %d\n%s", program, all, st, read_text_in(dir, "err.txt"));
    for (int i = 0; i < n; i++) {
        char file[300];
        snprintf(file, sizeof file, "%s.tsv", names[i]);
        ck_assert_msg(file_in(figures, file), "no %s in %s", file, figures);
        snprintf(file, sizeof file, "%s.png", names[i]);
        ck_assert_msg(!file_in(figures, file), "%s drawn without gnuplot", file);
    }
    const char *out = read_text_in(dir, "out.txt");
    ck_assert_msg(strstr(out, "figures: /nonexistent/gnuplot was not found") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "Install gnuplot") != NULL, "%s", out);
    tmpdir_remove(dir);
    return out;
}

// Runs program with options in a temp folder of its own. A figures folder
// that cannot be made: a message on stderr starting with "who: " and a
// non-zero exit; and --no-figures adds no "figures:" line.
static inline void check_figures_bad_folder(const char *program, const char *options, const char *who) {
    char dir[256], all[4600], prefix[200];
    tmpdir_make(dir, sizeof dir, "figures");
    snprintf(all, sizeof all, "%s --figures /dev/null/figures", options);
    ck_assert_int_ne(run_program("", program, all, dir), 0);
    snprintf(prefix, sizeof prefix, "%s: ", who);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), prefix) != NULL, "no '%s' in its error", prefix);
    snprintf(all, sizeof all, "%s --no-figures", options);
    ck_assert_int_eq(run_program("", program, all, dir), 0);
    ck_assert(strstr(read_text_in(dir, "out.txt"), "figures:") == NULL);
    tmpdir_remove(dir);
}

// The figures of program (options) when they cannot be drawn: without
// gnuplot it prints all it prints, each of the NULL-ended want among it,
// writes the data, draws nothing and says how to get the pictures
// (check_figures_without_gnuplot); and, when who is not NULL, a figures
// folder that cannot be made is an error that starts "who: "
// (check_figures_bad_folder).
static inline void check_figures_not_drawn(const char *program, const char *options, const char *who,
                                           const char *const names[], int n, const char *const want[]) {
    const char *out = check_figures_without_gnuplot(program, options, names, n);
    for (; *want; want++) ck_assert_msg(strstr(out, *want), "no \"%s\" in:\n%s", *want, out);
    if (who) check_figures_bad_folder(program, options, who);
}
