// ablation.c: the nine runs of the tutorial's last section, each one `train`
// command, run one after the other or side by side (by xargs -P, runner.c).
//
// Why separate processes and not threads inside one program: a run is exactly
// what `step6_ablation train` does, so the ablation adds nothing a reader has
// to trust. A run that is killed keeps its checkpoint; starting the ablation
// again resumes it (train --resume), and a finished run is skipped (its
// metrics.json is there and its checkpoint has every step). The same commands
// can be printed (--print-commands) and handed to GNU parallel or xargs, on
// one machine or spread over several.
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include "ablation.h"
#include "io/cifar.h"
#include "io/args.h"
#include "io/fileio.h"
#include "io/paths.h"
#include "eval/probe.h"
#include "io/progress.h"

// The order is the table's order. Every configuration differs from the
// baseline in its own switches; the baseline's seeds differ only in the seed,
// and their spread is the yardstick for every other row.
const AblationConfig ABLATION_CONFIG[ABLATION_CONFIGS] = {
    { "p11_base",         "baseline",          { NULL } },
    { "p11_rmsnorm",      "+ RMSNorm",         { "norm=rmsnorm", NULL } },
    { "p11_qknorm",       "+ QK-norm",         { "qk_norm=true", NULL } },
    { "p11_swiglu",       "+ SwiGLU",          { "mlp=swiglu", NULL } },
    { "p11_rope",         "+ 2D RoPE",         { "pos=rope2d", NULL } },
    { "p11_all",          "all four",          { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL } },
    { "p11_base_lr2e3",   "baseline, lr 2e-3", { "lr=2e-3", NULL } },
    { "p11_qknorm_lr2e3", "+ QK-norm, lr 2e-3",{ "qk_norm=true", "lr=2e-3", NULL } },
};

const AblationRun ABLATION[ABLATION_RUNS] = {
    { "p11_base_s0",      "baseline (seed 0)",  CFG_BASE, 0 },
    { "p11_base_s1",      "baseline (seed 1)",  CFG_BASE, 1 },
    { "p11_rmsnorm",      "+ RMSNorm",          CFG_RMSNORM, 0 },
    { "p11_qknorm",       "+ QK-norm",          CFG_QKNORM, 0 },
    { "p11_swiglu",       "+ SwiGLU",           CFG_SWIGLU, 0 },
    { "p11_rope",         "+ 2D RoPE",          CFG_ROPE, 0 },
    { "p11_all",          "all four",           CFG_ALL, 0 },
    { "p11_base_lr2e3",   "baseline, lr 2e-3",  CFG_BASE_LR2E3, 0 },
    { "p11_qknorm_lr2e3", "+ QK-norm, lr 2e-3", CFG_QKNORM_LR2E3, 0 },
};

int ablation_index(const char *name) {
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (strcmp(ABLATION[r].name, name) == 0) return r;
    return -1;
}

void ablation_run_name(int config, int seed, char *out, size_t outlen) {
    if (config == CFG_BASE || seed > 0) snprintf(out, outlen, "%s_s%d", ABLATION_CONFIG[config].name, seed);
    else snprintf(out, outlen, "%s", ABLATION_CONFIG[config].name);
}

int ablation_run_parse(const char *name, int *config, int *seed) {
    // by construction every name is made by ablation_run_name: try them all
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            char n[64];
            ablation_run_name(c, k, n, sizeof n);
            if (strcmp(n, name) == 0) { *config = c; *seed = k; return 0; }
        }
    return -1;
}

int ablation_config_seeds(int config, int n) {
    return config == CFG_BASE && n < 2 ? 2 : n;
}

// The round in which a run starts: the tutorial's nine are round 0 (with the
// baseline's seed 1), then round k holds every configuration's seed k.
static int start_round(int config, int seed) { return config == CFG_BASE && seed == 1 ? 0 : seed; }

int ablation_plan_runs(const AblationPlan *p, int *config, int *seed, int cap) {
    int n = 0;
    for (int round = 0; round < ABLATION_MAX_SEEDS; round++)
        for (int c = 0; c < ABLATION_CONFIGS; c++)
            for (int k = 0; k < ABLATION_MAX_SEEDS; k++)
                if (p->selected[c][k] && start_round(c, k) == round && n < cap) {
                    config[n] = c;
                    seed[n] = k;
                    n++;
                }
    return n;
}

