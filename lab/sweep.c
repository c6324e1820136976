// sweep.c: one config key over a list of values, for several configurations
// and seeds. Where the ablation asks "what does each upgrade change at the
// tutorial's settings?", a sweep asks "over which settings does it hold?",
// e.g. the learning rates at which the baseline stays stable, and whether
// QK-norm widens that range.
//
// Every point is one run folder, <config>_<key><value>_s<seed>, trained by the
// ablation's `train --resume` through the same runner (xargs -P, runner.c): a
// stopped sweep resumes, a finished run is skipped. A run whose loss or
// gradient stops being finite writes diverged.json: a result, not an error.
#include <math.h>
#include <stdlib.h>
#include "lab.h"
#include "io/bench.h"
#include "io/clock.h"
#include "io/fileio.h"
#include "io/paths.h"

// ---------------------------------------------------------------------------
// Options

typedef enum { SWEEP_RUN, SWEEP_COMMANDS, SWEEP_TABLE, SWEEP_TSV, SWEEP_CURVES, SWEEP_CURVES_TSV } SweepMode;

static int parse_configs(const char *arg, void *plan) {
    SweepPlan *p = plan;
    char list[256];
    snprintf(list, sizeof list, "%s", arg);
    p->n_configs = 0;
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < SWEEP_CONFIGS; c++)
            if (strcmp(name, config_short(c)) == 0) found = c;
        if (found < 0) return args_error(NULL, "--configs: no configuration '%s' (base, rmsnorm, qknorm, swiglu, rope, all)", name);
        if (p->n_configs == SWEEP_CONFIGS) return args_error(NULL, "--configs: %s names one twice", arg);
        p->config[p->n_configs++] = found;
    }
    return p->n_configs ? ARGS_OK : args_error(NULL, "--configs wants names, not '%s'", arg);
}

// Numbers are kept in increasing order (so a range of them is a range of
// rows), whatever order they were given in; other values as given.
static int by_number(const void *a, const void *b) {
    double x = strtod(a, NULL), y = strtod(b, NULL);
    return (x > y) - (x < y);
}

static void sort_if_numbers(SweepPlan *p) {
    for (int v = 0; v < p->n_values; v++) {
        char *end;
        strtod(p->values[v], &end);
        if (*end || end == p->values[v]) return;
    }
    qsort(p->values, (size_t)p->n_values, sizeof p->values[0], by_number);
}

// Every value must be one that `--set KEY=value` accepts, and safe in a
// folder name: checked now, so a typo fails before any run starts.
static int parse_values(const char *arg, void *plan) {
    SweepPlan *p = plan;
    char list[1024];
    snprintf(list, sizeof list, "%s", arg);
    p->n_values = 0;
    char *save = NULL;
    for (char *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (p->n_values == SWEEP_MAX_VALUES) return args_error(NULL, "--values: at most 16 values, in %s", arg);
        if (strlen(v) >= sizeof p->values[0] || strspn(v, "0123456789.eE+-abcdefghijklmnopqrstuvwxyz_") != strlen(v))
            return args_error(NULL, "--values: '%s' cannot be part of a folder name", v);
        snprintf(p->values[p->n_values++], sizeof p->values[0], "%s", v);
    }
    if (!p->n_values) return args_error(NULL, "--values wants a list, not '%s'", arg);
    sort_if_numbers(p);
    return ARGS_OK;
}

static int add_set(const char *arg, void *plan) {
    SweepPlan *p = plan;
    if (p->n_sets == SWEEP_MAX_SETS) return args_error(NULL, "--set: at most 8 of them, not '%s' too", arg);
    if (strlen(arg) >= sizeof p->sets[0] || !strchr(arg, '='))
        return args_error(NULL, "--set wants key=value, not '%s'", arg);
    snprintf(p->sets[p->n_sets++], sizeof p->sets[0], "%s", arg);
    return ARGS_OK;
}

