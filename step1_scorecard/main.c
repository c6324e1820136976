// Step 1: how we measure "better".
//
// Before changing anything in the block, we fix how a change will be judged.
// Every training run in this project ends with the same four numbers, and
// every one of them is computed by the same code for every model:
//
//   val MSE    the flow-matching loss on the first 2,000 CIFAR-10 test images.
//              The noise and the times are drawn once from a seed of their
//              own (VAL_SEED), not from the run's seed, so every model sits
//              exactly the same exam. Lower is better.
//              -> scorecard_val_mse in common/eval/scorecard.c
//   probe-FD   1,000 samples (20 Euler steps from fixed noise) against the
//              10,000 real test images, as a Fréchet distance between two
//              clouds of features of a small CIFAR-10 classifier that the
//              project trains once and caches. FID's formula, our own network:
//              compare it only within this project. Lower is better.
//              -> common/eval/probe.c (features), common/eval/frechet.c (distance)
//   ms/step    how long a training step took, on a machine shared with other
//              work: small differences are noise.
//              -> the step loop of trainer_run in common/train/trainer.c
//   spikes     steps whose loss jumps above 1.5x the median of the 100 before.
//              -> count_loss_spikes in common/eval/spikes.c
//
// And one number judges the others: the seed gap. We train the baseline
// twice, changing nothing but the seed (0 and 1), and take the distance
// between the two val MSEs. A change to the model that moves val MSE by less
// than that gap has not been shown to do anything.
//
// This program trains those two baseline runs (or finds them finished) and
// prints their scorecard and the seed gap; given run folders, it prints
// theirs. Every number is read back from the runs' metrics.json files
// (common/io/metrics.c), none is typed in here.
//
//   cd step1_scorecard && make step1 && ./step1_scorecard --preset smoke
//   ./step1_scorecard ../runs/step1_base_s0 ../runs/p11_rope
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/checkpoint.h"
#include "io/fileio.h"
#include "io/metrics.h"
#include "io/paths.h"
#include "eval/scorecard.h"
#include "eval/spikes.h"
#include "train/trainer.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step1_scorecard [--preset P] [--threads N] [--out DIR]\n"
        "       step1_scorecard RUN_DIR [RUN_DIR...]\n"
        "\n"
        "With no run folders: trains the baseline with seeds 0 and 1 at preset P (or\n"
        "finds the runs finished, or continues them where they stopped) and prints the\n"
        "four numbers of each run and the seed gap. The runs are DIR/step1_base_s0 and\n"
        "DIR/step1_base_s1 at the quick preset (step1_smoke_s*, step1_tutorial_s* at the\n"
        "others); finished runs DIR/p11_base_s0, _s1 of step 6 are used instead when\n"
        "they are the baseline at preset P.\n"
        "\n"
        "With run folders (or metrics.json files): prints their scorecard, and the seed\n"
        "gap of any two that are one config at two seeds.\n"
        "\n"
        "options:\n"
        "  --preset P    smoke | quick | tutorial (default quick)\n"
        "  --threads N   OpenMP threads for training (default 0: all cores)\n"
        "  --out DIR     where the baseline runs live (default %s)\n"
        "  --help        this text\n"
        "\n", default_runs_dir());
    preset_describe(f);
}

// ---------------------------------------------------------------------------
// What the numbers are. Built from the constants the scorecard uses, so the
// words cannot drift from what was measured.
static void print_legend(const RunMetrics *runs, int n) {
    const RunMetrics *with_probe = NULL;
    for (int i = 0; i < n && !with_probe; i++)
        if (runs[i].probe_key[0]) with_probe = &runs[i];
    printf("\nwhat the numbers are:\n");
    printf("  val MSE   flow-matching loss on the first %d test images, noise and times fixed by\n"
           "            their own seed: the same exam for every model (lower is better)\n", VAL_IMAGES);
    printf("  probe-FD  Frechet distance between %d samples (%d Euler steps) and the %d test images,\n"
           "            in the features of the project's probe classifier (lower is better;\n"
           "            comparable only within this project)\n", FD_SAMPLES, FD_EULER_STEPS, CIFAR_RECORDS_PER_FILE);
    if (with_probe && with_probe->probe_test_acc == with_probe->probe_test_acc)
        printf("            probe %s, test accuracy %.1f%%\n", with_probe->probe_key,
               100.0 * with_probe->probe_test_acc);
    printf("  ms/step   mean wall time of one training step, on a shared machine (noisy)\n");
    printf("  spikes    steps whose loss is above %.1fx the median of the previous %d steps\n",
           (double)SPIKE_FACTOR, SPIKE_WINDOW);
    printf("  seed gap  |val MSE(seed 0) - val MSE(seed 1)| of one config: a change smaller\n"
           "            than this is noise, not a result\n");
}