// ---------------------------------------------------------------------------
// Commands
void shell_quote(const char *s, char *out, size_t outlen) {
    // Letters, digits and a few punctuation marks are safe as they are; any
    // other string goes in single quotes, with ' written as '\''.
    int plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%", *c))
            plain = 0;
    if (plain) { snprintf(out, outlen, "%s", s); return; }
    size_t n = 0;
    if (outlen == 0) return;
#define PUT(ch) do { if (n + 1 < outlen) out[n++] = (ch); } while (0)
    PUT('\'');
    for (const char *c = s; *c; c++) {
        if (*c == '\'') { PUT('\''); PUT('\\'); PUT('\''); PUT('\''); }
        else PUT(*c);
    }
    PUT('\'');
#undef PUT
    out[n] = 0;
}

int ablation_argv(const AblationPlan *p, int config, int seed, char **argv, int cap, char *buf, size_t buflen) {
    const AblationConfig *cf = &ABLATION_CONFIG[config];
    char name[64], seed_set[32];
    ablation_run_name(config, seed, name, sizeof name);
    snprintf(seed_set, sizeof seed_set, "seed=%d", seed);
    int n = 0;
    size_t used = 0;
    // every string is copied into buf, so the argv outlives nothing it points to
#define ARG(s) do { \
        size_t len_ = strlen(s) + 1; \
        if (n + 1 >= cap || used + len_ > buflen) return -1; \
        memcpy(buf + used, (s), len_); argv[n++] = buf + used; used += len_; \
    } while (0)
    ARG(p->exe);
    ARG("train");
    ARG("--name"); ARG(name);
    ARG("--preset"); ARG(preset_name(p->preset));
    ARG("--resume");   // continues an interrupted run, and does nothing for a finished one
    if (p->out_dir) { ARG("--out"); ARG(p->out_dir); }
    // the seed: always for the baseline (its runs are its seeds), else from
    // seed 1 on (seed 0 is the config's default, as in the tutorial's runs)
    if (config == CFG_BASE) { ARG("--set"); ARG(seed_set); }
    for (int i = 0; cf->sets[i]; i++) { ARG("--set"); ARG(cf->sets[i]); }
    if (config != CFG_BASE && seed > 0) { ARG("--set"); ARG(seed_set); }
    if (p->threads > 0) {
        char t[32];
        snprintf(t, sizeof t, "threads=%d", p->threads);
        ARG("--set"); ARG(t);
    }
#undef ARG
    argv[n] = NULL;
    return n;
}

void ablation_command_line(const AblationPlan *p, int config, int seed, char *out, size_t outlen) {
    char *argv[32], buf[4096], q[2048];
    int n = ablation_argv(p, config, seed, argv, 32, buf, sizeof buf);
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n && len < outlen; i++) {
        shell_quote(argv[i], q, sizeof q);
        len += snprintf(out + len, outlen - len, "%s%s", i ? " " : "", q);
    }
}

// ---------------------------------------------------------------------------
// Options
static void ablation_usage(FILE *f) {
    fprintf(f,
        "usage: step6_ablation ablation [--preset smoke|quick|tutorial] [--seeds N] [--jobs N]\n"
        "                               [--threads T] [--out DIR] [--only NAME,...]\n"
        "                               [--print-commands | --list] [--log] [--prepare] [--exe PATH]\n"
        "\n"
        "  every configuration with N seeds, each run one `train --resume` command:\n"
        "  finished runs are skipped, interrupted ones continue from their checkpoint\n"
        "\n"
        "  --preset P        smoke | quick | tutorial (default quick)\n"
        "  --seeds N         seeds per configuration (default 1: the tutorial's nine runs;\n"
        "                    the baseline always gets at least 2). Seed k of the baseline\n"
        "                    is p11_base_s<k>; of the others NAME (k = 0) and NAME_s<k>\n"
        "  --jobs N          runs side by side (default 1); each run's output then goes\n"
        "                    to DIR/NAME/train.log\n"
        "  --threads T       threads per run (default: the cores divided by N when N > 1,\n"
        "                    else the run's own default, all cores)\n"
        "  --out DIR         the runs' folder (default: the project's runs/)\n"
        "  --only A,B        just these runs (any seed's name, e.g. p11_rope_s2)\n"
        "  --log             each run's output to DIR/NAME/train.log, also with --jobs 1\n"
        "  --print-commands  print the train commands, one a line, and run nothing\n"
        "                    (for GNU parallel / xargs; see docs/step6_ablation.md)\n"
        "  --list            print the run names, one a line\n"
        "  --prepare         make sure the probe classifier is cached, then stop\n"
        "  --exe PATH        the program the commands call (default: this one)\n"
        "\n"
        "configurations (seed 0's name):\n");
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        char name[64];
        ablation_run_name(c, 0, name, sizeof name);
        fprintf(f, "  %-18s %-20s", name, ABLATION_CONFIG[c].label);
        for (int i = 0; ABLATION_CONFIG[c].sets[i]; i++) fprintf(f, " --set %s", ABLATION_CONFIG[c].sets[i]);
        fprintf(f, "\n");
    }
}

