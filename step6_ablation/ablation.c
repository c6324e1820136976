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
#include "io/fileio.h"
#include "io/paths.h"
#include "eval/probe.h"
#include "io/progress.h"

// The order is the table's order. The two baselines differ only in the seed;
// the seed gap between them is the yardstick for every other row.
const AblationRun ABLATION[ABLATION_RUNS] = {
    { "p11_base_s0",      "baseline (seed 0)", { "seed=0", NULL } },
    { "p11_base_s1",      "baseline (seed 1)", { "seed=1", NULL } },
    { "p11_rmsnorm",      "+ RMSNorm",         { "norm=rmsnorm", NULL } },
    { "p11_qknorm",       "+ QK-norm",         { "qk_norm=true", NULL } },
    { "p11_swiglu",       "+ SwiGLU",          { "mlp=swiglu", NULL } },
    { "p11_rope",         "+ 2D RoPE",         { "pos=rope2d", NULL } },
    { "p11_all",          "all four",          { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL } },
    { "p11_base_lr2e3",   "baseline, lr 2e-3", { "lr=2e-3", NULL } },
    { "p11_qknorm_lr2e3", "+ QK-norm, lr 2e-3",{ "qk_norm=true", "lr=2e-3", NULL } },
};

int ablation_index(const char *name) {
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (strcmp(ABLATION[r].name, name) == 0) return r;
    return -1;
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

int ablation_argv(const AblationPlan *p, int r, char **argv, int cap, char *buf, size_t buflen) {
    const AblationRun *run = &ABLATION[r];
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
    ARG("--name"); ARG(run->name);
    ARG("--preset"); ARG(preset_name(p->preset));
    ARG("--resume");   // continues an interrupted run, and does nothing for a finished one
    if (p->out_dir) { ARG("--out"); ARG(p->out_dir); }
    for (int i = 0; run->sets[i]; i++) { ARG("--set"); ARG(run->sets[i]); }
    if (p->threads > 0) {
        char t[32];
        snprintf(t, sizeof t, "threads=%d", p->threads);
        ARG("--set"); ARG(t);
    }
#undef ARG
    argv[n] = NULL;
    return n;
}

void ablation_command_line(const AblationPlan *p, int r, char *out, size_t outlen) {
    char *argv[32], buf[4096], q[2048];
    int n = ablation_argv(p, r, argv, 32, buf, sizeof buf);
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
        "usage: step6_ablation ablation [--preset smoke|quick|tutorial] [--jobs N] [--threads T]\n"
        "                               [--out DIR] [--only NAME,...] [--print-commands | --list]\n"
        "                               [--log] [--prepare] [--exe PATH]\n"
        "\n"
        "  the nine runs, each one `train --resume` command: finished runs are skipped,\n"
        "  interrupted ones continue from their checkpoint\n"
        "\n"
        "  --preset P        smoke | quick | tutorial (default quick)\n"
        "  --jobs N          runs side by side (default 1); each run's output then goes\n"
        "                    to DIR/NAME/train.log\n"
        "  --threads T       threads per run (default: the cores divided by N when N > 1,\n"
        "                    else the run's own default, all cores)\n"
        "  --out DIR         the runs' folder (default: the project's runs/)\n"
        "  --only A,B        just these runs\n"
        "  --log             each run's output to DIR/NAME/train.log, also with --jobs 1\n"
        "  --print-commands  print the train commands, one a line, and run nothing\n"
        "                    (for GNU parallel / xargs; see docs/step6_ablation.md)\n"
        "  --list            print the run names, one a line\n"
        "  --prepare         make sure the probe classifier is cached, then stop\n"
        "  --exe PATH        the program the commands call (default: this one)\n"
        "\n"
        "runs:\n");
    for (int r = 0; r < ABLATION_RUNS; r++) {
        fprintf(f, "  %-18s %-20s", ABLATION[r].name, ABLATION[r].label);
        for (int i = 0; ABLATION[r].sets[i]; i++) fprintf(f, " --set %s", ABLATION[r].sets[i]);
        fprintf(f, "\n");
    }
}

static int parse_positive(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < 1 || v > 4096) return -1;
    *out = (int)v;
    return 0;
}

static bool g_prepare_only;

int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode) {
    memset(p, 0, sizeof *p);
    p->preset = PRESET_QUICK;
    p->jobs = 1;
    *mode = ABL_RUN;
    g_prepare_only = false;
    bool any_only = false, threads_given = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--preset") == 0 && has) {
            if (preset_parse(argv[++i], &p->preset) != 0) {
                fprintf(stderr, "error: unknown preset '%s'\n", argv[i]);
                preset_describe(stderr);
                return 2;
            }
        } else if (strcmp(a, "--jobs") == 0 && has) {
            if (parse_positive(argv[++i], &p->jobs) != 0) {
                fprintf(stderr, "error: --jobs wants a whole number >= 1, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--threads") == 0 && has) {
            if (parse_positive(argv[++i], &p->threads) != 0) {
                fprintf(stderr, "error: --threads wants a whole number >= 1, not '%s'\n", argv[i]);
                return 2;
            }
            threads_given = true;
        } else if (strcmp(a, "--out") == 0 && has) {
            p->out_dir = argv[++i];
        } else if (strcmp(a, "--exe") == 0 && has) {
            p->exe = argv[++i];
        } else if (strcmp(a, "--only") == 0 && has) {
            // a comma-separated list of names
            char list[1024];
            snprintf(list, sizeof list, "%s", argv[++i]);
            char *save = NULL;
            for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
                int r = ablation_index(name);
                if (r < 0) {
                    fprintf(stderr, "error: --only: no run named '%s'; the runs are:", name);
                    for (int k = 0; k < ABLATION_RUNS; k++) fprintf(stderr, " %s", ABLATION[k].name);
                    fprintf(stderr, "\n");
                    return 2;
                }
                p->selected[r] = true;
                any_only = true;
            }
            if (!any_only) { fprintf(stderr, "error: --only wants run names\n"); return 2; }
        } else if (strcmp(a, "--print-commands") == 0) {
            *mode = ABL_PRINT_COMMANDS;
        } else if (strcmp(a, "--list") == 0) {
            *mode = ABL_LIST;
        } else if (strcmp(a, "--log") == 0) {
            p->log_to_file = true;
        } else if (strcmp(a, "--prepare") == 0) {
            g_prepare_only = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            ablation_usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "error: unknown or incomplete option '%s'\n\n", a);
            ablation_usage(stderr);
            return 2;
        }
    }
    if (!any_only)
        for (int r = 0; r < ABLATION_RUNS; r++) p->selected[r] = true;
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

