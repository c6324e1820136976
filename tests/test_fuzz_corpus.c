// test_fuzz_corpus.c: every input of the fuzz corpus, replayed in `make check`.
//
// `make fuzz` (clang, libFuzzer) runs the three targets of fuzz/harness.h for
// minutes at a time; this test runs the same harness functions, compiled by
// gcc, on
//   fuzz/corpus/<target>/*       the committed seeds
//   fuzz/regressions/<target>/*  every input that once crashed a target, kept
//                                after its bug was fixed so it stays fixed
// A harness calls abort() when an invariant breaks, which Check reports as a
// failed test; under `make sanitize` ASan and UBSan watch the replay too.
#include "testutil.h"
#include "../fuzz/harness.h"
#include "io/paths.h"

#include <dirent.h>
#include <sys/stat.h>

typedef int (*FuzzOne)(const uint8_t *data, size_t size);

static uint8_t *read_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1);   // +1: malloc(0) may be NULL
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

// Feeds every regular file of dir to fn. Returns how many; -1 if the folder
// does not exist.
static int replay_dir(const char *dir, FuzzOne fn) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        size_t len;
        uint8_t *buf = read_whole(path, &len);
        fn(buf, len);   // aborts on a broken invariant
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

static void replay_target(const char *target, FuzzOne fn) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", project_root(), target);
    int seeds = replay_dir(dir, fn);
    ck_assert_msg(seeds > 0, "no seed corpus in %s", dir);
    snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", project_root(), target);
    int regressions = replay_dir(dir, fn);
    printf("fuzz %s: %d seeds, %d regression inputs replayed\n", target, seeds,
           regressions < 0 ? 0 : regressions);
}

START_TEST(test_replay_safetensors) { replay_target("safetensors", fuzz_safetensors_one); }
END_TEST

START_TEST(test_replay_cifar) { replay_target("cifar", fuzz_cifar_one); }
END_TEST

START_TEST(test_replay_config) { replay_target("config", fuzz_config_one); }
END_TEST

// The edge cases that need no file: an empty or one-byte safetensors file
// is refused with a message, a good config is taken as written, and the
// harness runs through each (it aborts on a broken invariant).
START_TEST(test_harness_edges) {
    static const uint8_t none[1] = { 0 };
    for (size_t n = 0; n <= 1; n++) {
        SafeTensors st;
        char err[256] = "";
        ck_assert_int_eq(st_parse(none, n, &st, err, sizeof err), -1);
        ck_assert_msg(err[0] != '\0', "st_parse of %zu bytes: refused without a message", n);
        fuzz_safetensors_one(none, n);
        fuzz_cifar_one(none, n);
        fuzz_config_one(none, n);
    }
    const char *sets[] = { "modern", "dim=64", "heads=4", "pos=rope2d" };
    Config c = config_default();
    char err[512];
    ck_assert_msg(config_apply(&c, sets, 4, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.model.dim, 64);
    ck_assert_int_eq(c.model.heads, 4);
    ck_assert_int_eq(c.model.pos, POS_ROPE2D);
    const char *line = "modern\ndim=64\nheads=4\npos=rope2d";
    fuzz_config_one((const uint8_t *)line, strlen(line));
}
END_TEST

// The config inputs `make fuzz` and its review found (fuzz/regressions/config/),
// spelled out: each value is accepted alone, and config_validate refuses the
// result with a message instead of overflowing.
START_TEST(test_config_size_guards) {
    const char *cases[][2] = {
        { "img=1999199992", NULL },                     // img*img*channels overflowed a long long
        { "modern", "mlp_multiple_of=2147483647" },     // SwiGLU rounding: h + m - 1 overflowed an int
        { "modern", "mlp_multiple_of=2147483000" },     // rounded hidden of 2^31 passed
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c = config_default();
        char err[1024] = "";
        for (int k = 0; k < 2 && cases[i][k]; k++)
            ck_assert_msg(config_set(&c, cases[i][k], err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(config_validate(&c, err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "too large"));
    }
}
END_TEST

int main(void) {
    return run_tests("fuzz_corpus", "replay", 0, TESTS(test_replay_safetensors, test_replay_cifar,
                                                       test_replay_config, test_harness_edges,
                                                       test_config_size_guards));
}