static bool g_prepare_only;

// --only A,B,...: marks the named runs. 0, or 2 with a message.
static int parse_only(const char *arg, AblationPlan *p, bool *any_only) {
    char list[1024];
    snprintf(list, sizeof list, "%s", arg);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int c, k;
        if (ablation_run_parse(name, &c, &k) != 0) {
            fprintf(stderr, "error: --only: no run named '%s'; the runs are", name);
            for (int r = 0; r < ABLATION_CONFIGS; r++) {
                char n0[64];
                ablation_run_name(r, 0, n0, sizeof n0);
                fprintf(stderr, "%s %s", r ? "," : "", n0);
            }
            fprintf(stderr, " and their seeds NAME_s1, NAME_s2, ... (the baseline: p11_base_s0, _s1, ...)\n");
            return 2;
        }
        p->selected[c][k] = true;
        *any_only = true;
    }
    if (!*any_only) { fprintf(stderr, "error: --only wants run names\n"); return 2; }
    return 0;
}

// A whole number in [lo, hi] for option opt, or ARGS_BAD with a message.
static int parse_count(const char *opt, const char *s, long lo, long hi, int *out) {
    if (parse_int_in(s, lo, hi, out) == 0) return ARGS_OK;
    return args_error(NULL, "%s wants a whole number from %ld to %ld, not '%s'", opt, lo, hi, s);
}

static void presets_usage(FILE *f) { preset_describe(f); }

// The getopt_long loop of ablation_parse (argv[0] is the command's name).
static int parse_ablation_options(int argc, char **argv, AblationPlan *p, AblationMode *mode) {
    static const struct option opts[] = {
        { "preset", required_argument, 0, 'P' }, { "jobs", required_argument, 0, 'j' },
        { "seeds", required_argument, 0, 's' },  { "threads", required_argument, 0, 't' },
        { "out", required_argument, 0, 'o' },    { "exe", required_argument, 0, 'e' },
        { "only", required_argument, 0, 'O' },   { "print-commands", no_argument, 0, 'c' },
        { "list", no_argument, 0, 'L' },         { "log", no_argument, 0, 'l' },
        { "prepare", no_argument, 0, 'r' },      { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    memset(p, 0, sizeof *p);
    p->preset = PRESET_QUICK;
    p->jobs = 1;
    p->seeds = 1;
    *mode = ABL_RUN;
    g_prepare_only = false;
    bool any_only = false, threads_given = false;
    optind = 0;
    opterr = 0;
    int c, rc = ARGS_OK;
    while (rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'P':
            if (preset_parse(optarg, &p->preset) != 0) rc = args_error(presets_usage, "unknown preset '%s'", optarg);
            break;
        case 'j': rc = parse_count("--jobs", optarg, 1, 4096, &p->jobs); break;
        case 's': rc = parse_count("--seeds", optarg, 1, ABLATION_MAX_SEEDS, &p->seeds); break;
        case 't': rc = parse_count("--threads", optarg, 1, 4096, &p->threads); threads_given = true; break;
        case 'o': p->out_dir = optarg; break;
        case 'e': p->exe = optarg; break;
        case 'O': rc = parse_only(optarg, p, &any_only); break;
        case 'c': *mode = ABL_PRINT_COMMANDS; break;
        case 'L': *mode = ABL_LIST; break;
        case 'l': p->log_to_file = true; break;
        case 'r': g_prepare_only = true; break;
        case 'h': ablation_usage(stdout); return ARGS_HELP;
        default: rc = args_unknown(ablation_usage, argv);
        }
    }
    if (rc != ARGS_OK) return rc;
    if (optind < argc) return args_error(ablation_usage, "unknown or incomplete option '%s'", argv[optind]);
    if (!any_only)
        for (int c = 0; c < ABLATION_CONFIGS; c++)
            for (int k = 0; k < ablation_config_seeds(c, p->seeds); k++) p->selected[c][k] = true;
    // Two runs on two cores with two threads each would fight over the
    // cores (and OpenMP threads spin while they wait): split them instead.
    // Printed commands keep the run's default unless --threads says otherwise,
    // because the machine that runs them decides.
    if (!threads_given && p->jobs > 1 && *mode == ABL_RUN) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->threads = cores / p->jobs > 1 ? (int)(cores / p->jobs) : 1;
    }
    return 0;
}