// One setting on top of the sweep's preset, as every run would take it:
// `train --set` must accept it, or the sweep stops before any run starts.
// what names it in the message. ARGS_OK, or ARGS_BAD after a message.
static int check_setting(const SweepPlan *p, const char *kv, const char *what) {
    Config c;
    int ckpt_every;
    char err[512];
    preset_apply(p->preset, &c, &ckpt_every);
    if (config_set(&c, kv, err, sizeof err) == 0) return ARGS_OK;
    return args_error(NULL, "%s: %s\n(the keys: step6_ablation train --set help)", what, err);
}

// The key (a key whose values make seed pairs or one run draws no curve:
// its row says which) at each of its values, then the --set settings: none
// that the sweep sets itself (its key, the seed, the threads).
static int check_plan_settings(const SweepPlan *p) {
    char what[128], kv[64];
    const ConfigKey *k = config_find_key(p->key);
    if (k && k->differs != NEW_CONFIG)
        return args_error(NULL, k->differs == SEED_PAIR ? "--key %s: runs that differ in it are seed pairs: a sweep's "
                                                     "seeds are set by --seeds"
                                                   : "--key %s: runs that differ in it are one run (a sweep's threads: "
                                                     "--threads)", p->key);
    snprintf(what, sizeof what, "--key %s --values", p->key);
    for (int v = 0; v < p->n_values; v++) {
        snprintf(kv, sizeof kv, "%s=%s", p->key, p->values[v]);
        if (check_setting(p, kv, what) != ARGS_OK) return ARGS_BAD;
    }
    for (int i = 0; i < p->n_sets; i++) {
        size_t klen = strcspn(p->sets[i], "=");
        if ((strlen(p->key) == klen && strncmp(p->sets[i], p->key, klen) == 0) ||
            strncmp(p->sets[i], "seed=", 5) == 0 || strncmp(p->sets[i], "threads=", 8) == 0)
            return args_error(NULL, "--set %s: the sweep sets this itself (--key and --values, --seeds, --threads)",
                               p->sets[i]);
        snprintf(what, sizeof what, "--set %s", p->sets[i]);
        if (check_setting(p, p->sets[i], what) != ARGS_OK) return ARGS_BAD;
    }
    return ARGS_OK;
}

