// job_progress.c: the job's progress on the terminal while lab ablation runs
// its runs: a line as each starts and ends, and one for the whole job, its
// time so far and what is left, against lab estimate --save's parts.
//
// All of it is read from the runs' folders (loss.tsv: how far a run got;
// metrics.json: that it ended), nothing written: the runs' bits do not change.
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "lab.h"
#include "io/fileio.h"
#include "io/progress.h"

RunOutcome run_outcome(const char *runs_dir, const char *name, RunMetrics *m, int *diverged_step) {
    char path[2048], err[METRICS_ERRLEN];
    snprintf(path, sizeof path, "%s/%s/metrics.json", runs_dir, name);
    if (metrics_read(path, m, err, sizeof err) == 0) return RUN_FINISHED;
    snprintf(path, sizeof path, "%s/%s/diverged.json", runs_dir, name);
    *diverged_step = diverged_read_step(path);
    return *diverged_step >= 0 ? RUN_DIVERGED : RUN_UNFINISHED;
}

bool run_started(const char *runs_dir, const char *name) {
    char ckpt[2048], loss[2048];
    snprintf(ckpt, sizeof ckpt, "%s/%s/ckpt.safetensors", runs_dir, name);
    snprintf(loss, sizeof loss, "%s/%s/loss.tsv", runs_dir, name);
    return file_exists(ckpt) || file_exists(loss);
}

int job_plan_read(const char *path, JobPlan *p, char *err, size_t errlen) {
    char *text = read_file_all(path, NULL, err, errlen);
    if (!text) return -1;
    long long at;
    int used = 0;
    memset(p, 0, sizeof *p);
    if (sscanf(text, "estimate_seconds %lf saved_at %lld%n", &p->estimate, &at, &used) != 2) {
        free(text);
        return snprintf(err, errlen, "%s: not an estimate saved by lab estimate --save", path), -1;
    }
    p->started = (double)at;
    for (char *line = strtok(text + used, "\n"); line; line = strtok(NULL, "\n")) {
        char kind[16], name[64];
        double s, f = 0.9;
        if (sscanf(line, "%15s %63s %lf %lf", kind, name, &s, &f) < 3 || (strcmp(kind, "run") && strcmp(kind, "part")))
            continue;   // "jobs J", and lines a later lab estimate may add
        if (p->n == JOB_MAX_PARTS || !(s >= 0)) {
            free(text);
            return snprintf(err, errlen, "%s: %s", path, s >= 0 ? "too many parts" : "a part's seconds are not a number"), -1;
        }
        JobPart *q = &p->part[p->n++];
        snprintf(q->name, sizeof q->name, "%s", name);
        q->is_run = !strcmp(kind, "run");
        q->seconds = s;
        q->steps_share = fmin(1, fmax(0, f));
    }
    free(text);
    return 0;
}

void job_progress_line(const JobPlan *p, double now, const char *what, char *out, size_t n) {
    double total = 0, done = 0;
    for (int i = 0; i < p->n; i++) {
        total += p->part[i].seconds;
        done += p->part[i].seconds * fmin(1, fmax(0, p->part[i].done));
    }
    double elapsed = fmax(0, now - p->started);
    // the job so far against its estimate: the rest goes at the same pace
    // (a machine busier than when it was timed makes every part slower alike)
    double pace = done >= 0.05 * total && done > 0 ? fmin(4, fmax(0.25, elapsed / done)) : 1;
    char e[32], left[32], est[32];
    format_duration(elapsed, e, sizeof e);
    format_duration((total - done) * pace, left, sizeof left);
    format_duration(p->estimate, est, sizeof est);
    snprintf(out, n, "[job] %s, %.0f%% done, about %s left (estimated %s)%s%s", e, total > 0 ? 100 * done / total : 0,
             left, est, what && *what ? " | " : "", what ? what : "");
}

// ---------------------------------------------------------------------------
// The watch over one lab ablation's runs

struct JobWatch {
    const char *dir;
    int n, to_run, started, ended;
    const char (*names)[64];
    const int *steps;
    const bool *was_finished;
    struct {
        pid_t pid;          // 0 until the run starts
        double t_start, t_steps;   // when it started; when its steps were all done (0: not yet)
        bool reported;      // its end said
    } *run;
    JobPlan plan;
    bool have_plan, draw, ended_now;
    double t0, last_plain;
};