static bool run_finished(const AblationPlan *p, int r) {
    // only a hint for the messages and for skipping the probe; whether a run
    // is complete is decided by `train --resume` itself
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/metrics.json", runs_dir(p), ABLATION[r].name);
    return file_exists(path);
}

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

typedef struct { pid_t pid; int run; double t0; bool was_finished; } Job;

// Starts run r in a child process. With log != NULL its output goes there.
static pid_t launch(const AblationPlan *p, int r, const char *log) {
    char *argv[32], buf[4096];
    if (ablation_argv(p, r, argv, 32, buf, sizeof buf) < 0) return -1;
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) return pid;
    // the child
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (log) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0) { fprintf(stderr, "error: cannot open %s: %s\n", log, strerror(errno)); _exit(1); }
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

static void report_end(const AblationPlan *p, const Job *j, int status, const char *log, int *failed) {
    const char *name = ABLATION[j->run].name;
    double mins = (wall_seconds() - j->t0) / 60.0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0) {
        printf("[ablation] %s: exit %d (%s) after %.1f min%s%s\n", name, code, exit_meaning(code), mins,
               log ? "; see " : "", log ? log : "");
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

static int run_plan(const AblationPlan *p) {
    int todo[ABLATION_RUNS], n = 0, unfinished = 0;
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (p->selected[r]) { todo[n++] = r; unfinished += !run_finished(p, r); }
    char err[1024];
    if (make_dirs(runs_dir(p), err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return 1; }
    if (unfinished > 0 && prepare_probe(p) != 0) return 1;

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

    Job jobs[ABLATION_RUNS];
    int running = 0, next = 0, failed = 0, stopped = 0;
    char logs[ABLATION_RUNS][2100];
    double t_start = wall_seconds();
    while (next < n || running > 0) {
        while (!g_stop && running < p->jobs && next < n) {
            int r = todo[next++];
            char line[4096];
            ablation_command_line(p, r, line, sizeof line);
            printf("%s\n", line);
            const char *log = NULL;
            if (p->jobs > 1 || p->log_to_file) {
                // side by side, the progress lines would interleave: each run
                // writes to its own log, appended across resumes
                char dir[2048];
                snprintf(dir, sizeof dir, "%s/%s", runs_dir(p), ABLATION[r].name);
                if (make_dirs(dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); failed++; continue; }
                snprintf(logs[r], sizeof logs[r], "%s/train.log", dir);
                log = logs[r];
                printf("[ablation] %s: started, log %s\n", ABLATION[r].name, log);
            }
            bool was_finished = run_finished(p, r);
            pid_t pid = launch(p, r, log);
            if (pid < 0) { fprintf(stderr, "error: cannot start %s: %s\n", ABLATION[r].name, strerror(errno)); failed++; continue; }
            jobs[running++] = (Job){ pid, r, wall_seconds(), was_finished };
        }
        if (running == 0) break;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) {
                if (g_stop && !stopped) {
                    // a terminal's Ctrl-C reaches the runs directly; a kill of
                    // this process alone is passed on, so they save a checkpoint
                    stopped = 1;
                    fprintf(stderr, "[ablation] stopping: the running runs save a checkpoint; "
                                    "start the ablation again to resume\n");
                    for (int j = 0; j < running; j++) kill(jobs[j].pid, SIGTERM);
                }
                continue;
            }
            fprintf(stderr, "error: waitpid: %s\n", strerror(errno));
            break;
        }
        for (int j = 0; j < running; j++)
            if (jobs[j].pid == pid) {
                report_end(p, &jobs[j], status, p->jobs > 1 || p->log_to_file ? logs[jobs[j].run] : NULL, &failed);
                jobs[j] = jobs[--running];
                break;
            }
        fflush(stdout);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int not_started = n - next;
    printf("[ablation] %d of %d runs ended well in %.1f min", n - failed - not_started, n,
           (wall_seconds() - t_start) / 60.0);
    if (failed) printf(", %d did not", failed);
    if (not_started) printf(", %d not started", not_started);
    printf(". The table: step6_ablation table%s%s\n", p->out_dir ? " " : "", p->out_dir ? p->out_dir : "");
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
    if (mode == ABL_LIST) {
        for (int r = 0; r < ABLATION_RUNS; r++)
            if (p.selected[r]) printf("%s\n", ABLATION[r].name);
        return 0;
    }
    if (mode == ABL_PRINT_COMMANDS) {
        for (int r = 0; r < ABLATION_RUNS; r++)
            if (p.selected[r]) {
                char line[4096];
                ablation_command_line(&p, r, line, sizeof line);
                printf("%s\n", line);
            }
        return 0;
    }
    if (g_prepare_only) return prepare_probe(&p) == 0 ? 0 : 1;
    return run_plan(&p);
}
