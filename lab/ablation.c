// ablation.c: the nine runs of the tutorial's last section, each one `train`
// command, run one after the other or side by side (by xargs -P, runner.c).
//
// Why processes, not threads in one program: a run is exactly what
// `step6_ablation train` does (step 6), so the ablation adds nothing to trust.
// A killed run keeps its checkpoint and resumes (train --resume); a finished
// one is skipped. The commands can be printed (--print-commands) for GNU
// parallel or xargs, on one machine or several.
#include <stdlib.h>
#include <unistd.h>
#include "lab.h"
#include "io/clock.h"
#include "io/fileio.h"
#include "io/paths.h"

// The round in which a run starts: the tutorial's nine are round 0 (with the
// baseline's seed 1), then round k holds every configuration's seed k.
static int start_round(int config, int seed) { return config == CFG_BASE && seed == 1 ? 0 : seed; }

int ablation_config_of(Preset p, int c, Config *cfg) {
    int ckpt_every;
    preset_apply(p, cfg, &ckpt_every);
    for (int i = 0; ABLATION_CONFIG[c].sets[i]; i++) config_set_or_exit(cfg, ABLATION_CONFIG[c].sets[i]);
    return ckpt_every;
}

void ablation_select_seeds(AblationPlan *p) {
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ablation_config_seeds(c, p->seeds); k++) p->selected[c][k] = true;
}

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

int ablation_command_line(const AblationPlan *p, int config, int seed, char *line, size_t len) {
    const AblationConfig *cf = &ABLATION_CONFIG[config];
    char name[64], seed_set[32], threads_set[32];
    ablation_run_name(config, seed, name, sizeof name);
    snprintf(seed_set, sizeof seed_set, "seed=%d", seed);
    snprintf(threads_set, sizeof threads_set, "threads=%d", p->threads);
    train_line_start(line, len, p->exe, name, p->preset, p->out_dir);
    // the seed: always for the baseline (its runs are its seeds), else from
    // seed 1 on (seed 0 is the config's default, as in the tutorial's runs)
    if (config == CFG_BASE) line_add_set(line, len, seed_set);
    for (int i = 0; cf->sets[i]; i++) line_add_set(line, len, cf->sets[i]);
    if (config != CFG_BASE && seed > 0) line_add_set(line, len, seed_set);
    if (p->threads > 0) line_add_set(line, len, threads_set);
    return strlen(line) + 1 < len ? 0 : -1;
}

// ---------------------------------------------------------------------------
// Options

// The configurations, after the options of --help.
static void list_configurations(FILE *f) {
    fprintf(f, "configurations (seed 0's name):\n");
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        char name[64];
        ablation_run_name(c, 0, name, sizeof name);
        fprintf(f, "  %-18s %-20s", name, ABLATION_CONFIG[c].label);
        for (int i = 0; ABLATION_CONFIG[c].sets[i]; i++) fprintf(f, " --set %s", ABLATION_CONFIG[c].sets[i]);
        fprintf(f, "\n");
    }
}

// --only A,B,...: marks the named runs (without it, all of --seeds are).
// ARGS_OK, or ARGS_BAD with a message.
static int parse_only(const char *arg, void *plan) {
    AblationPlan *p = plan;
    int named = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", arg);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int c, k;
        if (ablation_run_parse(name, &c, &k) != 0)
            return args_error(NULL, "--only: no run named '%s'; lab ablation --help lists the configurations, and\n"
                              "seed k >= 1 of each is NAME_s<k> (the baseline's: p11_base_s0, p11_base_s1, ...)", name);
        p->selected[c][k] = true;
        named++;
    }
    return named ? ARGS_OK : args_error(NULL, "--only wants run names");
}