// The table, then the seed gap of every pair that is one config at two seeds.
static void print_scorecard(const RunMetrics *runs, int n) {
    printf("\n");
    metrics_print_header(stdout);
    for (int i = 0; i < n; i++) metrics_print_row(stdout, NULL, &runs[i]);
    int pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!metrics_is_seed_pair(&runs[i], &runs[j])) continue;
            if (pairs++ == 0) printf("\n");
            printf("seed gap |val MSE(seed %llu) - val MSE(seed %llu)| = %.4f   (%s, %s)\n",
                   runs[i].cfg.seed, runs[j].cfg.seed, metrics_val_mse_gap(&runs[i], &runs[j]),
                   runs[i].name, runs[j].name);
        }
    if (pairs == 0 && n > 1)
        printf("\n(no two of these runs are one config at two seeds, so there is no seed gap here)\n");
    print_legend(runs, n);
}

// ---------------------------------------------------------------------------
// The default: the baseline at seeds 0 and 1.

// Two configs are the same run when every field but the thread count agrees.
static bool same_config(Config a, Config b) {
    a.threads = b.threads = 0;
    char da[1024], db[1024];
    config_describe(&a, da, sizeof da);
    config_describe(&b, db, sizeof db);
    return strcmp(da, db) == 0;
}

// What DIR/NAME holds: nothing yet, the run we want (finished or stopped
// part-way), or some other run (which we must not touch).
typedef enum { RUN_NONE, RUN_FINISHED, RUN_STARTED, RUN_OTHER } RunState;

static RunState run_state(const char *out_dir, const char *name, const Config *want) {
    char metrics[2300], ckpt[2300];
    snprintf(metrics, sizeof metrics, "%s/%s/metrics.json", out_dir, name);
    snprintf(ckpt, sizeof ckpt, "%s/%s/ckpt.safetensors", out_dir, name);
    char err[METRICS_ERRLEN];
    if (file_exists(metrics)) {
        RunMetrics r;
        if (metrics_read(metrics, &r, err, sizeof err) != 0 || !r.has_config) return RUN_OTHER;
        return same_config(r.cfg, *want) ? RUN_FINISHED : RUN_OTHER;
    }
    if (file_exists(ckpt)) {
        Config c;
        if (checkpoint_read_config(ckpt, &c, err, sizeof err) != 0) return RUN_OTHER;
        return same_config(c, *want) ? RUN_STARTED : RUN_OTHER;
    }
    return RUN_NONE;
}

