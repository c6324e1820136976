// test_cifar.c: the CIFAR-10 loader (cifar.h) and the training order
// (dataloader.h).
//
// The loader is tested on small batch files made here, in a fresh temporary
// directory: good ones (every byte checked), and each way a file can be bad.
// The real data is checked too when it is there (CIFAR_DIR, or the project's
// data/ from `make data`); without it that test is skipped (test_skip):
//     CIFAR_DIR=/path/to/cifar-10-batches-bin build/tests/test_cifar
#include "testutil.h"
#include "io/cifar.h"
#include "train/dataloader.h"
#include <sys/stat.h>
#include <unistd.h>

// ---------------------------------------------------------------------------
// Fixture: a temporary directory, emptied and removed after each test.

static char tmpdir[256];

static void make_tmpdir(void) { tmpdir_make(tmpdir, sizeof tmpdir, "cifar"); }
static void remove_tmpdir(void) { tmpdir_remove(tmpdir); }

static void path_in_tmp(char *out, size_t outlen, const char *name) {
    snprintf(out, outlen, "%s/%s", tmpdir, name);
}

// The byte pattern of generated files. Label (r + salt) % 10; pixel j of
// record r is (31r + 7j + salt) mod 256, which takes all 256 values within
// every record (7 is odd), so the float conversion is checked for every byte.
static uint8_t gen_label(int r, int salt) { return (uint8_t)((r + salt) % 10); }
static uint8_t gen_pixel(int r, int j, int salt) { return (uint8_t)((31 * r + 7 * j + salt) & 255); }

static uint8_t *gen_batch(int records, int salt) {
    uint8_t *buf = malloc((size_t)records * CIFAR_RECORD_BYTES);
    ck_assert_ptr_nonnull(buf);
    for (int r = 0; r < records; r++) {
        uint8_t *rec = buf + (size_t)r * CIFAR_RECORD_BYTES;
        rec[0] = gen_label(r, salt);
        for (int j = 0; j < CIFAR_PIXELS; j++) rec[1 + j] = gen_pixel(r, j, salt);
    }
    return buf;
}

