// test_rope2d.c: the claims of step 5, each as a test. The tables follow the
// formula of docs/step5_rope2d.md, the score of a rotated q and k depends only
// on their offset, a rotation keeps lengths, prefix tokens are not rotated,
// base 100 lets the slowest pair turn where base 10,000 barely does, and
// rope_backward is the gradient of rope_forward. Values to 1e-5 unless a test
// says otherwise. And the figures: valid PNGs with gnuplot, a clear notice
// without.
#include "testutil.h"
#include "io/config_parse.h"
#include "io/figure.h"
#include "io/paths.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "figures.h"

#define TOL 1e-5

enum { GRID = 8, HD = 32, L = GRID * GRID, Q = HD / 4 };
static const float BASE = 100.0f;

// q·k in double after q is rotated as token iq and k as token ik.
static double score(const float *q, const float *k, const float *cos_t, const float *sin_t, int iq, int ik) {
    float qr[HD], kr[HD];
    rope_forward(qr, q, cos_t + iq * HD, sin_t + iq * HD, 1, 1, HD);
    rope_forward(kr, k, cos_t + ik * HD, sin_t + ik * HD, 1, 1, HD);
    return dot_fd(qr, kr, HD);
}

START_TEST(test_tables_follow_the_formula) {
    // cos/sin of pos · base^(-i/(hd/4)), rows for pairs < hd/4, columns after;
    // both features of a pair carry the same angle.
    float cos_t[L * HD], sin_t[L * HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, 0);
    for (int tok = 0; tok < L; tok++)
        for (int i = 0; i < HD / 2; i++) {
            int row = tok / GRID, col = tok % GRID;
            double speed = pow(BASE, -(double)(i % Q) / Q);
            double ang = (i < Q ? row : col) * speed;
            for (int f = 2 * i; f <= 2 * i + 1; f++) {
                ck_assert_double_eq_tol(cos_t[tok * HD + f], cos(ang), TOL);
                ck_assert_double_eq_tol(sin_t[tok * HD + f], sin(ang), TOL);
            }
        }
}
END_TEST

START_TEST(test_model_uses_the_same_tables) {
    // model_build with pos=rope2d makes (64, 32) tables from the config's base.
    Config c = config_default();
    ck_assert_int_eq(config_set(&c, "pos=rope2d", NULL, 0), 0);
    ck_assert_int_eq(cfg_tokens(&c.model), L);
    ck_assert_int_eq(cfg_head_dim(&c.model), HD);
    Model m;
    char err[256];
    ck_assert_int_eq(model_build(&m, &c.model, err, sizeof err), 0);
    float cos_t[L * HD], sin_t[L * HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, c.model.rope_base, 0);
    for (int j = 0; j < L * HD; j++) {
        ck_assert_float_eq(m.rope_cos[j], cos_t[j]);
        ck_assert_float_eq(m.rope_sin[j], sin_t[j]);
    }
    model_free(&m);
}
END_TEST

START_TEST(test_same_offset_same_score) {
    float cos_t[L * HD], sin_t[L * HD], q[HD], k[HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, 0);
    fill_normal(q, HD, 1.0f, 1);
    fill_normal(k, HD, 1.0f, 2);
    // The step's three pairs, "1 down, 2 right", and one "3 down, 0 right".
    double a = score(q, k, cos_t, sin_t, 0 * GRID + 0, 1 * GRID + 2);
    double b = score(q, k, cos_t, sin_t, 3 * GRID + 4, 4 * GRID + 6);
    double c = score(q, k, cos_t, sin_t, 6 * GRID + 5, 7 * GRID + 7);
    double d = score(q, k, cos_t, sin_t, 0 * GRID + 0, 3 * GRID + 0);
    ck_assert_double_eq_tol(a, b, TOL);
    ck_assert_double_eq_tol(a, c, TOL);
    ck_assert_msg(fabs(a - d) > 1e-2, "another offset should change the score: %g vs %g", a, d);
    // And every pair of tokens on the grid: the score is a function of the
    // offset (dr, dc) alone. first[dr + 7][dc + 7] keeps the first score seen.
    double first[2 * GRID - 1][2 * GRID - 1];
    int seen[2 * GRID - 1][2 * GRID - 1] = {{0}};
    for (int iq = 0; iq < L; iq++)
        for (int ik = 0; ik < L; ik++) {
            int dr = ik / GRID - iq / GRID + GRID - 1, dc = ik % GRID - iq % GRID + GRID - 1;
            double s = score(q, k, cos_t, sin_t, iq, ik);
            if (!seen[dr][dc]) { first[dr][dc] = s; seen[dr][dc] = 1; }
            else ck_assert_double_eq_tol(s, first[dr][dc], TOL);
        }
}
END_TEST