static int baseline_runs(Preset preset, const char *out_dir, int threads) {
    const char *ours = preset == PRESET_QUICK ? "step1_base" : preset == PRESET_SMOKE ? "step1_smoke"
                                                                                      : "step1_tutorial";
    printf("Step 1: the baseline trained twice, seeds 0 and 1, at the %s preset\n", preset_name(preset));
    RunMetrics runs[2];
    for (int seed = 0; seed < 2; seed++) {
        // the baseline: the preset's config, nothing switched on, this seed
        TrainOptions o;
        memset(&o, 0, sizeof o);
        preset_apply(preset, &o.cfg, &o.ckpt_every);
        o.cfg.seed = (unsigned long long)seed;
        o.cfg.threads = threads;
        o.preset = preset;
        o.out_dir = out_dir;
        o.resume = true;        // a run stopped part-way continues from its checkpoint
        o.scorecard = true;

        // step 6's baseline runs, if they are finished and are this very run;
        // else step 1's own, trained now or continued where they stopped
        char p11[32], name[64];
        snprintf(p11, sizeof p11, "p11_base_s%d", seed);
        snprintf(name, sizeof name, "%s_s%d", ours, seed);
        RunState state = run_state(out_dir, p11, &o.cfg);
        if (state == RUN_FINISHED) snprintf(name, sizeof name, "%s", p11);
        else state = run_state(out_dir, name, &o.cfg);
        if (state == RUN_OTHER) {
            fprintf(stderr, "error: %s/%s holds a run with another config than the %s baseline at seed %d;\n"
                            "move it away, or use --out to put the baseline elsewhere\n",
                    out_dir, name, preset_name(preset), seed);
            return 1;
        }
        if (state == RUN_FINISHED) {
            printf("[%s] finished already: %s/%s/metrics.json\n", name, out_dir, name);
        } else {
            o.name = name;
            int rc = trainer_run(&o);
            if (rc == TRAIN_DIVERGED) {
                fprintf(stderr, "error: the baseline %s/%s diverged (see above)\n", out_dir, name);
                return 1;
            }
            if (rc != TRAIN_OK) {
                fprintf(stderr, "error: training %s/%s stopped (exit code %d); run the same command "
                                "again to continue it\n", out_dir, name, rc);
                return 1;
            }
        }
        char dir[2200], err[METRICS_ERRLEN];
        snprintf(dir, sizeof dir, "%s/%s", out_dir, name);
        if (metrics_read(dir, &runs[seed], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            return 1;
        }
    }
    print_scorecard(runs, 2);
    if (preset == PRESET_SMOKE)
        printf("\nnote: the smoke preset trains a %lld-parameter model for %d steps: its numbers show that\n"
               "the machinery works, they say nothing about the model. Use --preset quick or tutorial.\n",
               runs[0].params, runs[0].has_config ? runs[0].cfg.steps : 0);
    return 0;
}

// ---------------------------------------------------------------------------
// Given folders: their scorecard. A relative path that is not found from
// here is also tried from the project root and inside its runs/ folder, so
// `runs/p11_rope` and `p11_rope` work from a step folder too.
static void resolve_run(const char *arg, char *out, size_t n) {
    snprintf(out, n, "%s", arg);
    if (file_exists(arg) || arg[0] == '/') return;
    const char *roots[2] = { project_root(), default_runs_dir() };
    for (int i = 0; i < 2; i++) {
        char p[2048];
        if (snprintf(p, sizeof p, "%s/%s", roots[i], arg) >= (int)sizeof p) continue;
        if (file_exists(p)) { snprintf(out, n, "%s", p); return; }
    }
}

static int existing_runs(char **paths, int n) {
    RunMetrics *runs = calloc((size_t)n, sizeof *runs);
    if (!runs) { fprintf(stderr, "error: out of memory\n"); return 1; }
    for (int i = 0; i < n; i++) {
        char path[2048], err[METRICS_ERRLEN];
        resolve_run(paths[i], path, sizeof path);
        if (metrics_read(path, &runs[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            free(runs);
            return 1;
        }
    }
    print_scorecard(runs, n);
    free(runs);
    return 0;
}

// ---------------------------------------------------------------------------
static int parse_int(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 4096) return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv) {
    Preset preset = PRESET_QUICK;
    bool preset_given = false;
    int threads = 0;
    const char *out_dir = default_runs_dir();
    char **paths = malloc(sizeof(char *) * (size_t)argc);
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); free(paths); return 0; }
        else if (strcmp(a, "--preset") == 0 && has) {
            if (preset_parse(argv[++i], &preset) != 0) {
                fprintf(stderr, "error: unknown preset '%s'\n\n", argv[i]);
                usage(stderr); free(paths); return 2;
            }
            preset_given = true;
        }
        else if (strcmp(a, "--threads") == 0 && has) {
            if (parse_int(argv[++i], &threads) != 0) {
                fprintf(stderr, "error: --threads wants a whole number >= 0, not '%s'\n\n", argv[i]);
                usage(stderr); free(paths); return 2;
            }
        }
        else if (strcmp(a, "--out") == 0 && has) out_dir = argv[++i];
        else if (a[0] == '-') {
            fprintf(stderr, "error: unknown or incomplete option '%s'\n\n", a);
            usage(stderr); free(paths); return 2;
        }
        else paths[npaths++] = argv[i];
    }
    if (npaths > 0 && preset_given) {
        fprintf(stderr, "error: --preset chooses the baseline runs to train; it does not go with run folders\n\n");
        usage(stderr); free(paths); return 2;
    }
    int rc = npaths > 0 ? existing_runs(paths, npaths) : baseline_runs(preset, out_dir, threads);
    free(paths);
    return rc;
}