static void write_bytes(const char *name, const uint8_t *buf, size_t len) {
    char p[512];
    path_in_tmp(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
}

// A good file of `records` records, cut or padded to len bytes (len 0: whole).
static void write_batch(const char *name, int records, int salt, size_t len) {
    size_t full = (size_t)records * CIFAR_RECORD_BYTES;
    uint8_t *buf = gen_batch(records, salt);
    if (len > full) {
        buf = realloc(buf, len);
        memset(buf + full, 0, len - full);
    }
    write_bytes(name, buf, len ? len : full);
    free(buf);
}

// Asserts that a load failed, left the set empty, and said something useful.
static void expect_failure(int rc, const CifarSet *s, const char *err, const char *want1,
                           const char *want2) {
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(s->n, 0);
    ck_assert_ptr_null(s->pixels);
    ck_assert_ptr_null(s->labels);
    ck_assert_msg(strstr(err, want1), "message \"%s\" should contain \"%s\"", err, want1);
    if (want2) ck_assert_msg(strstr(err, want2), "message \"%s\" should contain \"%s\"", err, want2);
}

// Loading the files names[0..n) of 3 records each from dir must fail as
// expect_failure says. Returns the message, for more checks (a buffer the
// next call reuses).
static const char *expect_load_failure(const char *dir, const char **names, int n, const char *want1,
                                       const char *want2) {
    static char err[CIFAR_ERRLEN];
    CifarSet s;
    err[0] = 0;
    expect_failure(cifar_load_files(dir, names, n, 3, &s, err, sizeof err), &s, err, want1, want2);
    return err;
}

// ---------------------------------------------------------------------------
// Good files: every label and byte comes back; floats are exactly p/127.5-1.

START_TEST(test_load_small_files) {
    write_batch("a.bin", 3, 0, 0);
    write_batch("b.bin", 3, 5, 0);
    const char *names[] = { "a.bin", "b.bin" };
    CifarSet s;
    char err[CIFAR_ERRLEN] = "";
    ck_assert_msg(cifar_load_files(tmpdir, names, 2, 3, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.n, 6);
    float *x = alloc_floats((size_t)s.n * CIFAR_PIXELS);
    cifar_range_to_float(&s, 0, s.n, x);
    for (int i = 0; i < s.n; i++) {
        int salt = i < 3 ? 0 : 5, r = i % 3;
        ck_assert_uint_eq(s.labels[i], gen_label(r, salt));
        for (int j = 0; j < CIFAR_PIXELS; j++) {
            uint8_t p = gen_pixel(r, j, salt);
            ck_assert_uint_eq(s.pixels[(size_t)i * CIFAR_PIXELS + j], p);
            float got = x[(size_t)i * CIFAR_PIXELS + j];
            // Bit-exact against the float32 formula, and within rounding of
            // the exact value.
            ck_assert_float_eq(got, (float)p / 127.5f - 1.0f);
            ck_assert_double_eq_tol(got, p / 127.5 - 1.0, 1e-7);
        }
    }
    // The ends of the range are exact.
    uint8_t ends[CIFAR_PIXELS];
    memset(ends, 0, sizeof ends);
    ends[1] = 255;
    cifar_image_to_float(ends, 0, x);
    ck_assert_float_eq(x[0], -1.0f);
    ck_assert_float_eq(x[1], 1.0f);
    free(x);
    cifar_free(&s);
    ck_assert_int_eq(s.n, 0);
}
END_TEST

// cifar_gather picks images by index and mirrors the ones asked for.
START_TEST(test_gather_and_flip) {
    write_batch("a.bin", 4, 2, 0);
    const char *names[] = { "a.bin" };
    CifarSet s;
    char err[CIFAR_ERRLEN] = "";
    ck_assert_msg(cifar_load_files(tmpdir, names, 1, 4, &s, err, sizeof err) == 0, "%s", err);
    int idx[3] = { 3, 0, 3 };
    uint8_t flip[3] = { 0, 1, 1 };
    float *x = alloc_floats(3 * CIFAR_PIXELS);
    cifar_gather(&s, idx, flip, 3, x);
    for (int b = 0; b < 3; b++)
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < 32; y++)
                for (int xx = 0; xx < 32; xx++) {
                    int src = flip[b] ? 31 - xx : xx;
                    uint8_t p = gen_pixel(idx[b], (c * 32 + y) * 32 + src, 2);
                    ck_assert_float_eq(x[(size_t)b * CIFAR_PIXELS + (c * 32 + y) * 32 + xx],
                                       (float)p / 127.5f - 1.0f);
                }
    free(x);
    cifar_free(&s);
}
END_TEST

// ---------------------------------------------------------------------------
// Bad files: -1, an empty set, and a message naming the file.

START_TEST(test_wrong_length) {
    write_batch("long.bin", 3, 0, 3 * CIFAR_RECORD_BYTES + 1);
    const char *names[] = { "long.bin" };
    expect_load_failure(tmpdir, names, 1, "long.bin", "9220 bytes, expected 9219");
}
END_TEST

START_TEST(test_truncated_file) {
    write_batch("a.bin", 3, 0, 0);
    write_batch("short.bin", 3, 0, 2 * CIFAR_RECORD_BYTES + 100);
    const char *names[] = { "a.bin", "short.bin" };
    expect_load_failure(tmpdir, names, 2, "short.bin", "6246 bytes, expected 9219");
}
END_TEST

START_TEST(test_bad_label) {
    uint8_t *buf = gen_batch(3, 0);
    buf[2 * CIFAR_RECORD_BYTES] = 10;   // record 2's label byte
    write_bytes("label10.bin", buf, 3 * CIFAR_RECORD_BYTES);
    free(buf);
    const char *names[] = { "label10.bin" };
    expect_load_failure(tmpdir, names, 1, "label10.bin", "record 2 has label 10");
}
END_TEST

START_TEST(test_missing_file) {
    write_batch("a.bin", 3, 0, 0);
    const char *names[] = { "a.bin", "missing.bin" };
    ck_assert_ptr_nonnull(strstr(expect_load_failure(tmpdir, names, 2, "missing.bin", "make data"), "CIFAR_DIR"));
}
END_TEST

START_TEST(test_missing_directory) {
    char dir[512];
    path_in_tmp(dir, sizeof dir, "no-such-dir");
    const char *names[] = { "a.bin" };
    ck_assert_ptr_nonnull(strstr(expect_load_failure(dir, names, 1, "no-such-dir", "make data"), "CIFAR_DIR="));
    // The real loaders say the same.
    CifarSet s;
    char err[CIFAR_ERRLEN] = "";
    expect_failure(cifar_load_train(dir, &s, err, sizeof err), &s, err, "no-such-dir", "CIFAR_DIR");
}
END_TEST

START_TEST(test_file_is_directory) {
    char p[512];
    path_in_tmp(p, sizeof p, "dir.bin");
    ck_assert_int_eq(mkdir(p, 0700), 0);
    const char *names[] = { "dir.bin" };
    expect_load_failure(tmpdir, names, 1, "dir.bin", "is a directory");
}
END_TEST

// The real loader insists on 10,000 records: a small test_batch.bin fails.
START_TEST(test_real_loader_insists_on_10000) {
    write_batch("test_batch.bin", 3, 0, 0);
    CifarSet s;
    char err[CIFAR_ERRLEN] = "";
    int rc = cifar_load_test(tmpdir, &s, err, sizeof err);
    expect_failure(rc, &s, err, "test_batch.bin", "expected 30730000");
}
END_TEST

// CIFAR_RECORDS=n (the tests' small synthetic sets) makes the real loaders
// expect n records per file, still exactly; anything but a whole number from
// 1 to 10,000 is an error that names it.
START_TEST(test_cifar_records_for_small_sets) {
    const char *was = getenv("CIFAR_RECORDS");   // put back: with CK_FORK=no tests share a process
    char *saved = was ? strdup(was) : NULL;
    write_batch("test_batch.bin", 3, 0, 0);
    CifarSet s;
    char err[CIFAR_ERRLEN] = "";
    setenv("CIFAR_RECORDS", "3", 1);
    ck_assert_msg(cifar_load_test(tmpdir, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.n, 3);
    ck_assert_uint_eq(s.labels[2], gen_label(2, 0));
    cifar_free(&s);
    setenv("CIFAR_RECORDS", "4", 1);
    expect_failure(cifar_load_test(tmpdir, &s, err, sizeof err), &s, err, "test_batch.bin", "expected 12292");
    setenv("CIFAR_RECORDS", "3x", 1);
    expect_failure(cifar_load_train(tmpdir, &s, err, sizeof err), &s, err, "CIFAR_RECORDS=3x", "1 to 10000");
    setenv("CIFAR_RECORDS", "10001", 1);
    expect_failure(cifar_load_test(tmpdir, &s, err, sizeof err), &s, err, "CIFAR_RECORDS=10001", NULL);
    if (saved) setenv("CIFAR_RECORDS", saved, 1);
    else unsetenv("CIFAR_RECORDS");
    free(saved);
}
END_TEST

// A NULL or small error buffer is fine: the message is cut, nothing overflows.
START_TEST(test_small_error_buffer) {
    const char *names[] = { "missing.bin" };
    CifarSet s;
    char err[16];
    memset(err, 'x', sizeof err);
    ck_assert_int_eq(cifar_load_files(tmpdir, names, 1, 3, &s, err, sizeof err), -1);
    ck_assert_uint_eq(strlen(err), sizeof err - 1);
    ck_assert_int_eq(cifar_load_files(tmpdir, names, 1, 3, &s, NULL, 0), -1);
}
END_TEST

// cifar_parse_batch on memory: the fuzz target's entry point.
START_TEST(test_parse_batch_memory) {
    uint8_t *buf = gen_batch(2, 1);
    uint8_t pixels[2 * CIFAR_PIXELS], labels[2];
    char err[CIFAR_ERRLEN] = "";
    ck_assert_int_eq(cifar_parse_batch(buf, 2 * CIFAR_RECORD_BYTES, 2, "mem", pixels, labels,
                                       err, sizeof err), 0);
    ck_assert_uint_eq(labels[1], gen_label(1, 1));
    ck_assert_int_eq(memcmp(pixels + CIFAR_PIXELS, buf + CIFAR_RECORD_BYTES + 1, CIFAR_PIXELS), 0);
    // Every length but the right one fails, the empty buffer and NULL too.
    size_t bad_lens[] = { 0, 1, CIFAR_RECORD_BYTES, 2 * CIFAR_RECORD_BYTES - 1 };
    for (size_t k = 0; k < sizeof bad_lens / sizeof bad_lens[0]; k++) {
        err[0] = 0;
        ck_assert_int_eq(cifar_parse_batch(buf, bad_lens[k], 2, "mem", pixels, labels,
                                           err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "mem"));
    }
    ck_assert_int_eq(cifar_parse_batch(NULL, 0, 2, "mem", pixels, labels, err, sizeof err), -1);
    ck_assert_int_eq(cifar_parse_batch(buf, 0, 0, "mem", pixels, labels, err, sizeof err), -1);
    // A bad label leaves the output untouched.
    buf[CIFAR_RECORD_BYTES] = 255;
    memset(labels, 7, sizeof labels);
    ck_assert_int_eq(cifar_parse_batch(buf, 2 * CIFAR_RECORD_BYTES, 2, "mem", pixels, labels,
                                       err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "label 255"));
    ck_assert_uint_eq(labels[0], 7);
    free(buf);
}
END_TEST

START_TEST(test_cifar_dir_env) {
    // Put CIFAR_DIR back afterwards: with CK_FORK=no the tests share one process.
    const char *was = getenv("CIFAR_DIR");
    char *saved = was ? strdup(was) : NULL;
    setenv("CIFAR_DIR", "/some/where/else", 1);
    ck_assert_str_eq(cifar_dir(), "/some/where/else");
    unsetenv("CIFAR_DIR");
    const char *d = cifar_dir();
    const char *tail = "data/cifar-10-batches-bin";
    ck_assert_uint_ge(strlen(d), strlen(tail));
    ck_assert_str_eq(d + strlen(d) - strlen(tail), tail);
    if (saved) setenv("CIFAR_DIR", saved, 1);
    free(saved);
}
END_TEST

// ---------------------------------------------------------------------------
// The real data, if it is there.

static int real_data_available(void) {
    char p[4096];
    snprintf(p, sizeof p, "%s/test_batch.bin", cifar_dir());
    if (getenv("CIFAR_RECORDS") || access(p, R_OK) != 0) {
        test_skip("cifar", 1, "test_real_data", "no CIFAR-10 at %s (make data, or set CIFAR_DIR)", cifar_dir());
        return 0;
    }
    return 1;
}

static void check_first_labels_and_counts(const CifarSet *s, int n, const uint8_t *first10) {
    ck_assert_int_eq(s->n, n);
    for (int i = 0; i < 10; i++) ck_assert_uint_eq(s->labels[i], first10[i]);
    int count[CIFAR_NUM_CLASSES] = { 0 };
    for (int i = 0; i < s->n; i++) count[s->labels[i]]++;
    for (int c = 0; c < CIFAR_NUM_CLASSES; c++) ck_assert_int_eq(count[c], n / 10);
}

START_TEST(test_real_data) {
    if (!real_data_available()) return;
    char err[CIFAR_ERRLEN] = "";
    CifarSet test, train;
    ck_assert_msg(cifar_load_test(NULL, &test, err, sizeof err) == 0, "%s", err);
    const uint8_t test_first[10] = { 3, 8, 8, 0, 6, 6, 1, 6, 3, 1 };
    check_first_labels_and_counts(&test, 10000, test_first);

    // The first image against the file's own bytes.
    char p[4096];
    snprintf(p, sizeof p, "%s/test_batch.bin", cifar_dir());
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t rec[CIFAR_RECORD_BYTES];
    ck_assert_uint_eq(fread(rec, 1, sizeof rec, f), sizeof rec);
    fclose(f);
    float *x = alloc_floats(CIFAR_PIXELS);
    cifar_range_to_float(&test, 0, 1, x);
    for (int j = 0; j < CIFAR_PIXELS; j++) ck_assert_float_eq(x[j], (float)rec[1 + j] / 127.5f - 1.0f);
    free(x);
    cifar_free(&test);

    ck_assert_msg(cifar_load_train(NULL, &train, err, sizeof err) == 0, "%s", err);
    const uint8_t train_first[10] = { 6, 9, 9, 4, 1, 1, 2, 7, 8, 3 };
    check_first_labels_and_counts(&train, 50000, train_first);
    cifar_free(&train);
}
END_TEST

// ---------------------------------------------------------------------------
// The training order, on a made-up set of n images (no files needed).

static CifarSet fake_set(int n) {
    CifarSet s = { n, malloc((size_t)n * CIFAR_PIXELS), malloc((size_t)n) };
    ck_assert_ptr_nonnull(s.pixels);
    ck_assert_ptr_nonnull(s.labels);
    for (int i = 0; i < n; i++) {
        s.labels[i] = gen_label(i, 0);
        for (int j = 0; j < CIFAR_PIXELS; j++) s.pixels[(size_t)i * CIFAR_PIXELS + j] = gen_pixel(i, j, 3);
    }
    return s;
}

// Draws `batches` batches of B and records everything they hold.
typedef struct { float *x; int *idx; uint8_t *flip; int total; } Drawn;

static Drawn draw(DataLoader *dl, int batches, int B) {
    Drawn d;
    d.total = batches * B;
    d.x = alloc_floats((size_t)d.total * CIFAR_PIXELS);
    d.idx = malloc(sizeof(int) * (size_t)d.total);
    d.flip = malloc((size_t)d.total);
    for (int k = 0; k < batches; k++)
        dataloader_next(dl, B, d.x + (size_t)k * B * CIFAR_PIXELS, NULL, d.idx + k * B, d.flip + k * B);
    return d;
}

static void drawn_free(Drawn *d) { free(d->x); free(d->idx); free(d->flip); }

static int drawn_equal(const Drawn *a, const Drawn *b) {
    return a->total == b->total &&
           !memcmp(a->idx, b->idx, sizeof(int) * (size_t)a->total) &&
           !memcmp(a->flip, b->flip, (size_t)a->total) &&
           !memcmp(a->x, b->x, sizeof(float) * (size_t)a->total * CIFAR_PIXELS);
}

START_TEST(test_loader_same_seed_same_batches) {
    CifarSet s = fake_set(300);
    DataLoader a, b, c;
    char err[256];
    ck_assert_int_eq(dataloader_init(&a, &s, 42, true, 0, err, sizeof err), 0);
    ck_assert_int_eq(dataloader_init(&b, &s, 42, true, 0, err, sizeof err), 0);
    ck_assert_int_eq(dataloader_init(&c, &s, 43, true, 0, err, sizeof err), 0);
    Drawn da = draw(&a, 12, 64), db = draw(&b, 12, 64), dc = draw(&c, 12, 64);
    ck_assert(drawn_equal(&da, &db));
    ck_assert(!drawn_equal(&da, &dc));
    drawn_free(&da); drawn_free(&db); drawn_free(&dc);
    dataloader_free(&a); dataloader_free(&b); dataloader_free(&c);
    cifar_free(&s);
}
END_TEST

// Every epoch hands out every image exactly once, in a new order; batches
// straddle epoch boundaries (300 is not a multiple of 64).
START_TEST(test_loader_epochs_are_permutations) {
    const int n = 300, B = 64, epochs = 5;
    CifarSet s = fake_set(n);
    DataLoader dl;
    char err[256];
    ck_assert_int_eq(dataloader_init(&dl, &s, 1, false, 0, err, sizeof err), 0);
    int batches = (epochs * n + B - 1) / B;   // 24 batches = 1,536 images
    Drawn d = draw(&dl, batches, B);
    ck_assert_int_eq(dl.epoch, epochs);       // into epoch 5 by 36 images
    ck_assert_int_eq(dl.pos, batches * B - epochs * n);
    for (int e = 0; e < epochs; e++) {
        int *seen = calloc((size_t)n, sizeof(int));
        for (int k = 0; k < n; k++) {
            int i = d.idx[e * n + k];
            ck_assert_int_ge(i, 0);
            ck_assert_int_lt(i, n);
            seen[i]++;
        }
        for (int i = 0; i < n; i++) ck_assert_msg(seen[i] == 1, "epoch %d: image %d seen %d times", e, i, seen[i]);
        free(seen);
        if (e > 0) ck_assert(memcmp(d.idx + e * n, d.idx + (e - 1) * n, sizeof(int) * n) != 0);
    }
    // Shuffled, not the identity.
    int in_place = 0;
    for (int k = 0; k < n; k++) in_place += d.idx[k] == k;
    ck_assert_int_lt(in_place, 20);
    // flip=false: nothing mirrored, and x is exactly the images in that order.
    float *want = alloc_floats((size_t)d.total * CIFAR_PIXELS);
    cifar_gather(&s, d.idx, NULL, d.total, want);
    ck_assert_int_eq(memcmp(want, d.x, sizeof(float) * (size_t)d.total * CIFAR_PIXELS), 0);
    for (int k = 0; k < d.total; k++) ck_assert_uint_eq(d.flip[k], 0);
    free(want);
    drawn_free(&d);
    dataloader_free(&dl);
    cifar_free(&s);
}
END_TEST

// ---------------------------------------------------------------------------
// The order as a shuffle: each epoch must be a uniformly random permutation,
// which "every image once per epoch" alone does not say (a Sattolo cycle,
// every permutation one single cycle, passes it). Two statistics over many
// epochs of a set of n = 6 images, each judged by its chi-square p-value:
//   positions  how often image e lands at position k (36 counts). One draw's
//              permutation matrix P has Σ(P_ek − 1/n)² = n − 1 spread evenly
//              over the (n−1)² directions the row and column sums leave free,
//              so (n−1)/n · Σ(O − E)²/E is chi-square with (n−1)² = 25 df.
//   cycles     the number of cycles of each epoch's permutation, against the
//              law of a random permutation of 6: P(k cycles) = c(6, k)/6!
//              with c the unsigned Stirling numbers 120, 274, 225, 85, 15, 1;
//              5 df.
// A fixed seed makes the test deterministic; the threshold p < 1e-9 is one a
// correct Fisher-Yates crosses once in a billion seeds, and any fixed bias
// at all crosses it with enough epochs: a Sattolo cycle gives p = 0 on both.

// P(X >= x) for X ~ chi-square with df degrees of freedom: the regularised
// upper incomplete gamma Q(df/2, x/2), by its series below a + 1 and its
// continued fraction (modified Lentz) above.
static double chi2_sf(double x, int df) {
    double a = 0.5 * df, z = 0.5 * x;
    if (z <= 0) return 1.0;
    double front = exp(a * log(z) - z - lgamma(a));
    if (z < a + 1) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 1000 && fabs(term) > 1e-17 * sum; n++) sum += term *= z / (a + n);
        return 1.0 - front * sum;
    }
    double b = z + 1 - a, c = 1e300, d = 1 / b, h = d;
    for (int i = 1; i < 1000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b; if (fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c; if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-15) break;
    }
    return front * h;
}

