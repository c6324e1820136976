// test_parity.c: our layers against PyTorch's, from the reference files in
// tests/golden/layers (tools/tinydit_ref.py layers): every layer steps 2 to
// 5 teach, forward and backward, within PARITY_TOLERANCE; and what a step
// prints when a file is missing.
#include "testutil.h"
#include "eval/parity.h"
#include "io/paths.h"

// The reference file of a step, read; fails the test when it is missing.
static void read_named_file(const char *name, SafeTensors *st) {
    char rel[128], path[1024], err[512];
    snprintf(rel, sizeof rel, "tests/golden/layers/%s.safetensors", name);
    ck_assert_int_eq(project_path(path, sizeof path, rel), 0);
    ck_assert_msg(st_read(path, st, err, sizeof err) == 0, "%s (make layer-files writes it)", err);
}

static void read_layer_file(int step, SafeTensors *st) { read_named_file(parity_file(step), st); }

static void assert_close(int rc, const Parity *p, const char *err, const char *what) {
    ck_assert_msg(rc == 0, "%s: %s", what, err);
    double worst = fmax(p->forward, p->backward);
    printf("%-10s ours vs %s: forward %.1e, backward %.1e, tolerance %.0e: margin %.0f\n", what, p->against,
           p->forward, p->backward, PARITY_TOLERANCE, worst > 0 ? PARITY_TOLERANCE / worst : INFINITY);
    fflush(stdout);   // before an assertion can end the test
    ck_assert_msg(p->forward < PARITY_TOLERANCE, "%s forward against PyTorch: %s; max |ours - torch| is %.3g "
                  "of max |torch| (tolerance %.0e)", what, p->forward_worst, p->forward, PARITY_TOLERANCE);
    ck_assert_msg(p->backward < PARITY_TOLERANCE, "%s backward against PyTorch: %s; max |ours - torch| is %.3g "
                  "of max |torch| (tolerance %.0e)", what, p->backward_worst, p->backward, PARITY_TOLERANCE);
}

START_TEST(test_norms_match_torch) {
    SafeTensors st;
    Parity p;
    char err[512] = "";
    read_layer_file(2, &st);
    assert_close(parity_norm(&st, NORM_LAYERNORM, &p, err, sizeof err), &p, err, "layernorm");
    ck_assert_str_eq(p.against, "torch.nn.LayerNorm");
    assert_close(parity_norm(&st, NORM_RMSNORM, &p, err, sizeof err), &p, err, "rmsnorm");
    st_free(&st);
}
END_TEST

START_TEST(test_attention_matches_torch) {
    SafeTensors st;
    Parity p;
    char err[512] = "";
    read_layer_file(3, &st);
    assert_close(parity_attention(&st, 0, &p, err, sizeof err), &p, err, "attention");
    assert_close(parity_attention(&st, 1, &p, err, sizeof err), &p, err, "qk-norm");
    st_free(&st);
    // q and k of mean square about 1e-6, as small as eps: QK-norm's eps (its
    // value, and its place inside the square root) matters here
    read_named_file("attention_eps", &st);
    assert_close(parity_attention(&st, 1, &p, err, sizeof err), &p, err, "qk-norm, q and k near eps");
    st_free(&st);
}
END_TEST

START_TEST(test_ffns_match_torch) {
    SafeTensors st;
    Parity p;
    char err[512] = "";
    read_layer_file(4, &st);
    assert_close(parity_ffn(&st, MLP_GELU, &p, err, sizeof err), &p, err, "gelu ffn");
    assert_close(parity_ffn(&st, MLP_SWIGLU, &p, err, sizeof err), &p, err, "swiglu");
    st_free(&st);
}
END_TEST

START_TEST(test_rope_matches_torch) {
    SafeTensors st;
    Parity p;
    char err[512] = "";
    read_layer_file(5, &st);
    assert_close(parity_rope2d(&st, &p, err, sizeof err), &p, err, "rope2d");
    st_free(&st);
}
END_TEST

// What the steps print: one line per layer, all "float32 rounding".
START_TEST(test_step_lines) {
    static const int layers[4] = { 2, 2, 2, 1 };
    for (int step = 2; step <= 5; step++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ck_assert_int_eq(parity_print(f, step, NULL), 0);
        fclose(f);
        int lines = 0;
        for (const char *s = text; (s = strstr(s, "(float32 rounding)")); s++) lines++;
        ck_assert_msg(lines == layers[step - 2], "step %d:\n%s", step, text);
        free(text);
    }
}
END_TEST

// A missing file: a message naming the command that writes it, and -1.
START_TEST(test_missing_file) {
    char dir[256], *text = NULL;
    size_t len = 0;
    tmpdir_make(dir, sizeof dir, "parity");
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(parity_print(f, 3, dir), -1);
    fclose(f);
    ck_assert_msg(strstr(text, "make layer-files") && strstr(text, "attention.safetensors"), "%s", text);
    free(text);
    tmpdir_remove(dir);
}
END_TEST

// One test case per step's file, so that `make grade` (scripts/grade.sh)
// runs one layer's parity by name (CK_RUN_CASE).
static Suite *parity_suite(void) {
    Suite *s = suite_create("parity");
    add_tests(s, "norms", 0, TESTS(test_norms_match_torch));
    add_tests(s, "attention", 0, TESTS(test_attention_matches_torch));
    add_tests(s, "ffns", 0, TESTS(test_ffns_match_torch));
    add_tests(s, "rope", 0, TESTS(test_rope_matches_torch));
    add_tests(s, "parity", 0, TESTS(test_step_lines, test_missing_file));
    return s;
}

int main(void) { return run_suite(parity_suite()); }
