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
// And the noise judges the others. We train the baseline several times,
// changing nothing but the seed (0, 1, ...). The distance between two seeds'
// val MSEs is the seed gap; the spread of all of them (their standard
// deviation) is the noise of one run. A change to the model that moves val
// MSE by less than the noise has not been shown to do anything. One pair is
// one draw of a noisy distance: it can be several times smaller than the
// spread, so the program prints what more seeds buy.
//
// With no arguments the program prints the scorecard of the project's
// committed baseline seeds (results/quick/p11_base_s*), in a second, and
// writes nothing. Asked to train (--preset, --seeds, --out, --threads), it
// trains the baseline with two seeds or more (or finds them finished), reads
// every further baseline seed it finds, and prints their scorecard, the seed
// gap and the noise, and draws the loss curves and val MSEs of the seeds
// (--figures). Given run folders, it prints theirs. Every number is read
// back from the runs' metrics.json files (common/io/metrics.c), none is
// typed in here.
//
//   cd step1_scorecard && make step1 && ./step1_scorecard
//   ./step1_scorecard --preset smoke
//   ./step1_scorecard ../runs/step1_base_s0 ../runs/p11_rope
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step1.h"
#include "io/args.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/fileio.h"
#include "io/figure.h"
#include "io/metrics.h"
#include "io/paths.h"
#include "eval/scorecard.h"
#include "eval/spikes.h"
#include "train/trainer.h"

// The project's own baseline seeds, committed: what the program shows when
// it is given nothing to do.
#define COMMITTED_RUNS "results/quick"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step1_scorecard [--figures DIR]\n"
        "       step1_scorecard [--preset P] [--seeds N] [--threads N] [--out DIR]\n"
        "                       [--figures DIR | --no-figures]\n"
        "       step1_scorecard RUN_DIR [RUN_DIR...]\n"
        "\n"
        "With no arguments: the scorecard of the committed baseline seeds, %s/p11_base_s*\n"
        "(trains nothing, writes nothing; --figures DIR draws their figures into DIR).\n"
        "\n"
        "With --preset, --seeds, --threads or --out: trains the baseline with seeds 0 .. N-1 at preset P (or\n"
        "finds the runs finished, or continues them where they stopped), reads any further\n"
        "baseline seed that is finished, and prints the four numbers of each run, the seed\n"
        "gap and the noise over the seeds. The runs are DIR/step1_base_s<k> at the quick\n"
        "preset (step1_smoke_s<k>, step1_tutorial_s<k> at the others); finished runs\n"
        "DIR/p11_base_s<k> of step 6 are used instead when they are the baseline at preset P.\n"
        "\n"
        "With run folders (or metrics.json files): prints their scorecard, the seed gap of\n"
        "any two that are one config at two seeds, and the noise of each such group, and\n"
        "draws the figures of the largest group.\n"
        "\n"
        "options:\n"
        "  --preset P      smoke | quick | tutorial (default quick)\n"
        "  --seeds N       baseline seeds to train, 2 or more (default 2)\n"
        "  --threads N     OpenMP threads for training (default 0: all cores)\n"
        "  --out DIR       where the baseline runs live (default %s)\n"
        "  --figures DIR   where the figures go (default %s)\n"
        "  --no-figures    draw nothing\n"
        "  --help          this text\n"
        "\n", COMMITTED_RUNS, default_runs_dir(), figure_default_dir());
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
}