START_TEST(test_chi2_sf_known_values) {
    // exact for 2 df: exp(-x/2); for 1 df: erfc(sqrt(x/2))
    for (double x = 0.5; x < 80; x *= 1.7) {
        ck_assert_double_eq_tol(chi2_sf(x, 2) / exp(-x / 2), 1.0, 1e-10);
        ck_assert_double_eq_tol(chi2_sf(x, 1) / erfc(sqrt(x / 2)), 1.0, 1e-8);
    }
    ck_assert_double_eq_tol(chi2_sf(37.6525, 25), 0.05, 1e-5);   // tables: 95th percentile of 25 df
    ck_assert_double_eq_tol(chi2_sf(11.0705, 5), 0.05, 1e-5);
}
END_TEST

START_TEST(test_loader_order_is_a_uniform_shuffle) {
    enum { N = 6, EPOCHS = 30000 };
    static const double stirling[N + 1] = { 0, 120, 274, 225, 85, 15, 1 };   // c(6, k), sum 720
    CifarSet s = fake_set(N);
    DataLoader dl;
    char err[256];
    ck_assert_int_eq(dataloader_init(&dl, &s, 2024, false, 0, err, sizeof err), 0);
    double at[N][N] = { { 0 } }, cycles[N + 1] = { 0 };
    float *x = alloc_floats((size_t)N * CIFAR_PIXELS);
    int perm[N];
    for (int e = 0; e < EPOCHS; e++) {
        dataloader_next(&dl, N, x, NULL, perm, NULL);   // one whole epoch
        int seen[N] = { 0 }, k = 0;
        for (int p = 0; p < N; p++) at[perm[p]][p]++;
        for (int start = 0; start < N; start++) {
            if (seen[start]) continue;
            k++;
            for (int i = start; !seen[i]; i = perm[i]) seen[i] = 1;
        }
        cycles[k]++;
    }
    double x2 = 0, expect = (double)EPOCHS / N;
    for (int i = 0; i < N; i++)
        for (int p = 0; p < N; p++) x2 += (at[i][p] - expect) * (at[i][p] - expect) / expect;
    double p_positions = chi2_sf(x2 * (N - 1) / N, (N - 1) * (N - 1));
    double c2 = 0;
    for (int k = 1; k <= N; k++) {
        double want = EPOCHS * stirling[k] / 720.0;
        c2 += (cycles[k] - want) * (cycles[k] - want) / want;
    }
    double p_cycles = chi2_sf(c2, N - 1);
    printf("%d epochs of 6 images: positions chi2 %.1f (25 df, p = %.3g); cycle counts 1..6: %.0f %.0f %.0f %.0f "
           "%.0f %.0f, chi2 %.1f (5 df, p = %.3g)\n", EPOCHS, x2 * (N - 1) / N, p_positions, cycles[1], cycles[2],
           cycles[3], cycles[4], cycles[5], cycles[6], c2, p_cycles);
    ck_assert_msg(p_positions > 1e-9, "images are not equally likely at every position (p = %.3g)", p_positions);
    ck_assert_msg(p_cycles > 1e-9, "the cycle counts are not those of random permutations (p = %.3g)", p_cycles);
    free(x);
    dataloader_free(&dl);
    cifar_free(&s);
}
END_TEST

