// ablation.c: the nine runs of the tutorial's last section, each one `train`
// command, run one after the other or side by side.
//
// Why separate processes and not threads inside one program: a run is exactly
// what `step6_ablation train` does, so the ablation adds nothing a reader has
// to trust. A run that is killed keeps its checkpoint; starting the ablation
// again resumes it (train --resume), and a finished run is skipped (its
// metrics.json is there and its checkpoint has every step). The same commands
// can be printed (--print-commands) and handed to GNU parallel or xargs, on
// one machine or spread over several.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
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

// A whole number in [lo, hi] for option opt, or 2 with a message.
static int parse_count(const char *opt, const char *s, long lo, long hi, int *out) {
    if (parse_int_in(s, lo, hi, out) == 0) return 0;
    fprintf(stderr, "error: %s wants a whole number from %ld to %ld, not '%s'\n", opt, lo, hi, s);
    return 2;
}

int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode) {
    memset(p, 0, sizeof *p);
    p->preset = PRESET_QUICK;
    p->jobs = 1;
    p->seeds = 1;
    *mode = ABL_RUN;
    g_prepare_only = false;
    bool any_only = false, threads_given = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc, rc = 0;
        if (strcmp(a, "--preset") == 0 && has) {
            if (preset_parse(argv[++i], &p->preset) != 0) {
                fprintf(stderr, "error: unknown preset '%s'\n", argv[i]);
                preset_describe(stderr);
                return 2;
            }
        }
        else if (strcmp(a, "--jobs") == 0 && has) rc = parse_count("--jobs", argv[++i], 1, 4096, &p->jobs);
        else if (strcmp(a, "--seeds") == 0 && has) rc = parse_count("--seeds", argv[++i], 1, ABLATION_MAX_SEEDS, &p->seeds);
        else if (strcmp(a, "--threads") == 0 && has) {
            rc = parse_count("--threads", argv[++i], 1, 4096, &p->threads);
            threads_given = true;
        }
        else if (strcmp(a, "--out") == 0 && has) p->out_dir = argv[++i];
        else if (strcmp(a, "--exe") == 0 && has) p->exe = argv[++i];
        else if (strcmp(a, "--only") == 0 && has) rc = parse_only(argv[++i], p, &any_only);
        else if (strcmp(a, "--print-commands") == 0) *mode = ABL_PRINT_COMMANDS;
        else if (strcmp(a, "--list") == 0) *mode = ABL_LIST;
        else if (strcmp(a, "--log") == 0) p->log_to_file = true;
        else if (strcmp(a, "--prepare") == 0) g_prepare_only = true;
        else if (is_help_option(a)) { ablation_usage(stdout); exit(0); }
        else {
            fprintf(stderr, "error: unknown or incomplete option '%s'\n\n", a);
            ablation_usage(stderr);
            return 2;
        }
        if (rc) return rc;
    }
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

// ---------------------------------------------------------------------------
// Running

