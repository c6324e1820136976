// test_safetensors.c: the safetensors writer and its hardened reader:
// round trips, the PyTorch reference's golden file, corrupt files, and the
// atomic save that never loses the old file.
#include "testutil.h"
#include "io/safetensors.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[1024];

// A fresh scratch directory per test (Check runs each test in its own process).
static char tmpdir[256];
static void make_tmpdir(void) { tmpdir_make(tmpdir, sizeof tmpdir, "safetensors"); }
static void remove_tmpdir(void) { tmpdir_remove(tmpdir); }

static uint8_t *read_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

// A buffer holding a safetensors file: the given header (unpadded) and data.
static uint8_t *make_file(const char *header, const void *data, size_t data_len, size_t *len) {
    size_t n = strlen(header);
    *len = 8 + n + data_len;
    uint8_t *buf = malloc(*len);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, header, n);
    if (data_len) memcpy(buf + 8 + n, data, data_len);
    return buf;
}

// st_parse must reject the buffer with a message containing needle.
static void parse_fails(const uint8_t *buf, size_t len, const char *needle) {
    SafeTensors st;
    err[0] = '\0';
    int rc = st_parse(buf, len, &st, err, sizeof err);
    ck_assert_msg(rc == -1, "parse should fail (expected '%s')", needle);
    ck_assert_msg(strstr(err, needle) != NULL, "message lacks '%s': %s", needle, err);
    ck_assert_int_eq(st.n_tensors, 0);   // nothing left behind
    st_free(&st);
}

static void header_fails(const char *header, size_t data_len, const char *needle) {
    uint8_t data[256] = {0};
    ck_assert(data_len <= sizeof data);
    size_t len;
    uint8_t *buf = make_file(header, data, data_len, &len);
    parse_fails(buf, len, needle);
    free(buf);
}

// ---------------------------------------------------------------------------

START_TEST(test_round_trip) {
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/rt.safetensors", tmpdir);

    float a[6], b[5], s = 3.25f;
    fill_normal(a, 6, 1.0f, 1);
    fill_normal(b, 5, 1.0f, 2);
    long sa[2] = {2, 3}, sb[1] = {5}, s0[1] = {0};
    StWriter w;
    st_writer_init(&w);
    ck_assert_int_eq(st_writer_add(&w, "blocks.0.attn.qkv.weight", 2, sa, a), 0);
    ck_assert_int_eq(st_writer_add(&w, "bias", 1, sb, b), 0);
    ck_assert_int_eq(st_writer_add(&w, "scalar", 0, NULL, &s), 0);
    ck_assert_int_eq(st_writer_add(&w, "empty", 1, s0, NULL), 0);
    ck_assert_int_eq(st_writer_meta(&w, "dim", "128"), 0);
    ck_assert_int_eq(st_writer_meta(&w, "note", "quote \" and \\ and \xc3\xa9"), 0);
    ck_assert_int_eq(st_writer_meta(&w, "dim", "64"), 0);   // replaces
    ck_assert_msg(st_writer_save_atomic(&w, path, err, sizeof err) == 0, "%s", err);
    st_writer_free(&w);

    // Format details: 8-byte length, header padded to 8 with spaces.
    size_t len;
    uint8_t *raw = read_whole(path, &len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | raw[i];
    ck_assert_int_eq(n % 8, 0);
    ck_assert_int_eq(len, 8 + n + (6 + 5 + 1) * 4);
    ck_assert_int_eq(raw[8], '{');
    free(raw);

    SafeTensors st;
    ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.n_tensors, 4);
    ck_assert_str_eq(st.tensors[0].name, "blocks.0.attn.qkv.weight");   // file order kept
    const StTensor *t = st_find(&st, "blocks.0.attn.qkv.weight");
    ck_assert_int_eq(t->ndim, 2); ck_assert_int_eq(t->shape[0], 2); ck_assert_int_eq(t->shape[1], 3);
    ck_assert_int_eq(t->numel, 6);
    ck_assert(memcmp(t->data, a, sizeof a) == 0);
    ck_assert_int_eq((uintptr_t)t->data % 64, 0);
    t = st_find(&st, "bias");
    ck_assert(t && t->numel == 5 && memcmp(t->data, b, sizeof b) == 0);
    t = st_find(&st, "scalar");
    ck_assert(t && t->ndim == 0 && t->numel == 1 && t->data[0] == 3.25f);
    t = st_find(&st, "empty");
    ck_assert(t && t->ndim == 1 && t->numel == 0 && t->data != NULL);
    ck_assert_ptr_null(st_find(&st, "missing"));
    ck_assert_int_eq(st.n_meta, 2);
    ck_assert_str_eq(st_meta(&st, "dim"), "64");
    ck_assert_str_eq(st_meta(&st, "note"), "quote \" and \\ and \xc3\xa9");
    ck_assert_ptr_null(st_meta(&st, "missing"));
    st_free(&st);
    st_free(&st);   // twice is harmless

    // No metadata at all is fine too.
    st_writer_init(&w);
    st_writer_add(&w, "x", 1, sb, b);
    ck_assert_int_eq(st_writer_save_atomic(&w, path, err, sizeof err), 0);
    st_writer_free(&w);
    ck_assert_int_eq(st_read(path, &st, err, sizeof err), 0);
    ck_assert_int_eq(st.n_meta, 0);
    ck_assert_int_eq(st.n_tensors, 1);
    st_free(&st);
    remove_tmpdir();
}
END_TEST