int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode) {
    // getopt_long reads from argv[1]: the command's name goes in front
    char **args = malloc(sizeof *args * (size_t)(argc + 2));
    if (!args) { fprintf(stderr, "error: out of memory\n"); return 1; }
    args[0] = "ablation";
    memcpy(args + 1, argv, sizeof *args * (size_t)argc);
    args[argc + 1] = NULL;
    int rc = parse_ablation_options(argc + 1, args, p, mode);
    free(args);
    return rc;
}

// ---------------------------------------------------------------------------
// Running

// See ablation.h: the probe trained once, before any run starts.
int prepare_probe(Preset preset) {
    char err[1024];
    CifarSet train, test;
    if (cifar_load_train(NULL, &train, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return -1;
    }
    if (cifar_load_test(NULL, &test, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        cifar_free(&train);
        return -1;
    }
    ProbeRecipe recipe;
    preset_probe_recipe(preset, &recipe);
    Probe *p = probe_get_or_train(NULL, &train, &test, &recipe, 1, err, sizeof err);
    if (p) fprintf(stderr, "[runs] probe classifier %s (test accuracy %.3f), cache %s\n", p->key,
                   p->test_acc, probe_cache_dir());
    else fprintf(stderr, "error: probe: %s\n", err);
    probe_free(p);
    cifar_free(&train);
    cifar_free(&test);
    return p ? 0 : -1;
}

static const char *runs_dir(const AblationPlan *p) { return p->out_dir ? p->out_dir : default_runs_dir(); }

static bool run_finished(const AblationPlan *p, const char *name) {
    // only a hint for the messages and for skipping the probe; whether a run
    // is complete is decided by `train --resume` itself
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/metrics.json", runs_dir(p), name);
    return file_exists(path);
}

// A run's line for the runner: its train command, with the output appended
// to DIR/NAME/train.log when runs go side by side (their progress lines would
// interleave) or --log asks. 0, or -1 with a message.
static int run_line(const AblationPlan *p, int config, int seed, char *line, size_t len) {
    char name[64], dir[2048], log[2100], quoted[4300], err[1024];
    ablation_command_line(p, config, seed, line, len);
    if (p->jobs == 1 && !p->log_to_file) return 0;
    ablation_run_name(config, seed, name, sizeof name);
    snprintf(dir, sizeof dir, "%s/%s", runs_dir(p), name);
    if (make_dirs(dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    snprintf(log, sizeof log, "%s/train.log", dir);
    shell_quote(log, quoted, sizeof quoted);
    size_t used = strlen(line);
    snprintf(line + used, len - used, " >> %s 2>&1", quoted);
    return 0;
}

// What each run's folder says now. Returns how many ended well.
static int report_runs(const AblationPlan *p, const int *config, const int *seed, const bool *was_finished,
                       int n) {
    int well = 0;
    for (int i = 0; i < n; i++) {
        char name[64];
        RunMetrics m;
        int at;
        ablation_run_name(config[i], seed[i], name, sizeof name);
        switch (run_outcome(runs_dir(p), name, &m, &at)) {
        case RUN_FINISHED:
            printf("[ablation] %s: %s: val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d spikes\n", name,
                   was_finished[i] ? "finished already" : "done", m.val_mse, m.probe_fd, m.ms_per_step,
                   m.loss_spikes);
            well++;
            break;
        case RUN_DIVERGED:
            printf("[ablation] %s: diverged at step %d (%s/%s/diverged.json)\n", name, at, runs_dir(p), name);
            break;
        case RUN_UNFINISHED:
            printf("[ablation] %s: not finished (%s/%s/train.log, if it logged there)\n", name, runs_dir(p), name);
            break;
        }
    }
    return well;
}

#define PLAN_CAP (ABLATION_CONFIGS * ABLATION_MAX_SEEDS)

static int run_plan(const AblationPlan *p) {
    int config[PLAN_CAP], seed[PLAN_CAP];
    bool was_finished[PLAN_CAP];
    int n = ablation_plan_runs(p, config, seed, PLAN_CAP), unfinished = 0;
    char **lines = calloc((size_t)n + 1, sizeof *lines);
    char err[1024] = "";
    int rc = lines ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        char name[64];
        ablation_run_name(config[i], seed[i], name, sizeof name);
        was_finished[i] = run_finished(p, name);
        unfinished += !was_finished[i];
        lines[i] = malloc(8192);
        rc = lines[i] ? run_line(p, config[i], seed[i], lines[i], 8192) : -1;
    }
    if (rc == 0 && make_dirs(runs_dir(p), err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); rc = -1; }
    if (rc == 0 && unfinished > 0 && prepare_probe(p->preset) != 0) rc = -1;
    if (rc == 0) {
        char per_run[48] = "";
        if (p->threads > 0) snprintf(per_run, sizeof per_run, ", %d thread%s each", p->threads, p->threads == 1 ? "" : "s");
        printf("[ablation] %d run%s, %s preset, %d at a time%s (xargs -P %d), into %s\n", n, n == 1 ? "" : "s",
               preset_name(p->preset), p->jobs, per_run, p->jobs, runs_dir(p));
        for (int i = 0; i < n; i++) printf("%s\n", lines[i]);
        double t_start = wall_seconds();
        int stop_signal;
        run_lines(lines, n, p->jobs, &stop_signal);
        int well = report_runs(p, config, seed, was_finished, n);
        printf("[ablation] %d of %d runs ended well in %.1f min", well, n, (wall_seconds() - t_start) / 60.0);
        if (well < n) printf(", %d did not", n - well);
        printf(". The table: step6_ablation table%s%s\n", p->out_dir ? " " : "", p->out_dir ? p->out_dir : "");
        rc = stop_signal ? 128 + stop_signal : well < n ? 1 : 0;
    } else {
        rc = 1;
    }
    for (int i = 0; lines && i < n; i++) free(lines[i]);
    free(lines);
    return rc;
}

int cmd_ablation(int argc, char **argv, const char *self) {
    AblationPlan p;
    AblationMode mode;
    int rc = ablation_parse(argc, argv, &p, &mode);
    if (rc != ARGS_OK) return args_exit_code(rc);
    // Call ourselves by an absolute path, so the commands work from any
    // folder (and on another machine where the project sits at the same place).
    static char exe[PATH_MAX];
    if (!p.exe) {
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len > 0) { exe[len] = 0; p.exe = exe; }
        else if (realpath(self, exe)) p.exe = exe;
        else p.exe = self;
    }
    if (mode == ABL_LIST || mode == ABL_PRINT_COMMANDS) {
        int config[PLAN_CAP], seed[PLAN_CAP];
        int n = ablation_plan_runs(&p, config, seed, PLAN_CAP);
        for (int i = 0; i < n; i++) {
            char line[4096];
            if (mode == ABL_LIST) ablation_run_name(config[i], seed[i], line, sizeof line);
            else ablation_command_line(&p, config[i], seed[i], line, sizeof line);
            printf("%s\n", line);
        }
        return 0;
    }
    if (g_prepare_only) return prepare_probe(p.preset) == 0 ? 0 : 1;
    return run_plan(&p);
}