START_TEST(test_rotation_keeps_length) {
    float cos_t[L * HD], sin_t[L * HD], x[L * HD], y[L * HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, 0);
    fill_normal(x, L * HD, 1.0f, 3);
    rope_forward(y, x, cos_t, sin_t, 1, L, HD);
    for (int l = 0; l < L; l++) {
        double nx = sqrt(dot_fd(x + l * HD, x + l * HD, HD)), ny = sqrt(dot_fd(y + l * HD, y + l * HD, HD));
        ck_assert_double_eq_tol(ny / nx, 1.0, TOL);
    }
}
END_TEST

START_TEST(test_in_place_matches) {
    // attention.c rotates q and k in place (out == x).
    float cos_t[L * HD], sin_t[L * HD], x[2 * L * HD], y[2 * L * HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, 0);
    fill_normal(x, 2 * L * HD, 1.0f, 4);
    rope_forward(y, x, cos_t, sin_t, 2, L, HD);
    rope_forward(x, x, cos_t, sin_t, 2, L, HD);
    for (int j = 0; j < 2 * L * HD; j++) ck_assert_float_eq(x[j], y[j]);
}
END_TEST

START_TEST(test_prefix_tokens_are_not_rotated) {
    enum { P = 2, LP = P + L };
    float cos_p[LP * HD], sin_p[LP * HD], cos_t[L * HD], sin_t[L * HD], x[LP * HD], y[LP * HD];
    rope2d_tables(cos_p, sin_p, GRID, HD, BASE, P);
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, 0);
    for (int j = 0; j < P * HD; j++) {           // angle 0 for the prefix rows
        ck_assert_float_eq(cos_p[j], 1.0f);
        ck_assert_float_eq(sin_p[j], 0.0f);
    }
    for (int j = 0; j < L * HD; j++) {           // the grid rows follow, unchanged
        ck_assert_float_eq(cos_p[P * HD + j], cos_t[j]);
        ck_assert_float_eq(sin_p[P * HD + j], sin_t[j]);
    }
    fill_normal(x, LP * HD, 1.0f, 5);
    rope_forward(y, x, cos_p, sin_p, 1, LP, HD);
    for (int j = 0; j < P * HD; j++) ck_assert_double_eq_tol(y[j], x[j], TOL);
}
END_TEST

START_TEST(test_base_100_turns_the_slowest_pair) {
    // The slowest row pair, from row 0 to row 7: 7 · base^(-(Q-1)/Q) radians.
    float cos_t[L * HD], sin_t[L * HD];
    const float bases[2] = { 100.0f, 10000.0f };
    double angle[2];
    for (int b = 0; b < 2; b++) {
        rope2d_tables(cos_t, sin_t, GRID, HD, bases[b], 0);
        int tok = (GRID - 1) * GRID, f = 2 * (Q - 1);
        angle[b] = atan2(sin_t[tok * HD + f], cos_t[tok * HD + f]);
        ck_assert_double_eq_tol(angle[b], (GRID - 1) * pow(bases[b], -(double)(Q - 1) / Q), TOL);
    }
    double deg100 = angle[0] * 180 / M_PI, deg10k = angle[1] * 180 / M_PI;
    ck_assert_msg(deg100 > 5.0 && deg10k < 0.2, "slowest pair: %.3f deg (100), %.3f deg (10,000)", deg100, deg10k);
}
END_TEST

// The gradient check: f(x) = Σ rope(x) · w, so df/dx is rope_backward(w).
typedef struct { float *x, *y, *w, *cos_t, *sin_t; int B, LL; } RopeCtx;