int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode) {
    *p = (AblationPlan){ .preset = PRESET_QUICK, .jobs = 1, .seeds = 1 };
    *mode = ABL_RUN;
    bool threads_given = false, only_given = false;
    ArgOption opts[] = {
        LAB_RUN_OPTIONS(p, mode, ABL_PRINT_COMMANDS),
        ARG_STRING("out", "DIR", &p->out_dir, "the runs' folder (default: the project's runs/)"),
        ARG_CALL("only", "A,B", parse_only, p, "just these runs (any seed's name, e.g. p11_rope_s2)"),
        ARG_STRING("estimate", "FILE", &p->estimate, "the job's estimate (lab estimate --save FILE): show the whole\n"
                   "job's progress against it (make tutorial does)"),
        ARG_END,
    };
    opts[1].help = "seeds per configuration (default 1: the tutorial's nine runs; the\n"
                   "baseline always gets at least 2). Seed k of the baseline is\n"
                   "p11_base_s<k>; of the others NAME (k = 0) and NAME_s<k>";
    opts[3].help = "threads per run (default with --jobs N > 1: the cores divided by N, all\n"
                   "of them for a last run left to start alone; else the run's own, all cores)";
    opts[3].seen = &threads_given;
    opts[8].seen = &only_given;
    opts[1].hide_default = 1;   // said in the help
    const ArgSpec spec = {
        .program = "lab ablation", .options = opts, .more = list_configurations,
        .about = "  every configuration with N seeds, each run one `train --resume` command:\n"
                 "  finished runs are skipped, interrupted ones continue from their checkpoint",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    if (!only_given) ablation_select_seeds(p);
    // Two runs on two cores with two threads each would fight over the
    // cores (and OpenMP threads spin while they wait): split them instead.
    // Printed commands keep the run's default unless --threads says otherwise,
    // because the machine that runs them decides.
    if (!threads_given && p->jobs > 1 && *mode == ABL_RUN) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        p->threads = cores / p->jobs > 1 ? (int)(cores / p->jobs) : 1;
        p->split_cores = true;
    }
    return ARGS_OK;
}

// ---------------------------------------------------------------------------
// Running

int ablation_lone_run(const bool *left, int n, int jobs) {
    int count = 0, last = -1;
    for (int i = 0; i < n; i++)
        if (left[i]) { count++; last = i; }
    return jobs > 1 && count % jobs == 1 ? last : -1;
}

static const char *runs_dir(const AblationPlan *p) { return p->out_dir ? p->out_dir : default_runs_dir(); }

// A run's line for the runner: its train command, with the output appended
// to DIR/NAME/train.log when runs go side by side (their progress lines would
// interleave) or --log asks. 0, or -1 with a message.
static int run_line(const AblationPlan *p, int config, int seed, char *line, size_t len) {
    char name[64];
    if (ablation_command_line(p, config, seed, line, len) != 0) {
        fprintf(stderr, "error: a train command is longer than its line (%zu bytes)\n", len);
        return -1;
    }
    if (p->jobs == 1 && !p->log_to_file) return 0;
    ablation_run_name(config, seed, name, sizeof name);
    return line_add_log(line, len, runs_dir(p), name);
}

// What each run's folder says now. Returns how many ended well; *not_started
// counts those that never began (Ctrl-C came first).
static int report_runs(const AblationPlan *p, const int *config, const int *seed, const bool *was_finished,
                       int n, int *not_started) {
    int well = 0;
    *not_started = 0;
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
            if (!run_started(runs_dir(p), name)) {
                printf("[ablation] %s: not started\n", name);
                (*not_started)++;
            } else {
                printf("[ablation] %s: not finished; started again, it continues from its checkpoint", name);
                if (p->jobs > 1 || p->log_to_file) printf(" (its log: %s/%s/train.log)", runs_dir(p), name);
                printf("\n");
            }
            break;
        }
    }
    return well;
}