// The probe classifier is trained once and cached (common/eval/probe.h). Two runs
// started side by side on an empty cache would both train it, so the parent
// makes sure it is there before it starts any run.
static int prepare_probe(const AblationPlan *plan) {
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
    preset_probe_recipe(plan->preset, &recipe);
    Probe *p = probe_get_or_train(NULL, &train, &test, &recipe, 1, err, sizeof err);
    if (p) fprintf(stderr, "[ablation] probe classifier %s (test accuracy %.3f), cache %s\n", p->key,
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

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

// One run of the plan: configuration, seed, folder name, log (or "").
typedef struct { int config, seed; char name[64]; char log[2100]; } PlannedRun;
typedef struct { pid_t pid; const PlannedRun *run; double t0; bool was_finished; } Job;

// Starts a run in a child process. With a log its output goes there.
static pid_t launch(const AblationPlan *p, const PlannedRun *run) {
    char *argv[32], buf[4096];
    if (ablation_argv(p, run->config, run->seed, argv, 32, buf, sizeof buf) < 0) return -1;
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) return pid;
    // the child
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (run->log[0]) {
        int fd = open(run->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0) { fprintf(stderr, "error: cannot open %s: %s\n", run->log, strerror(errno)); _exit(1); }
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    execv(argv[0], argv);
    fprintf(stderr, "error: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static const char *exit_meaning(int code) {
    switch (code) {
    case TRAIN_ERROR: return "error";
    case TRAIN_USAGE: return "bad options";
    case TRAIN_DIVERGED: return "diverged";
    case TRAIN_STOPPED: return "stopped";
    case 127: return "cannot run the program";
    default: return code > 128 ? "stopped by a signal" : "failed";
    }
}

static void report_end(const AblationPlan *p, const Job *j, int status, int *failed) {
    const char *name = j->run->name, *log = j->run->log;
    double mins = (wall_seconds() - j->t0) / 60.0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0) {
        printf("[ablation] %s: exit %d (%s) after %.1f min%s%s\n", name, code, exit_meaning(code), mins,
               log[0] ? "; see " : "", log);
        (*failed)++;
        return;
    }
    char path[2048], err[METRICS_ERRLEN];
    RunMetrics m;
    snprintf(path, sizeof path, "%s/%s/metrics.json", runs_dir(p), name);
    if (metrics_read(path, &m, err, sizeof err) != 0)
        printf("[ablation] %s: done in %.1f min, but %s\n", name, mins, err);
    else if (j->was_finished)
        printf("[ablation] %s: finished already: val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d spikes\n",
               name, m.val_mse, m.probe_fd, m.ms_per_step, m.loss_spikes);
    else
        printf("[ablation] %s: done in %.1f min: val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d spikes\n",
               name, mins, m.val_mse, m.probe_fd, m.ms_per_step, m.loss_spikes);
}

// Prints the command of a run, makes its log's folder when it logs to a
// file, and starts it. 0, or -1 (counted as failed by the caller).
static int start_run(const AblationPlan *p, PlannedRun *run, Job *job) {
    char line[4096], err[1024];
    ablation_command_line(p, run->config, run->seed, line, sizeof line);
    printf("%s\n", line);
    run->log[0] = 0;
    if (p->jobs > 1 || p->log_to_file) {
        // side by side, the progress lines would interleave: each run
        // writes to its own log, appended across resumes
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/%s", runs_dir(p), run->name);
        if (make_dirs(dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
        snprintf(run->log, sizeof run->log, "%s/train.log", dir);
        printf("[ablation] %s: started, log %s\n", run->name, run->log);
    }
    bool was_finished = run_finished(p, run->name);
    pid_t pid = launch(p, run);
    if (pid < 0) { fprintf(stderr, "error: cannot start %s: %s\n", run->name, strerror(errno)); return -1; }
    *job = (Job){ pid, run, wall_seconds(), was_finished };
    return 0;
}

// Waits for one job to end (passing a stop signal on to the running ones).
// 1 when a job ended, 0 when interrupted (try again), -1 on an error.
static int wait_one(const AblationPlan *p, Job *jobs, int *running, int *stopped, int *failed) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
        if (errno != EINTR) { fprintf(stderr, "error: waitpid: %s\n", strerror(errno)); return -1; }
        if (g_stop && !*stopped) {
            // a terminal's Ctrl-C reaches the runs directly; a kill of
            // this process alone is passed on, so they save a checkpoint
            *stopped = 1;
            fprintf(stderr, "[ablation] stopping: the running runs save a checkpoint; "
                            "start the ablation again to resume\n");
            for (int j = 0; j < *running; j++) kill(jobs[j].pid, SIGTERM);
        }
        return 0;
    }
    for (int j = 0; j < *running; j++)
        if (jobs[j].pid == pid) {
            report_end(p, &jobs[j], status, failed);
            jobs[j] = jobs[--*running];
            break;
        }
    fflush(stdout);
    return 1;
}

// The selected runs, in the order they start (ablation_plan_runs).
static int plan_list(const AblationPlan *p, PlannedRun *runs, int *unfinished) {
    int config[ABLATION_CONFIGS * ABLATION_MAX_SEEDS], seed[ABLATION_CONFIGS * ABLATION_MAX_SEEDS];
    int n = ablation_plan_runs(p, config, seed, ABLATION_CONFIGS * ABLATION_MAX_SEEDS);
    *unfinished = 0;
    for (int i = 0; i < n; i++) {
        runs[i].config = config[i];
        runs[i].seed = seed[i];
        ablation_run_name(config[i], seed[i], runs[i].name, sizeof runs[i].name);
        *unfinished += !run_finished(p, runs[i].name);
    }
    return n;
}

static int run_plan(const AblationPlan *p) {
    PlannedRun *runs = calloc(ABLATION_CONFIGS * ABLATION_MAX_SEEDS, sizeof *runs);
    Job *jobs = calloc(ABLATION_CONFIGS * ABLATION_MAX_SEEDS, sizeof *jobs);
    if (!runs || !jobs) { free(runs); free(jobs); fprintf(stderr, "error: out of memory\n"); return 1; }
    int unfinished, n = plan_list(p, runs, &unfinished);
    char err[1024] = "";
    if (make_dirs(runs_dir(p), err, sizeof err) != 0 || (unfinished > 0 && prepare_probe(p) != 0)) {
        if (err[0]) fprintf(stderr, "error: %s\n", err);
        free(runs); free(jobs);
        return 1;
    }
    char per_run[48] = "";
    if (p->threads > 0) snprintf(per_run, sizeof per_run, ", %d thread%s each", p->threads, p->threads == 1 ? "" : "s");
    printf("[ablation] %d run%s, %s preset, %d at a time%s, into %s\n", n, n == 1 ? "" : "s",
           preset_name(p->preset), p->jobs, per_run, runs_dir(p));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;          // no SA_RESTART: waitpid returns on a signal
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    g_stop = 0;

    int running = 0, next = 0, failed = 0, stopped = 0;
    double t_start = wall_seconds();
    while (next < n || running > 0) {
        while (!g_stop && running < p->jobs && next < n)
            if (start_run(p, &runs[next++], &jobs[running]) == 0) running++;
            else failed++;
        if (running == 0 || wait_one(p, jobs, &running, &stopped, &failed) < 0) break;
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int not_started = n - next;
    printf("[ablation] %d of %d runs ended well in %.1f min", n - failed - not_started, n,
           (wall_seconds() - t_start) / 60.0);
    if (failed) printf(", %d did not", failed);
    if (not_started) printf(", %d not started", not_started);
    printf(". The table: step6_ablation table%s%s\n", p->out_dir ? " " : "", p->out_dir ? p->out_dir : "");
    free(runs);
    free(jobs);
    if (g_stop) return 128 + (int)g_stop;
    return failed || not_started ? 1 : 0;
}

int cmd_ablation(int argc, char **argv, const char *self) {
    AblationPlan p;
    AblationMode mode;
    int rc = ablation_parse(argc, argv, &p, &mode);
    if (rc) return rc;
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
        int config[ABLATION_CONFIGS * ABLATION_MAX_SEEDS], seed[ABLATION_CONFIGS * ABLATION_MAX_SEEDS];
        int n = ablation_plan_runs(&p, config, seed, ABLATION_CONFIGS * ABLATION_MAX_SEEDS);
        for (int i = 0; i < n; i++) {
            char line[4096];
            if (mode == ABL_LIST) ablation_run_name(config[i], seed[i], line, sizeof line);
            else ablation_command_line(&p, config[i], seed[i], line, sizeof line);
            printf("%s\n", line);
        }
        return 0;
    }
    if (g_prepare_only) return prepare_probe(&p) == 0 ? 0 : 1;
    return run_plan(&p);
}