// Where the golden files are: golden_path in tests/testutil.h.
static int find_golden(const char *file, char *out, size_t outlen) {
    return golden_path(file, out, outlen) ? 0 : -1;
}

START_TEST(test_golden_reference_file) {
    char path[800];
    ck_assert_msg(find_golden("baseline.safetensors", path, sizeof path) == 0,
                  "%s not found; the golden files are part of the repository (tests/golden), "
                  "and `make golden-files` writes them again", path);
    SafeTensors st;
    ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.n_tensors, 295);   // 32 parameters x 9 (param, grad, adamw, 3 AdamW steps x 2) + 7
    ck_assert_str_eq(st_meta(&st, "img"), "16");
    ck_assert_str_eq(st_meta(&st, "mlp_ratio"), "4.0");
    ck_assert_str_eq(st_meta(&st, "qk_norm"), "false");
    ck_assert_str_eq(st_meta(&st, "adamw.eps"), "1e-08");
    const StTensor *t = st_find(&st, "param.pos_row");
    ck_assert(t && t->ndim == 2 && t->shape[0] == 4 && t->shape[1] == 16);
    ck_assert(t->data[0] == -0.09530103951692581f && t->data[63] == 0.038498904556035995f);
    t = st_find(&st, "output.loss");
    ck_assert(t && t->ndim == 1 && t->numel == 1 && t->data[0] == 1.7508180141448975f);
    t = st_find(&st, "sample.out");
    ck_assert(t && t->ndim == 4 && t->shape[0] == 2 && t->shape[1] == 3 && t->shape[3] == 16);
    ck_assert(t->data[0] == 0.4645049571990967f && t->data[1535] == 1.8247333765029907f);

    // Writing it back with our writer reproduces the reference's bytes
    // exactly: same JSON layout, same padding, same data.
    make_tmpdir();
    char out[300];
    snprintf(out, sizeof out, "%s/copy.safetensors", tmpdir);
    StWriter w;
    st_writer_init(&w);
    for (int i = 0; i < st.n_meta; i++) st_writer_meta(&w, st.meta_keys[i], st.meta_values[i]);
    for (int i = 0; i < st.n_tensors; i++)
        st_writer_add(&w, st.tensors[i].name, st.tensors[i].ndim, st.tensors[i].shape, st.tensors[i].data);
    ck_assert_msg(st_writer_save_atomic(&w, out, err, sizeof err) == 0, "%s", err);
    st_writer_free(&w);
    size_t la, lb;
    uint8_t *ra = read_whole(path, &la), *rb = read_whole(out, &lb);
    ck_assert_int_eq(la, lb);
    ck_assert_msg(memcmp(ra, rb, la) == 0, "re-saved golden file differs from the reference's bytes");
    free(ra); free(rb);
    st_free(&st);
    remove_tmpdir();
}
END_TEST