void format_duration(double seconds, char *out, size_t n) {
    long s = (long)(seconds + 0.5);
    if (s >= 3600) snprintf(out, n, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else snprintf(out, n, "%ld:%02ld", s / 60, s % 60);
}

int steps_in(const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/loss.tsv", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int lines = 0;
    for (int ch; (ch = fgetc(f)) != EOF;) lines += ch == '\n';
    fclose(f);
    return lines > 0 ? lines - 1 : 0;
}

// The job's parts as the runs' folders have them now: each run of the plan
// done as far as its steps (whole when it ended), and a part of the job
// that is not a run done once a run after it belongs to this lab ablation.
static void update_plan(JobWatch *w) {
    bool later_here = false;
    for (int k = w->plan.n - 1; k >= 0; k--) {
        JobPart *q = &w->plan.part[k];
        if (!q->is_run) { q->done = later_here; continue; }
        int i = 0;
        while (i < w->n && strcmp(w->names[i], q->name)) i++;
        later_here |= i < w->n;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/metrics.json", w->dir, q->name);
        if (file_exists(path) || (i < w->n && w->run[i].reported)) q->done = 1;
        else if (i < w->n && w->run[i].pid) {
            // its steps as far as its loss.tsv has them; then its scorecard, by the clock
            int s = steps_in(w->dir, q->name);
            double f = q->steps_share, now = wall_seconds(), *t_steps = &w->run[i].t_steps;
            if (s >= w->steps[i] && !*t_steps) *t_steps = now;
            q->done = *t_steps ? f + (1 - f) * fmin(0.95, (now - *t_steps) / fmax(1, (1 - f) * q->seconds))
                               : w->steps[i] > 0 ? f * s / w->steps[i] : 0;
        } else q->done = 0;
    }
}

// The job's line, printed whole after a run ends and every half minute (a
// log keeps every line; a terminal shows them as they come).
static void show_progress(JobWatch *w, bool last) {
    double now = wall_seconds();
    if (!w->draw) return;
    if (w->have_plan) update_plan(w);   // every tick: a run's steps end between two lines
    if (!w->ended_now && (last || now - w->last_plain < PROGRESS_PLAIN_EVERY_S / 2)) return;
    char what[512] = "", line[768];
    for (int i = 0; i < w->n; i++)
        if (w->run[i].pid && !w->run[i].reported && strlen(what) < sizeof what - 100)
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s %d/%d", what[0] ? ", " : "", w->names[i],
                     steps_in(w->dir, w->names[i]), w->steps[i]);
    if (w->have_plan) job_progress_line(&w->plan, (double)time(NULL), what, line, sizeof line);
    else {
        char e[32];
        format_duration(now - w->t0, e, sizeof e);
        snprintf(line, sizeof line, "[ablation] %s, %d of %d runs ended%s%s", e, w->ended, w->n, what[0] ? " | " : "",
                 what);
    }
    printf("%s\n", line);
    w->last_plain = now;
    w->ended_now = false;
}

void job_watch_started(JobWatch *w, int i, pid_t pid) {
    if (i < 0 || i >= w->n || w->run[i].pid) return;
    w->run[i].pid = pid;
    w->run[i].t_start = wall_seconds();
    if (w->was_finished[i]) { w->run[i].reported = true; return; }   // it only says so: not news
    printf("[ablation] %s: started (%d of %d to run)\n", w->names[i], ++w->started, w->to_run);
}

void job_watch_tick(JobWatch *w, bool last) {
    for (int i = 0; i < w->n; i++) {
        if (!w->run[i].pid || w->run[i].reported) continue;
        RunMetrics m;
        int at;
        RunOutcome o = run_outcome(w->dir, w->names[i], &m, &at);
        bool gone = kill(w->run[i].pid, 0) != 0 && errno == ESRCH;
        if (o == RUN_UNFINISHED && !gone && !last) continue;
        char took[32];
        format_duration(wall_seconds() - w->run[i].t_start, took, sizeof took);
        if (o == RUN_FINISHED)
            printf("[ablation] %s: done in %s: val MSE %.4f | probe-FD %.1f\n", w->names[i], took, m.val_mse, m.probe_fd);
        else if (o == RUN_DIVERGED) printf("[ablation] %s: diverged at step %d, after %s\n", w->names[i], at, took);
        else printf("[ablation] %s: ended unfinished after %s (its log: %s/%s/train.log)\n", w->names[i], took, w->dir,
                    w->names[i]);
        w->run[i].reported = true;
        w->ended++;
        w->ended_now = true;
    }
    show_progress(w, last);
}

JobWatch *job_watch_new(const char *dir, int n, const char (*names)[64], const int *steps, const bool *was_finished,
                        const char *estimate_file, bool draw) {
    JobWatch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    *w = (JobWatch){ .dir = dir, .n = n, .names = names, .steps = steps, .was_finished = was_finished,
                     .draw = draw, .t0 = wall_seconds() };
    w->last_plain = w->t0;
    for (int i = 0; i < n; i++) w->to_run += !was_finished[i];
    w->run = calloc((size_t)n + 1, sizeof *w->run);
    char err[2200];
    if (estimate_file && job_plan_read(estimate_file, &w->plan, err, sizeof err) != 0)
        fprintf(stderr, "warning: --estimate: %s; the job's progress is shown without it\n", err);
    else w->have_plan = estimate_file != NULL;
    if (!w->run) { job_watch_free(w); return NULL; }
    return w;
}

void job_watch_free(JobWatch *w) {
    if (!w) return;
    free(w->run);
    free(w);
}