// flip=true mirrors about half of the images, and exactly those.
START_TEST(test_loader_flips_half) {
    const int n = 1000, B = 250, batches = 40;   // 10,000 coins
    CifarSet s = fake_set(n);
    DataLoader dl;
    char err[256];
    ck_assert_int_eq(dataloader_init(&dl, &s, 5, true, 0, err, sizeof err), 0);
    Drawn d = draw(&dl, batches, B);
    int flips = 0;
    for (int k = 0; k < d.total; k++) flips += d.flip[k];
    // Binomial(10000, 1/2): mean 5000, sd 50; 6 sd either side.
    ck_assert_msg(flips > 4700 && flips < 5300, "%d flips of %d", flips, d.total);
    float *want = alloc_floats((size_t)d.total * CIFAR_PIXELS);
    cifar_gather(&s, d.idx, d.flip, d.total, want);
    ck_assert_int_eq(memcmp(want, d.x, sizeof(float) * (size_t)d.total * CIFAR_PIXELS), 0);
    free(want);
    drawn_free(&d);
    dataloader_free(&dl);
    cifar_free(&s);
}
END_TEST

// Save the state, keep going; a fresh loader restored from the state (even
// one made with another seed) gives the very same batches.
static void check_resume(int n, int B, int before, int after) {
    CifarSet s = fake_set(n);
    DataLoader a, b, c;
    char err[256];
    ck_assert_int_eq(dataloader_init(&a, &s, 7, true, 0, err, sizeof err), 0);
    Drawn skip = draw(&a, before, B);
    DataLoaderState st = dataloader_get_state(&a);
    Drawn want = draw(&a, after, B);

    ck_assert_int_eq(dataloader_init(&b, &s, 999, true, 0, err, sizeof err), 0);
    ck_assert_msg(dataloader_set_state(&b, &st, err, sizeof err) == 0, "%s", err);
    Drawn got = draw(&b, after, B);
    ck_assert(drawn_equal(&want, &got));

    // The same through the text form a checkpoint stores.
    char text[DATALOADER_STATE_TEXT_LEN];
    ck_assert_int_eq(dataloader_state_format(&st, text, sizeof text), 0);
    DataLoaderState back;
    ck_assert_msg(dataloader_state_parse(text, &back, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataloader_init(&c, &s, 0, true, 0, err, sizeof err), 0);
    ck_assert_int_eq(dataloader_set_state(&c, &back, err, sizeof err), 0);
    Drawn got2 = draw(&c, after, B);
    ck_assert(drawn_equal(&want, &got2));

    drawn_free(&skip); drawn_free(&want); drawn_free(&got); drawn_free(&got2);
    dataloader_free(&a); dataloader_free(&b); dataloader_free(&c);
    cifar_free(&s);
}

START_TEST(test_loader_resume) {
    check_resume(300, 64, 5, 12);   // saved in the middle of epoch 1
    check_resume(300, 100, 3, 5);   // saved exactly at the end of epoch 0 (pos == n)
    check_resume(300, 64, 0, 6);    // saved before anything was drawn
}
END_TEST

START_TEST(test_loader_state_text) {
    DataLoaderState st = { 18446744073709551615ULL, 12, 299, 0x9E3779B97F4A7C15ULL, 1, -0.3f };
    char text[DATALOADER_STATE_TEXT_LEN], err[256];
    ck_assert_int_eq(dataloader_state_format(&st, text, sizeof text), 0);
    DataLoaderState back;
    ck_assert_msg(dataloader_state_parse(text, &back, err, sizeof err) == 0, "%s", err);
    ck_assert(back.seed == st.seed && back.rng_state == st.rng_state);
    ck_assert_int_eq(back.epoch, 12);
    ck_assert_int_eq(back.pos, 299);
    ck_assert_int_eq(back.rng_has_spare, 1);
    ck_assert_int_eq(memcmp(&back.rng_spare, &st.rng_spare, sizeof(float)), 0);
    // Too small a buffer, and text that is not a state.
    ck_assert_int_eq(dataloader_state_format(&st, text, 20), -1);
    ck_assert_int_eq(dataloader_state_parse("seed=1 epoch=2", &back, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot parse"));
    char trailing[DATALOADER_STATE_TEXT_LEN + 4];
    dataloader_state_format(&st, trailing, sizeof trailing);
    strcat(trailing, " x");
    ck_assert_int_eq(dataloader_state_parse(trailing, &back, err, sizeof err), -1);
}
END_TEST

START_TEST(test_loader_bad_state_and_set) {
    CifarSet s = fake_set(10);
    DataLoader dl;
    char err[256];
    ck_assert_int_eq(dataloader_init(&dl, &s, 0, true, 0, err, sizeof err), 0);
    DataLoaderState st = dataloader_get_state(&dl);
    st.pos = 11;   // past the end of a 10-image set
    ck_assert_int_eq(dataloader_set_state(&dl, &st, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "10 images"));
    st.pos = 0; st.epoch = -1;
    ck_assert_int_eq(dataloader_set_state(&dl, &st, err, sizeof err), -1);
    dataloader_free(&dl);
    CifarSet empty = { 0, NULL, NULL };
    ck_assert_int_eq(dataloader_init(&dl, &empty, 0, true, 0, err, sizeof err), -1);
    cifar_free(&s);
}
END_TEST

// A class-conditional loader hands each image's label with its pixels: the
// label of the image it picked (its index), and the same batches as a
// loader of images alone. It refuses a set without labels, and labels at or
// above classes, naming the image and its label.
START_TEST(test_loader_labels) {
    CifarSet s = fake_set(300);
    DataLoader plain, labelled;
    char err[512];
    ck_assert_int_eq(dataloader_init(&plain, &s, 7, true, 0, err, sizeof err), 0);
    ck_assert_int_eq(dataloader_init(&labelled, &s, 7, true, CIFAR_NUM_CLASSES, err, sizeof err), 0);
    Drawn a = draw(&plain, 3, 64);
    float *x = alloc_floats((size_t)64 * CIFAR_PIXELS);
    int y[64], idx[64], none[64];
    uint8_t fl[64];
    for (int k = 0; k < 3; k++) {
        dataloader_next(&labelled, 64, x, y, idx, fl);
        ck_assert(!memcmp(idx, a.idx + k * 64, sizeof idx) && !memcmp(fl, a.flip + k * 64, sizeof fl) &&
                  !memcmp(x, a.x + (size_t)k * 64 * CIFAR_PIXELS, sizeof(float) * 64 * CIFAR_PIXELS));
        for (int b = 0; b < 64; b++) ck_assert_int_eq(y[b], s.labels[idx[b]]);
    }
    dataloader_next(&plain, 64, x, none, NULL, NULL);   // a loader of images alone hands no labels
    for (int b = 0; b < 64; b++) ck_assert_int_eq(none[b], -1);
    drawn_free(&a);
    dataloader_free(&plain); dataloader_free(&labelled);
    DataLoader dl;
    int bad = 0;
    while (s.labels[bad] != 9) bad++;
    ck_assert_int_eq(dataloader_init(&dl, &s, 7, true, 9, err, sizeof err), -1);   // labels 0..9, classes 9
    char want[128];
    snprintf(want, sizeof want, "image %d has label 9, but classes=9 knows labels 0..8", bad);
    ck_assert_msg(strstr(err, want), "%s", err);
    uint8_t *labels = s.labels;
    s.labels = NULL;   // a set without labels: the unconditional model only
    ck_assert_int_eq(dataloader_init(&dl, &s, 7, true, 10, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "the training set has no labels") && strstr(err, "classes=10"), "%s", err);
    ck_assert_int_eq(dataloader_init(&dl, &s, 7, true, 0, err, sizeof err), 0);
    dataloader_free(&dl);
    s.labels = labels;
    free(x);
    cifar_free(&s);
}
END_TEST

static Suite *cifar_suite(void) {
    Suite *s = suite_create("cifar");
    TCase *files = add_tests(s, "files", 0, TESTS(test_load_small_files, test_gather_and_flip, test_wrong_length,
                                                  test_truncated_file, test_bad_label, test_missing_file,
                                                  test_missing_directory, test_file_is_directory,
                                                  test_real_loader_insists_on_10000,
                                                  test_cifar_records_for_small_sets, test_small_error_buffer,
                                                  test_parse_batch_memory, test_cifar_dir_env));
    tcase_add_checked_fixture(files, make_tmpdir, remove_tmpdir);
    // reads 180 MB
    add_tests(s, "real_data", 120, TESTS(test_real_data));
    add_tests(s, "order", 30, TESTS(test_loader_same_seed_same_batches, test_loader_epochs_are_permutations,
                                    test_chi2_sf_known_values, test_loader_order_is_a_uniform_shuffle,
                                    test_loader_flips_half, test_loader_resume, test_loader_state_text,
                                    test_loader_bad_state_and_set, test_loader_labels));
    return s;
}

int main(void) { return run_suite(cifar_suite()); }