// Every golden file present parses.
START_TEST(test_all_golden_files) {
    const char *files[] = {"allfour", "baseline", "modern", "qknorm", "rmsnorm", "rope2d", "shape", "swiglu"};
    for (int i = 0; i < 8; i++) {
        char name[64], path[800];
        snprintf(name, sizeof name, "%s.safetensors", files[i]);
        if (find_golden(name, path, sizeof path) != 0) continue;
        SafeTensors st;
        ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "%s", err);
        ck_assert(st.n_tensors > 10);
        ck_assert_ptr_nonnull(st_meta(&st, "dim"));
        st_free(&st);
    }
}
END_TEST

// A small valid file; every proper prefix of it must be rejected cleanly.
START_TEST(test_truncated) {
    float data[6] = {1, 2, 3, 4, 5, 6};
    const char *h = "{\"__metadata__\":{\"a\":\"b\"},\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}";
    size_t len;
    uint8_t *buf = make_file(h, data, sizeof data, &len);
    SafeTensors st;
    ck_assert_msg(st_parse(buf, len, &st, err, sizeof err) == 0, "%s", err);
    ck_assert(memcmp(st_find(&st, "x")->data, data, sizeof data) == 0);
    st_free(&st);
    for (size_t cut = 0; cut < len; cut++) {
        // A copy of exactly `cut` bytes, so that a read past the end would
        // touch memory it does not own (visible under valgrind/ASan).
        uint8_t *part = malloc(cut ? cut : 1);
        memcpy(part, buf, cut);
        err[0] = '\0';
        ck_assert_msg(st_parse(part, cut, &st, err, sizeof err) == -1, "prefix of %zu bytes accepted", cut);
        ck_assert(strlen(err) > 0);
        free(part);
    }
    parse_fails(buf, 5, "too short");
    parse_fails(buf, 40, "larger than");
    parse_fails(buf, len - 1, "outside the data section");
    free(buf);
    parse_fails(NULL, 0, "too short");
}
END_TEST

START_TEST(test_header_length_lies) {
    float data[2] = {1, 2};
    const char *h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    size_t len;
    uint8_t *buf = make_file(h, data, sizeof data, &len);
    buf[7] = 0xff;                                   // 2^63-ish
    parse_fails(buf, len, "larger than");
    memset(buf, 0xff, 8);                            // 2^64 - 1: len - 8 must not wrap
    parse_fails(buf, len, "larger than");
    memset(buf, 0, 8); buf[0] = (uint8_t)(strlen(h) + 4);   // reaches into the data
    parse_fails(buf, len, "after the JSON header");
    memset(buf, 0, 8); buf[0] = 10;                  // shorter than the JSON
    parse_fails(buf, len, "not valid JSON");
    memset(buf, 0, 8);                               // zero
    parse_fails(buf, len, "cannot hold");
    free(buf);
}
END_TEST

