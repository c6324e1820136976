// runs.c: where step 1's runs come from. The baseline's seeds, trained now,
// continued, or found finished (step 1's own or step 6's); the folders given
// on the command line; the project's committed seeds. The printing of what
// they hold is main.c's.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step1.h"
#include "io/checkpoint.h"
#include "io/fileio.h"
#include "io/paths.h"

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

// The train options of the baseline at one seed: the preset's config,
// nothing switched on.
static TrainOptions baseline_options(const BaselinePlan *p, int seed) {
    TrainOptions o;
    memset(&o, 0, sizeof o);
    preset_apply(p->preset, &o.cfg, &o.ckpt_every);
    o.cfg.run.seed = (unsigned long long)seed;
    o.cfg.run.threads = p->threads;
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

// Reads the finished run DIR/NAME into *out. 0, or 1 with a message.
static int read_finished(const BaselinePlan *p, const char *name, RunMetrics *out) {
    char dir[2200], err[METRICS_ERRLEN];
    snprintf(dir, sizeof dir, "%s/%s", p->out_dir, name);
    if (metrics_read(dir, out, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return 1; }
    return 0;
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
    return read_finished(p, name, out);
}

int step1_baseline_seeds(const BaselinePlan *p, RunMetrics *runs) {
    int n = 0;
    for (; n < p->seeds; n++)
        if (baseline_seed(p, n, &runs[n]) != 0) return -1;
    // further seeds that someone trained (step 6's --seeds, or --seeds here
    // before): read them, train none
    for (; n < STEP1_MAX_SEEDS; n++) {
        TrainOptions o = baseline_options(p, n);
        char name[64];
        if (find_seed(p, n, &o.cfg, name, sizeof name) != RUN_FINISHED) break;
        printf("[%s] finished already: %s/%s/metrics.json\n", name, p->out_dir, name);
        if (read_finished(p, name, &runs[n]) != 0) return -1;
    }
    return n;
}

// A relative path that is not found from here is also tried from the
// project root and inside its runs/ folder, so `runs/p11_rope` and
// `p11_rope` work from a step folder too.
void step1_resolve_run(const char *arg, char *out, size_t n) {
    snprintf(out, n, "%s", arg);
    if (file_exists(arg) || arg[0] == '/') return;
    const char *roots[2] = { project_root(), default_runs_dir() };
    for (int i = 0; i < 2; i++) {
        char p[2048];
        if (snprintf(p, sizeof p, "%s/%s", roots[i], arg) >= (int)sizeof p) continue;
        if (file_exists(p)) { snprintf(out, n, "%s", p); return; }
    }
}

int step1_committed_seeds(char *dir, size_t dirlen, char **paths) {
    int n = 0;
    if (project_path(dir, dirlen, COMMITTED_RUNS) != 0) { fprintf(stderr, "error: path too long\n"); return -1; }
    for (int k = 0; k < STEP1_MAX_SEEDS; k++) {
        char run[2300];
        snprintf(run, sizeof run, "%s/p11_base_s%d/metrics.json", dir, k);
        if (!file_exists(run)) break;
        paths[n] = malloc(strlen(run) + 1);
        if (!paths[n]) break;
        snprintf(paths[n++], strlen(run) + 1, "%s/p11_base_s%d", dir, k);
    }
    return n;
}