// ---------------------------------------------------------------------------
// The noise: n runs of one config at n seeds (n >= 2).
static void print_noise(const RunMetrics *runs, int n) {
    double vals[STEP1_MAX_SEEDS] = {0};
    for (int i = 0; i < n; i++) vals[i] = runs[i].val_mse;
    SeedSpread s = seed_spread(vals, n);
    double gap = metrics_val_mse_gap(&runs[0], &runs[1]);
    printf("\nthe noise of one run, from %d seeds of one config (", n);
    for (int i = 0; i < n && i < 4; i++) printf("%s%s", i ? ", " : "", runs[i].name);
    printf("%s):\n", n > 4 ? ", ..." : "");
    printf("  mean val MSE %.4f, spread (sample standard deviation) %.4f, standard error of the mean %.4f\n",
           s.mean, s.sd, s.se);
    printf("  the seed gap of the first pair, %.4f, is one draw of the distance between two runs.\n"
           "  Two draws of the same noise differ on average by 2/sqrt(pi) = 1.13 spreads (%.4f here),\n"
           "  and one pair in four falls below half a spread: one gap can make the noise look several\n"
           "  times smaller (or larger) than it is, and it is the baseline's noise, not another config's.\n",
           gap, 1.1284 * s.sd);
    if (n == 2)
        printf("  with two seeds the spread is the gap / sqrt(2) and just as uncertain: a third seed\n"
               "  (--seeds 3) is the first that measures it.\n");
    printf("\nwhat N seeds per configuration buy, at this spread: the standard error of a difference of\n"
           "two means is spread * sqrt(2/N), and a difference is resolved when it is over 2 of them\n");
    Table t;
    table_init(&t, 3, "seeds per side", "se of a difference", "smallest difference resolved");
    static const int NS[] = { 1, 2, 3, 5, 10 };
    for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
        double se = s.sd * sqrt(2.0 / NS[i]);
        table_cell(&t, "%d", NS[i]);
        table_cell(&t, "%.4f", se);
        table_cell(&t, "%.4f", 2 * se);
    }
    table_print(&t);
}

// Given runs: the noise of every group of two or more that are one config at
// several seeds; the largest group is copied into *largest (n_largest runs)
// for the figures.
static void print_noise_of_groups(const RunMetrics *runs, int n, RunMetrics *largest, int *n_largest) {
    bool *done = calloc((size_t)n, sizeof *done);
    RunMetrics *group = calloc(STEP1_MAX_SEEDS, sizeof *group);
    *n_largest = 0;
    for (int i = 0; i < n && done && group; i++) {
        if (done[i] || !runs[i].has_config) continue;
        int g = 0;
        group[g++] = runs[i];
        for (int j = i + 1; j < n && g < STEP1_MAX_SEEDS; j++)
            if (!done[j] && metrics_is_seed_pair(&runs[i], &runs[j])) { group[g++] = runs[j]; done[j] = true; }
        if (g < 2) continue;
        print_noise(group, g);
        if (g > *n_largest) { memcpy(largest, group, sizeof *group * (size_t)g); *n_largest = g; }
    }
    free(done);
    free(group);
}

// ---------------------------------------------------------------------------
// The default: the baseline at seeds 0, 1, ...

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
        return configs_agree(&r.cfg, want, false) ? RUN_FINISHED : RUN_OTHER;
    }
    if (file_exists(ckpt)) {
        Config c;
        if (checkpoint_read_config(ckpt, &c, err, sizeof err) != 0) return RUN_OTHER;
        return configs_agree(&c, want, false) ? RUN_STARTED : RUN_OTHER;
    }
    return RUN_NONE;
}

typedef struct {
    Preset preset;
    int seeds, threads;
    const char *out_dir;
    const char *figures;        // NULL: --no-figures
} BaselinePlan;

// The train options of the baseline at one seed: the preset's config,
// nothing switched on.
static TrainOptions baseline_options(const BaselinePlan *p, int seed) {
    TrainOptions o;
    memset(&o, 0, sizeof o);
    preset_apply(p->preset, &o.cfg, &o.ckpt_every);
    o.cfg.seed = (unsigned long long)seed;
    o.cfg.threads = p->threads;
    o.preset = p->preset;
    o.out_dir = p->out_dir;
    o.resume = true;        // a run stopped part-way continues from its checkpoint
    o.scorecard = true;
    return o;
}

// Where seed k of the baseline is: step 6's run if it is finished and is
// this very run, else step 1's own. Writes the folder name; returns its state.
static RunState find_seed(const BaselinePlan *p, int seed, const Config *want, char *name, size_t n) {
    const char *ours = p->preset == PRESET_QUICK ? "step1_base" : p->preset == PRESET_SMOKE ? "step1_smoke"
                                                                                          : "step1_tutorial";
    char p11[32];
    snprintf(p11, sizeof p11, "p11_base_s%d", seed);
    if (run_state(p->out_dir, p11, want) == RUN_FINISHED) { snprintf(name, n, "%s", p11); return RUN_FINISHED; }
    snprintf(name, n, "%s_s%d", ours, seed);
    return run_state(p->out_dir, name, want);
}