static int run_plan(const AblationPlan *p) {
    int config[ABLATION_PLAN_MAX], seed[ABLATION_PLAN_MAX], steps[ABLATION_PLAN_MAX];
    bool was_finished[ABLATION_PLAN_MAX], left[ABLATION_PLAN_MAX];
    char names[ABLATION_PLAN_MAX][64];
    int n = ablation_plan_runs(p, config, seed, ABLATION_PLAN_MAX), unfinished = 0;
    CommandLine *lines = calloc((size_t)n + 1, sizeof *lines);
    char err[1024];
    if (!lines) { fprintf(stderr, "error: out of memory\n"); return 1; }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *name = names[i];
        ablation_run_name(config[i], seed[i], name, sizeof names[i]);
        RunMetrics m;
        Config cfg;
        int at;
        ablation_config_of(p->preset, config[i], &cfg);
        steps[i] = cfg.run.steps;
        // only a hint for the messages and for skipping the probe: `train --resume` decides
        RunOutcome outcome = run_outcome(runs_dir(p), name, &m, &at);
        was_finished[i] = outcome == RUN_FINISHED;
        left[i] = outcome == RUN_UNFINISHED;
        unfinished += !was_finished[i];
    }
    AblationPlan alone = *p;   // the run that starts alone: the run's own default, all cores
    alone.threads = 0;
    int lone = p->split_cores ? ablation_lone_run(left, n, p->jobs) : -1;
    for (int i = 0; i < n && rc == 0; i++)
        rc = run_line(i == lone ? &alone : p, config[i], seed[i], lines[i], sizeof lines[i]);
    if (rc == 0 && make_dirs(runs_dir(p), err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); rc = -1; }
    if (rc != 0) { free(lines); return 1; }
    char per_run[160] = "";
    if (p->threads > 0) snprintf(per_run, sizeof per_run, ", %d thread%s each%s%s", p->threads, p->threads == 1 ? "" : "s",
                                 lone >= 0 ? " but the last, alone, all cores: " : "", lone >= 0 ? names[lone] : "");
    printf("[ablation] %d run%s, %s preset, %d at a time%s (xargs -P %d), into %s\n", n, n == 1 ? "" : "s",
           preset_name(p->preset), p->jobs, per_run, p->jobs, runs_dir(p));
    double t_start = wall_seconds();
    int stop_signal;
    // the job's line only where the runs' own progress does not go to the terminal
    JobWatch *w = job_watch_new(runs_dir(p), n, (const char (*)[64])names, steps, was_finished, p->estimate,
                                p->jobs > 1 || p->log_to_file);
    rc = launch_lines(lines, n, p->jobs, unfinished > 0, w, &stop_signal);
    job_watch_free(w);
    if (rc < 0) return 1;
    int not_started, well = report_runs(p, config, seed, was_finished, n, &not_started);
    printf("[ablation] %d of %d runs ended well in %.1f min", well, n, (wall_seconds() - t_start) / 60.0);
    if (well + not_started < n) printf(", %d did not", n - well - not_started);
    if (not_started) printf(", %d not started", not_started);
    printf(". The table: step6_ablation table%s%s\n", p->out_dir ? " " : "", p->out_dir ? p->out_dir : "");
    return stop_signal ? 128 + stop_signal : well < n ? 1 : 0;
}

int cmd_ablation(int argc, char **argv) {
    AblationPlan p;
    AblationMode mode;
    int rc = ablation_parse(argc, argv, &p, &mode);
    if (rc != ARGS_OK) return args_exit_code(rc);
    p.exe = lab_train_program();
    if (mode == ABL_PRINT_COMMANDS) {
        int config[ABLATION_PLAN_MAX], seed[ABLATION_PLAN_MAX];
        int n = ablation_plan_runs(&p, config, seed, ABLATION_PLAN_MAX);
        for (int i = 0; i < n; i++) {
            char line[4096], name[64];
            RunMetrics m;
            int at;
            ablation_run_name(config[i], seed[i], name, sizeof name);
            if (p.left_only && run_outcome(runs_dir(&p), name, &m, &at) != RUN_UNFINISHED) continue;
            if (ablation_command_line(&p, config[i], seed[i], line, sizeof line) != 0 ||
                (p.log_to_file && line_add_log(line, sizeof line, runs_dir(&p), name) != 0)) {
                fprintf(stderr, "error: no command line for %s (its log's folder, or longer than %zu bytes)\n", name,
                        sizeof line);
                return 1;
            }
            printf("%s\n", line);
        }
        return 0;
    }
    return run_plan(&p);
}