static int sweep_parse(int argc, char **argv, SweepPlan *p, SweepMode *mode) {
    *p = (SweepPlan){ .preset = PRESET_QUICK, .seeds = 2, .jobs = 1, .n_configs = 1 };   // config 0: the baseline
    *mode = SWEEP_RUN;
    const char *out = NULL;
    ArgOption opts[] = {
        ARG_STRING("key", "KEY", &p->key, "the config key to vary, e.g. lr (list: step6_ablation train --set help)"),
        ARG_CALL("values", "LIST", parse_values, p, "its values, comma-separated, e.g. 3e-4,1e-3,2e-3 (numbers: run\n"
                                                   "and shown in increasing order)"),
        ARG_CALL("configs", "LIST", parse_configs, p, "of base, rmsnorm, qknorm, swiglu, rope, all (default base)"),
        ARG_CALL("set", "key=value", add_set, p, "a setting every run of the sweep shares, e.g. --set val_every=500"),
        LAB_RUN_OPTIONS(p, mode, SWEEP_COMMANDS),
        ARG_STRING("out", "DIR", &out, "the sweep's folder (default: the project's runs/sweep_KEY)"),
        ARG_SWITCH("table", (int *)mode, SWEEP_TABLE, "the results so far: val MSE (mean +- se), divergences, loss\n"
                   "spikes, the largest attention logit, the stable range of each configuration"),
        ARG_SWITCH("tsv", (int *)mode, SWEEP_TSV, "the same, one line per run, for gnuplot (scripts/sweep_plots.sh)"),
        ARG_SWITCH("curves", (int *)mode, SWEEP_CURVES, "val MSE along the runs (their val.tsv, finished or not): at\n"
                   "every check, each configuration's mean over seeds minus the first\n"
                   "configuration's, +- its standard error, and whether the gap closes"),
        ARG_SWITCH("curves-tsv", (int *)mode, SWEEP_CURVES_TSV, "the same, one line per check, for gnuplot"),
        ARG_END,
    };
    opts[5].help = "seeds 0 to N-1 of every point";
    const ArgSpec spec = {
        .program = "lab sweep", .options = opts,
        .about = "  one config key (any --set key) over a list of values, for each configuration and\n"
                 "  seed: one run each, DIR/<config>_<KEY><value>_s<seed>, by `train --resume`.\n"
                 "  A run that diverges records diverged.json and is a result, not an error. Examples:\n"
                 "  docs/beyond.md's sweeps (make sweep-lr, make budget-swiglu; results/sweep_lr, budget_swiglu)",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    if (out) snprintf(p->out_dir, sizeof p->out_dir, "%s", out);
    if (!p->key || !p->n_values) return args_error(NULL, "a sweep needs --key and --values");
    if (!p->out_dir[0]) snprintf(p->out_dir, sizeof p->out_dir, "%s/sweep_%s", default_runs_dir(), p->key);
    return check_plan_settings(p);
}

// ---------------------------------------------------------------------------
// Commands

static int sweep_command_line(const SweepPlan *p, int c, int v, int seed, char *line, size_t len) {
    char name[128], setting[64], seed_set[32], threads_set[32];
    sweep_run_name(p, c, v, seed, name, sizeof name);
    snprintf(setting, sizeof setting, "%s=%s", p->key, p->values[v]);
    snprintf(seed_set, sizeof seed_set, "seed=%d", seed);
    snprintf(threads_set, sizeof threads_set, "threads=%d", p->threads);
    train_line_start(line, len, lab_train_program(), name, p->preset, p->out_dir);
    for (int i = 0; ABLATION_CONFIG[p->config[c]].sets[i]; i++) line_add_set(line, len, ABLATION_CONFIG[p->config[c]].sets[i]);
    for (int i = 0; i < p->n_sets; i++) line_add_set(line, len, p->sets[i]);
    line_add_set(line, len, setting);
    line_add_set(line, len, seed_set);
    if (p->threads > 0) line_add_set(line, len, threads_set);
    return strlen(line) + 1 < len ? 0 : -1;
}

// ---------------------------------------------------------------------------
// One point of the sweep as its folders tell it

typedef struct {
    int finished, diverged, missing;
    double val[ABLATION_MAX_SEEDS];          // of the finished seeds
    int diverged_at[ABLATION_MAX_SEEDS];     // of the diverged seeds
    int spikes;                               // summed over the finished seeds
    double max_logit;                         // the largest attention logit in any seed's loss.tsv, NAN if none
} SweepPoint;

// The largest finite value in the run's loss.tsv's max_logit column (its
// fourth): the same measure for a finished run and for one that diverged.
static double loss_tsv_max_logit(const char *dir, const char *name) {
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s/loss.tsv", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    char line[256];
    double best = NAN;
    while (fgets(line, sizeof line, f)) {
        int step;
        double loss, grad, logit;
        if (sscanf(line, "%d %lf %lf %lf", &step, &loss, &grad, &logit) == 4 && isfinite(logit))
            best = isnan(best) || logit > best ? logit : best;
    }
    fclose(f);
    return best;
}

static void sweep_point(const SweepPlan *p, int c, int v, SweepPoint *pt) {
    memset(pt, 0, sizeof *pt);
    pt->max_logit = NAN;
    for (int k = 0; k < p->seeds; k++) {
        char name[128];
        RunMetrics m;
        int at;
        sweep_run_name(p, c, v, k, name, sizeof name);
        switch (run_outcome(p->out_dir, name, &m, &at)) {
        case RUN_FINISHED:
            pt->val[pt->finished++] = m.val_mse;
            pt->spikes += m.loss_spikes;
            break;
        case RUN_DIVERGED: pt->diverged_at[pt->diverged++] = at; break;
        case RUN_UNFINISHED: pt->missing++; continue;
        }
        double ml = loss_tsv_max_logit(p->out_dir, name);
        if (isfinite(ml) && (isnan(pt->max_logit) || ml > pt->max_logit)) pt->max_logit = ml;
    }
}

// A run can end with finite numbers and still not have learned: at lr 3.2e-2
// the baseline's attention logits run into the thousands and its val MSE
// stays at 1.15, close to what a model that always predicts zero velocity
// scores, E|x1 - x0|^2 = 1 (the noise) + E[x1^2] (0.25 over CIFAR-10's test
// pixels in [-1, 1]) = 1.25. Such a run has not trained: its val MSE is more
// than NOT_TRAINED_RATIO times that of the configuration's best run in the
// table. Near the edge the seeds can disagree (at lr 1.6e-2 two of the
// baseline's four seeds trained and two did not), so a point is judged seed
// by seed: "not trained" when none did, "2 of 4 trained" when some did. The
// yardstick is one run, not a point's mean, so that a table of the edge alone
// (--values 1.6e-2) still tells the seeds that learned from those that did not.
#define NOT_TRAINED_RATIO 2.0

// The lowest val MSE of any finished run of configuration c in the table
// (INFINITY if there is none): a sweep still running is judged so far.
static double best_run_val(const SweepPlan *p, int c) {
    double best = INFINITY;
    for (int v = 0; v < p->n_values; v++) {
        SweepPoint pt;
        sweep_point(p, c, v, &pt);
        for (int k = 0; k < pt.finished; k++) best = fmin(best, pt.val[k]);
    }
    return best;
}

static int seeds_trained(const SweepPlan *p, int c, const SweepPoint *pt) {
    double limit = NOT_TRAINED_RATIO * best_run_val(p, c);
    int n = 0;
    for (int k = 0; k < pt->finished; k++) n += pt->val[k] <= limit;
    return n;
}

// Stable: every seed finished, none diverged, not one loss spike, every one trained.
static bool point_stable(const SweepPlan *p, int c, const SweepPoint *pt) {
    return pt->finished == p->seeds && pt->spikes == 0 && pt->finished && seeds_trained(p, c, pt) == pt->finished;
}

// ---------------------------------------------------------------------------
// The table

static void print_config_table(const SweepPlan *p, int c) {
    Table t;
    table_init(&t, 7, p->key, "runs", "val MSE", "+- se", "spikes", "max logit", "stable");
    for (int v = 0; v < p->n_values; v++) {
        SweepPoint pt;
        sweep_point(p, c, v, &pt);
        SeedSpread s = seed_spread(pt.val, pt.finished);
        table_cell(&t, "%s", p->values[v]);
        table_cell(&t, "%d/%d", pt.finished, p->seeds);
        if (pt.finished) table_cell(&t, "%.4f", s.mean); else table_cell(&t, "-");
        if (pt.finished >= 2) table_cell(&t, "%.4f", s.se); else table_cell(&t, "-");
        table_cell(&t, "%d", pt.spikes);
        if (isfinite(pt.max_logit)) table_cell(&t, "%.1f", pt.max_logit); else table_cell(&t, "-");
        int trained = seeds_trained(p, c, &pt);
        if (pt.diverged) table_cell(&t, "diverged");
        else if (pt.finished && trained == 0) table_cell(&t, "not trained");
        else if (trained < pt.finished) table_cell(&t, "%d of %d trained", trained, pt.finished);
        else table_cell(&t, "%s", pt.spikes ? "spikes" : point_stable(p, c, &pt) ? "yes" : "-");   // -: seeds to run
    }
    printf("%s\n", ABLATION_CONFIG[p->config[c]].label);
    table_print(&t);
    for (int v = 0; v < p->n_values; v++) {
        SweepPoint pt;
        sweep_point(p, c, v, &pt);
        for (int i = 0; i < pt.diverged; i++)
            printf("  %s %s: a seed diverged at step %d (the loss or gradient was not finite)\n", p->key,
                   p->values[v], pt.diverged_at[i]);
    }
}

// The values in the order given; the stable ones form the stable range. A
// value between two stable ones that ended unstable breaks it ("with gaps");
// one whose runs have not ended yet does not.
static void print_stable_range(const SweepPlan *p, int c) {
    int first = -1, last = -1, best = -1, complete = 1;
    double best_val = INFINITY;
    bool broken = false, unstable_since_last = false, pending[SWEEP_MAX_VALUES];   // seeds to run, none unstable
    for (int v = 0; v < p->n_values; v++) {
        SweepPoint pt;
        sweep_point(p, c, v, &pt);
        pending[v] = pt.missing && !pt.diverged && !pt.spikes && seeds_trained(p, c, &pt) == pt.finished;
        if (pt.missing) complete = 0;
        if (pt.finished) {                    // so far, while seeds are missing
            double mean = seed_spread(pt.val, pt.finished).mean;
            if (mean < best_val) { best_val = mean; best = v; }
        }
        if (point_stable(p, c, &pt)) {
            if (first >= 0 && unstable_since_last) broken = true;
            if (first < 0) first = v;
            last = v;
            unstable_since_last = false;
        } else if (!pending[v]) {
            unstable_since_last = true;   // ended unstable (a point with seeds still to run is not a gap)
        }
    }
    printf("  %-20s ", ABLATION_CONFIG[p->config[c]].label);
    if (first < 0) printf("stable at none of the values");
    else if (first == last) printf("stable at %s %s only", p->key, p->values[first]);
    else {
        int not_run = 0;                      // values inside the range still without a result
        for (int v = first + 1; v < last; v++) not_run += pending[v];
        printf("stable from %s %s to %s%s", p->key, p->values[first], p->values[last],
               broken ? " (with gaps)" : not_run ? " (as far as run: values between have seeds still to run)" : "");
    }
    if (best >= 0) printf("; lowest val MSE at %s %s (%.4f)", p->key, p->values[best], best_val);
    printf("%s\n", complete ? "" : " [runs missing: so far]");
}

static void sweep_table(const SweepPlan *p) {
    printf("sweep of %s over %d values, %s preset, %d seed%s a point, from %s\n\n", p->key, p->n_values,
           preset_name(p->preset), p->seeds, p->seeds == 1 ? "" : "s", p->out_dir);
    for (int i = 0; i < p->n_sets; i++) printf("%s --set %s", i ? "" : "every run with", p->sets[i]);
    if (p->n_sets) printf("\n\n");
    for (int c = 0; c < p->n_configs; c++) {
        print_config_table(p, c);
        printf("\n");
    }
    printf("val MSE: mean over the finished seeds, +- its standard error; spikes: summed over them;\n"
           "max logit: the largest attention logit in any seed's loss.tsv (diverged runs included).\n"
           "stable: every seed finished, no loss spike, and every seed trained: a val MSE at most %.0fx\n"
           "the configuration's best run (predicting zero velocity, a model that learned nothing\n"
           "scores 1.25); \"1 of 2 trained\": the seeds disagree.\n",
           NOT_TRAINED_RATIO);
    for (int c = 0; c < p->n_configs; c++) print_stable_range(p, c);
}

// One line per run: config label key value seed outcome val_mse spikes max_logit diverged_at
static void sweep_tsv(const SweepPlan *p) {
    printf("config\tlabel\tvalue\tseed\toutcome\tval_mse\tspikes\tmax_logit\tdiverged_at\n");
    for (int c = 0; c < p->n_configs; c++)
        for (int v = 0; v < p->n_values; v++)
            for (int k = 0; k < p->seeds; k++) {
                char name[128];
                RunMetrics m;
                int at = -1;
                sweep_run_name(p, c, v, k, name, sizeof name);
                RunOutcome o = run_outcome(p->out_dir, name, &m, &at);
                printf("%s\t%s\t%s\t%d\t%s\t", config_short(p->config[c]), ABLATION_CONFIG[p->config[c]].label,
                       p->values[v], k, o == RUN_FINISHED ? "finished" : o == RUN_DIVERGED ? "diverged" : "missing");
                if (o == RUN_FINISHED) printf("%.6f\t%d\t", m.val_mse, m.loss_spikes);
                else printf("nan\tnan\t");
                printf("%.4g\t%d\n", loss_tsv_max_logit(p->out_dir, name), o == RUN_DIVERGED ? at : -1);
            }
}

// ---------------------------------------------------------------------------
// Running

static int sweep_run(const SweepPlan *p) {
    int cap = p->n_configs * p->n_values * p->seeds, n = 0, done = 0;
    CommandLine *lines = calloc((size_t)cap + 1, sizeof *lines);
    char err[1024];
    if (!lines) { fprintf(stderr, "error: out of memory\n"); return 1; }
    if (make_dirs(p->out_dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); free(lines); return 1; }
    // seed by seed, so a sweep stopped part-way has whole rounds
    for (int k = 0; k < p->seeds; k++)
        for (int v = 0; v < p->n_values; v++)
            for (int c = 0; c < p->n_configs; c++) {
                char name[128];
                RunMetrics m;
                int at;
                sweep_run_name(p, c, v, k, name, sizeof name);
                if (run_outcome(p->out_dir, name, &m, &at) != RUN_UNFINISHED) { done++; continue; }
                if (sweep_command_line(p, c, v, k, lines[n], sizeof lines[n]) != 0) continue;
                if ((p->jobs == 1 && !p->log_to_file) || line_add_log(lines[n], sizeof lines[n], p->out_dir, name) == 0) n++;
            }
    printf("[sweep] %s over %d values x %d configurations x %d seeds: %d runs ended already, %d to run, "
           "%d at a time, into %s\n", p->key, p->n_values, p->n_configs, p->seeds, done, n, p->jobs, p->out_dir);
    double t0 = wall_seconds();
    int stop_signal;
    if (launch_lines(lines, n, p->jobs, n > 0, NULL, &stop_signal) < 0) return 1;
    printf("[sweep] %.1f min\n\n", (wall_seconds() - t0) / 60.0);
    sweep_table(p);
    return stop_signal ? 128 + stop_signal : 0;
}

int cmd_sweep(int argc, char **argv) {
    SweepPlan p;
    SweepMode mode;
    int rc = sweep_parse(argc, argv, &p, &mode);
    if (rc != ARGS_OK) return args_exit_code(rc);
    switch (mode) {
    case SWEEP_TABLE: sweep_table(&p); return 0;
    case SWEEP_TSV: sweep_tsv(&p); return 0;
    case SWEEP_CURVES: sweep_curves(&p, false); return 0;
    case SWEEP_CURVES_TSV: sweep_curves(&p, true); return 0;
    case SWEEP_COMMANDS:
        for (int k = 0; k < p.seeds; k++)
            for (int v = 0; v < p.n_values; v++)
                for (int c = 0; c < p.n_configs; c++) {
                    char line[8192], name[128];
                    RunMetrics m;
                    int at;
                    sweep_run_name(&p, c, v, k, name, sizeof name);
                    if (p.left_only && run_outcome(p.out_dir, name, &m, &at) != RUN_UNFINISHED) continue;
                    if (sweep_command_line(&p, c, v, k, line, sizeof line) != 0 ||
                        (p.log_to_file && line_add_log(line, sizeof line, p.out_dir, name) != 0)) {
                        fprintf(stderr, "error: no command line for %s (its log's folder, or longer than %zu bytes)\n",
                                name, sizeof line);
                        return 1;
                    }
                    printf("%s\n", line);
                }
        return 0;
    case SWEEP_RUN: break;
    }
    return sweep_run(&p);
}