static double rope_f(void *p) {
    RopeCtx *c = p;
    rope_forward(c->y, c->x, c->cos_t, c->sin_t, c->B, c->LL, HD);
    return dot_fd(c->y, c->w, (size_t)c->B * c->LL * HD);
}

START_TEST(test_rope_gradient) {
    enum { B = 3, P = 1, LP = P + L };   // 3 (image, head) slices, a prefix token too
    size_t n = (size_t)B * LP * HD;
    float cos_t[LP * HD], sin_t[LP * HD];
    rope2d_tables(cos_t, sin_t, GRID, HD, BASE, P);
    RopeCtx c = { alloc_floats(n), alloc_floats(n), alloc_floats(n), cos_t, sin_t, B, LP };
    fill_normal(c.x, n, 1.0f, 6);
    fill_normal(c.w, n, 1.0f, 7);
    float *dx = alloc_floats(n);         // zeroed: rope_backward accumulates
    rope_backward(dx, c.w, cos_t, sin_t, B, LP, HD);
    grad_check("rope x", rope_f, &c, c.x, dx, n, 0);
    // A rotation's transpose is its inverse: backward undoes forward.
    float *back = alloc_floats(n);
    rope_forward(c.y, c.x, cos_t, sin_t, B, LP, HD);
    rope_backward(back, c.y, cos_t, sin_t, B, LP, HD);
    for (size_t j = 0; j < n; j++) ck_assert_double_eq_tol(back[j], c.x[j], TOL);
    free(c.x); free(c.y); free(c.w); free(dx); free(back);
}
END_TEST

START_TEST(test_rope2d_drops_the_position_tables) {
    // pos=rope2d removes pos_row and pos_col (8 × 128 each) and adds nothing.
    Config c = config_default();
    size_t learned = model_count_params(&c.model);
    ck_assert_int_eq(config_set(&c, "pos=rope2d", NULL, 0), 0);
    ck_assert_uint_eq(learned, 1152176);
    ck_assert_uint_eq(model_count_params(&c.model), 1150128);
    ck_assert_uint_eq(learned - model_count_params(&c.model), 2 * cfg_grid(&c.model) * c.model.dim);
}
END_TEST

// ---------------------------------------------------------------------------
// The figures, in a fresh folder under /tmp each time.
static const char *const FIGURES[2] = { "step5_scores", "step5_angles" };

START_TEST(test_figures_are_pngs) {
    if (!gnuplot_or_skip("test_figures_are_pngs")) return;
    char dir[256], err[512];
    float q[HD], k[HD];
    fill_normal(q, HD, 1.0f, 1);
    fill_normal(k, HD, 1.0f, 2);
    tmpdir_make(dir, sizeof dir, "rope2d");
    int drawn = -1;
    ck_assert_msg(step5_figures(dir, q, k, 0, &drawn, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(drawn, 2);
    check_figures_drawn(dir, FIGURES, 2);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_figures_notice_without_gnuplot) {
    // The program itself, with gnuplot pointed at a missing file: everything
    // is printed, the data is written, and the last lines say what to install.
    const char *text = check_figures_without_gnuplot("step5_rope2d/step5_rope2d", "", FIGURES, 2);
    ck_assert_ptr_nonnull(strstr(text, "5. In the model"));
}
END_TEST

static Suite *rope2d_suite(void) {
    Suite *s = suite_create("rope2d");
    TCase *tc = tcase_create("rope2d");
    tcase_add_test(tc, test_tables_follow_the_formula);
    tcase_add_test(tc, test_model_uses_the_same_tables);
    tcase_add_test(tc, test_same_offset_same_score);
    tcase_add_test(tc, test_rotation_keeps_length);
    tcase_add_test(tc, test_in_place_matches);
    tcase_add_test(tc, test_prefix_tokens_are_not_rotated);
    tcase_add_test(tc, test_base_100_turns_the_slowest_pair);
    tcase_add_test(tc, test_rope_gradient);
    tcase_add_test(tc, test_rope2d_drops_the_position_tables);
    tcase_add_test(tc, test_figures_are_pngs);
    tcase_add_test(tc, test_figures_notice_without_gnuplot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(rope2d_suite()); }