// Seed k of the baseline, trained now or found finished, read into *out.
// 0, or 1 with a message.
static int baseline_seed(const BaselinePlan *p, int seed, RunMetrics *out) {
    TrainOptions o = baseline_options(p, seed);
    char name[64];
    RunState state = find_seed(p, seed, &o.cfg, name, sizeof name);
    if (state == RUN_OTHER) {
        fprintf(stderr, "error: %s/%s holds a run with another config than the %s baseline at seed %d;\n"
                        "move it away, or use --out to put the baseline elsewhere\n",
                p->out_dir, name, preset_name(p->preset), seed);
        return 1;
    }
    if (state == RUN_FINISHED) {
        printf("[%s] finished already: %s/%s/metrics.json\n", name, p->out_dir, name);
    } else {
        o.name = name;
        int rc = trainer_run(&o);
        if (rc == TRAIN_DIVERGED) {
            fprintf(stderr, "error: the baseline %s/%s diverged (see above)\n", p->out_dir, name);
            return 1;
        }
        if (rc != TRAIN_OK) {
            fprintf(stderr, "error: training %s/%s stopped (exit code %d); run the same command "
                            "again to continue it\n", p->out_dir, name, rc);
            return 1;
        }
    }
    char dir[2200], err[METRICS_ERRLEN];
    snprintf(dir, sizeof dir, "%s/%s", p->out_dir, name);
    if (metrics_read(dir, out, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return 1; }
    return 0;
}

static int baseline_runs(const BaselinePlan *p) {
    printf("Step 1: the baseline trained with seeds 0 to %d, at the %s preset\n", p->seeds - 1,
           preset_name(p->preset));
    RunMetrics *runs = calloc(STEP1_MAX_SEEDS, sizeof *runs);
    if (!runs) { fprintf(stderr, "error: out of memory\n"); return 1; }
    int n = 0;
    for (; n < p->seeds; n++)
        if (baseline_seed(p, n, &runs[n]) != 0) { free(runs); return 1; }
    // further seeds that someone trained (step 6's --seeds, or --seeds here
    // before): read them, train none
    for (; n < STEP1_MAX_SEEDS; n++) {
        TrainOptions o = baseline_options(p, n);
        char name[64];
        if (find_seed(p, n, &o.cfg, name, sizeof name) != RUN_FINISHED) break;
        printf("[%s] finished already: %s/%s/metrics.json\n", name, p->out_dir, name);
        char dir[2200], err[METRICS_ERRLEN];
        snprintf(dir, sizeof dir, "%s/%s", p->out_dir, name);
        if (metrics_read(dir, &runs[n], err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); free(runs); return 1; }
    }
    print_scorecard(runs, n);
    print_noise(runs, n);
    print_legend(runs, n);
    if (p->preset == PRESET_SMOKE)
        printf("\nnote: the smoke preset trains a %lld-parameter model for %d steps: its numbers show that\n"
               "the machinery works, they say nothing about the model. Use --preset quick or tutorial.\n",
               runs[0].params, runs[0].has_config ? runs[0].cfg.steps : 0);
    if (p->figures) step1_figures(runs, n, p->figures);
    free(runs);
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

static int existing_runs(char **paths, int n, const char *figures) {
    RunMetrics *runs = calloc((size_t)n, sizeof *runs), *group = calloc(STEP1_MAX_SEEDS, sizeof *group);
    if (!runs || !group) { free(runs); free(group); fprintf(stderr, "error: out of memory\n"); return 1; }
    for (int i = 0; i < n; i++) {
        char path[2048], err[METRICS_ERRLEN];
        resolve_run(paths[i], path, sizeof path);
        if (metrics_read(path, &runs[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            free(runs);
            free(group);
            return 1;
        }
    }
    print_scorecard(runs, n);
    int n_group;
    print_noise_of_groups(runs, n, group, &n_group);
    print_legend(runs, n);
    // the figures of the largest group of seeds, if there is one
    int rc = 0;
    if (figures && n_group >= 2 && step1_figures(group, n_group, figures) < 0) rc = 1;
    free(runs);
    free(group);
    return rc;
}

// ---------------------------------------------------------------------------
// No arguments: the committed seeds, and how to train your own.
static int committed_runs(const char *figures) {
    char dir[2048], *paths[STEP1_MAX_SEEDS];
    int n = 0;
    if (project_path(dir, sizeof dir, COMMITTED_RUNS) != 0) { fprintf(stderr, "error: path too long\n"); return 1; }
    for (int k = 0; k < STEP1_MAX_SEEDS; k++) {
        char run[2300];
        snprintf(run, sizeof run, "%s/p11_base_s%d/metrics.json", dir, k);
        if (!file_exists(run)) break;
        paths[n] = malloc(strlen(run) + 1);
        if (!paths[n]) break;
        snprintf(paths[n++], strlen(run) + 1, "%s/p11_base_s%d", dir, k);
    }
    int rc = 1;
    if (n < 2) {
        fprintf(stderr, "error: %s holds %d finished baseline seed(s) (p11_base_s0, _s1, ...); two are needed.\n"
                        "Train your own: ./step1_scorecard --preset quick\n", dir, n);
    } else {
        printf("Step 1: the scorecard of the project's %d committed baseline seeds (%s, quick preset)\n",
               n, COMMITTED_RUNS);
        rc = existing_runs(paths, n, figures);
        printf("\ntrain your own: ./step1_scorecard --preset quick   (two seeds, into runs/; at the quick\n"
               "preset each took 17 to 53 minutes on this project's shared 2-core machine,\n"
               "%s/README.md; --preset smoke trains two tiny ones in about 90 s)\n", COMMITTED_RUNS);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    return rc;
}

// ---------------------------------------------------------------------------
typedef struct {
    BaselinePlan plan;
    bool train;                 // --preset, --seeds, --threads or --out: train the baseline
    bool figures_given;
    bool preset_given;
    char **paths;
    int npaths;
} Step1Options;

// 0, 1 after --help, or 2 with a message and the usage on stderr.
static int parse_options(int argc, char **argv, Step1Options *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (is_help_option(a)) { usage(stdout); return 1; }
        else if (strcmp(a, "--preset") == 0 && has) {
            if (preset_parse(argv[++i], &o->plan.preset) != 0) {
                fprintf(stderr, "error: unknown preset '%s'\n\n", argv[i]);
                usage(stderr); return 2;
            }
            o->preset_given = o->train = true;
        }
        else if (strcmp(a, "--threads") == 0 && has) {
            o->train = true;
            if (parse_int_in(argv[++i], 0, 4096, &o->plan.threads) != 0) {
                fprintf(stderr, "error: --threads wants a whole number >= 0, not '%s'\n\n", argv[i]);
                usage(stderr); return 2;
            }
        }
        else if (strcmp(a, "--seeds") == 0 && has) {
            o->train = true;
            if (parse_int_in(argv[++i], 2, STEP1_MAX_SEEDS, &o->plan.seeds) != 0) {
                fprintf(stderr, "error: --seeds wants a whole number from 2 to %d, not '%s'\n\n", STEP1_MAX_SEEDS, argv[i]);
                usage(stderr); return 2;
            }
        }
        else if (strcmp(a, "--out") == 0 && has) { o->plan.out_dir = argv[++i]; o->train = true; }
        else if (strcmp(a, "--figures") == 0 && has) { o->plan.figures = argv[++i]; o->figures_given = true; }
        else if (strcmp(a, "--no-figures") == 0) o->plan.figures = NULL;
        else if (a[0] == '-') {
            fprintf(stderr, "error: unknown or incomplete option '%s'\n\n", a);
            usage(stderr); return 2;
        }
        else o->paths[o->npaths++] = argv[i];
    }
    if (o->npaths > 0 && o->preset_given) {
        fprintf(stderr, "error: --preset chooses the baseline runs to train; it does not go with run folders\n\n");
        usage(stderr); return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    Step1Options o = { { PRESET_QUICK, 2, 0, default_runs_dir(), figure_default_dir() }, false, false, false,
                       malloc(sizeof(char *) * (size_t)argc), 0 };
    if (!o.paths) { fprintf(stderr, "error: out of memory\n"); return 1; }
    int rc = parse_options(argc, argv, &o);
    if (rc == 0) {
        if (o.npaths > 0) rc = existing_runs(o.paths, o.npaths, o.plan.figures);
        else if (o.train) rc = baseline_runs(&o.plan);
        else rc = committed_runs(o.figures_given ? o.plan.figures : NULL);   // draws only if asked
    }
    else if (rc == 1) rc = 0;
    free(o.paths);
    return rc;
}