START_TEST(test_bad_headers) {
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "not valid JSON");
    header_fails("not json at all", 8, "not valid JSON");
    header_fails("[1,2,3]", 0, "not a JSON object");
    header_fails("\"str\"", 0, "not a JSON object");
    header_fails("{} x", 0, "after the JSON header");
    header_fails("{\"x\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype I32");
    header_fails("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8, "only F32");
    header_fails("{\"x\":{\"dtype\":3,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype");
    header_fails("{\"x\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, "shape");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "data_offsets");
    header_fails("{\"x\":[1,2]}", 8, "not an object");
    // offsets
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,16]}}", 8, "outside the data section");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "outside");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8, "non-negative");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0.5,8.5]}}", 8, "non-negative integers");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,16]}}", 16, "data_offsets");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,1e300]}}", 8, "non-negative");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[\"0\",\"8\"]}}", 8, "non-negative");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[18446744073709551615,8]}}", 8, "non-negative");
    // shapes
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "does not match");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "shape entry");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[4503599627370496,4503599627370496,4],\"data_offsets\":[0,8]}}",
                 8, "does not match");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}",
                 0, "does not match");   // 2^64 elements must not wrap around to 0
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,2],\"data_offsets\":[0,8]}}", 8, "dimensions");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}}", 8, "shape");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[null],\"data_offsets\":[0,8]}}", 8, "shape entry");
    // overlap and duplicates
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlap");
    header_fails("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, "appears twice");
    // metadata
    header_fails("{\"__metadata__\":{\"step\":5}}", 0, "not a string");
    header_fails("{\"__metadata__\":{\"a\":null}}", 0, "not a string");
    header_fails("{\"__metadata__\":[\"a\"]}", 0, "not a JSON object");
    header_fails("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0, "appears twice");
    header_fails("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "appears twice");
    // deep nesting: cJSON's nesting limit, not a stack overflow
    char deep[5000];
    size_t k = 0;
    deep[k++] = '{'; memcpy(deep + k, "\"a\":", 4); k += 4;
    for (int i = 0; i < 2000; i++) deep[k++] = '[';
    for (int i = 0; i < 2000; i++) deep[k++] = ']';
    deep[k++] = '}'; deep[k] = '\0';
    header_fails(deep, 0, "not valid JSON");

    // A NUL byte inside the header.
    const char *h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}   ";
    size_t len;
    uint8_t data[8] = {0};
    uint8_t *buf = make_file(h, data, 8, &len);
    buf[8 + strlen(h) - 2] = '\0';
    parse_fails(buf, len, "after the JSON header");
    buf[8 + 10] = '\0';
    parse_fails(buf, len, "JSON");
    free(buf);
}
END_TEST

START_TEST(test_accepted_variants) {
    // F64 is converted to float; holes between tensors and empty tensors are fine;
    // header order does not have to follow the data order.
    double d[2] = {1.5, -2.25};
    float f[2] = {7, 8};
    uint8_t data[32];
    memcpy(data, f, 8);
    memcpy(data + 8, d, 16);
    const char *h = "{\"b\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[8,24]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]},"
                    "\"e\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[4,4]},"
                    "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[28,32]}}\n  ";
    size_t len;
    uint8_t *buf = make_file(h, data, sizeof data, &len);
    SafeTensors st;
    ck_assert_msg(st_parse(buf, len, &st, err, sizeof err) == 0, "%s", err);
    const StTensor *b = st_find(&st, "b"), *a = st_find(&st, "a"), *e = st_find(&st, "e");
    ck_assert(b && b->data[0] == 1.5f && b->data[1] == -2.25f);
    ck_assert(a && a->ndim == 2 && a->data[1] == 8.0f);
    ck_assert(e && e->numel == 0);
    ck_assert(st_find(&st, "s")->ndim == 0);
    st_free(&st);
    free(buf);
}
END_TEST

// Random corruption of a valid file must never crash; the reader either
// accepts (a flip inside the data) or rejects with a message.
START_TEST(test_random_mutations) {
    float data[12];
    fill_normal(data, 12, 1, 3);
    const char *h = "{\"__metadata__\":{\"dim\":\"4\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2,4],"
                    "\"data_offsets\":[0,32]},\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[32,48]}}";
    size_t len;
    uint8_t *buf = make_file(h, data, sizeof data, &len);
    Rng r;
    rng_seed(&r, 42);
    int accepted = 0, rejected = 0;
    for (int trial = 0; trial < 3000; trial++) {
        uint8_t *m = malloc(len);
        memcpy(m, buf, len);
        int flips = 1 + (int)(rng_uniform(&r) * 4);
        for (int i = 0; i < flips; i++) {
            size_t at = (size_t)(rng_uniform(&r) * len) % len;
            m[at] = (uint8_t)(rng_uniform(&r) * 256);
        }
        size_t cut = trial % 3 == 0 ? (size_t)(rng_uniform(&r) * len) % len : len;
        SafeTensors st;
        err[0] = '\0';
        if (st_parse(m, cut, &st, err, sizeof err) == 0) { accepted++; st_free(&st); }
        else { rejected++; ck_assert(strlen(err) > 0); }
        free(m);
    }
    ck_assert(accepted > 0 && rejected > 0);
    free(buf);
}
END_TEST

START_TEST(test_read_errors_name_the_file) {
    SafeTensors st;
    ck_assert_int_eq(st_read("/nonexistent/x.safetensors", &st, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.safetensors"));
    ck_assert_int_eq(st_read("/tmp", &st, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/bad.safetensors", tmpdir);
    FILE *f = fopen(path, "wb");
    fwrite("\x10\0\0\0\0\0\0\0{\"a\":", 1, 13, f);   // says 16 header bytes, has 5
    fclose(f);
    ck_assert_int_eq(st_read(path, &st, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_nonnull(strstr(err, "larger than"));
    remove_tmpdir();
}
END_TEST

START_TEST(test_writer_errors) {
    float x[4] = {0};
    long s[2] = {2, 2}, neg[1] = {-1};
    StWriter w;
    st_writer_init(&w);
    ck_assert_int_eq(st_writer_add(&w, "x", 2, s, x), 0);
    ck_assert_int_eq(st_writer_add(&w, "x", 2, s, x), -1);          // duplicate
    ck_assert_int_eq(st_writer_add(&w, "y", 1, neg, x), -1);
    ck_assert_int_eq(st_writer_add(&w, "z", 9, s, x), -1);
    ck_assert_int_eq(st_writer_add(&w, "__metadata__", 1, s, x), -1);
    ck_assert_int_eq(st_writer_add(&w, "n", 1, s, NULL), -1);
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/never.safetensors", tmpdir);
    ck_assert_int_eq(st_writer_save_atomic(&w, path, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "'x' added twice"));           // the first error is kept
    ck_assert_int_eq(access(path, F_OK), -1);
    st_writer_free(&w);
    remove_tmpdir();
}
END_TEST

// Writes a small file at path, to be protected by the atomic save.
static void write_old_file(const char *path, float value) {
    float v[3] = {value, value, value};
    long s[1] = {3};
    StWriter w;
    st_writer_init(&w);
    st_writer_add(&w, "old", 1, s, v);
    ck_assert_msg(st_writer_save_atomic(&w, path, err, sizeof err) == 0, "%s", err);
    st_writer_free(&w);
}

static void assert_old_file(const char *path, float value) {
    SafeTensors st;
    ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "old file damaged: %s", err);
    const StTensor *t = st_find(&st, "old");
    ck_assert(t && t->numel == 3 && t->data[2] == value);
    st_free(&st);
}

START_TEST(test_atomic_save) {
    make_tmpdir();
    char path[300], tmp[320];
    snprintf(path, sizeof path, "%s/ckpt.safetensors", tmpdir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());   // the writer's temp name
    write_old_file(path, 1.0f);
    ck_assert_int_eq(access(tmp, F_OK), -1);   // no temp file left behind
    write_old_file(path, 2.0f);                // replacing works
    assert_old_file(path, 2.0f);

    float big[1000];
    fill_normal(big, 1000, 1, 5);
    long s[1] = {1000};
    StWriter w;
    st_writer_init(&w);
    st_writer_add(&w, "new", 1, s, big);

    // 1. A directory that does not exist.
    ck_assert_int_eq(st_writer_save_atomic(&w, "/nonexistent_dir/x.safetensors", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot create"));

    // 2. The temp file cannot be created (a directory is in its way).
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    ck_assert_int_eq(st_writer_save_atomic(&w, path, err, sizeof err), -1);
    assert_old_file(path, 2.0f);
    rmdir(tmp);

    // 3. The disk fills up halfway: RLIMIT_FSIZE makes writes past 1 KB fail
    // with EFBIG, just as ENOSPC would (Check runs this test in its own
    // process; the limit is restored anyway).
    struct rlimit old_lim, lim;
    getrlimit(RLIMIT_FSIZE, &old_lim);
    lim = old_lim;
    lim.rlim_cur = 1024;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = st_writer_save_atomic(&w, path, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old_lim);
    signal(SIGXFSZ, old_handler);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "writing") && strstr(err, "unchanged"), "%s", err);
    assert_old_file(path, 2.0f);
    ck_assert_int_eq(access(tmp, F_OK), -1);   // the partial temp file was removed

    // And finally the save goes through.
    ck_assert_msg(st_writer_save_atomic(&w, path, err, sizeof err) == 0, "%s", err);
    st_writer_free(&w);
    SafeTensors st;
    ck_assert_int_eq(st_read(path, &st, err, sizeof err), 0);
    ck_assert(memcmp(st_find(&st, "new")->data, big, sizeof big) == 0);
    ck_assert_ptr_null(st_find(&st, "old"));
    st_free(&st);
    remove_tmpdir();
}
END_TEST

int main(void) {
    return run_tests("safetensors", "safetensors", 30, TESTS(test_round_trip, test_golden_reference_file,
                                                             test_all_golden_files, test_truncated,
                                                             test_header_length_lies, test_bad_headers,
                                                             test_accepted_variants, test_random_mutations,
                                                             test_read_errors_name_the_file, test_writer_errors,
                                                             test_atomic_save));
}
