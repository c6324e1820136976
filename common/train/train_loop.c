// train_loop.c: the training loop of a run (see trainer.h), the file to
// read first. Every step is what nn/train_step.c does: a batch from the
// data order, noise and times from the run's own stream, one forward and
// backward pass and an AdamW update; around it only what a long run needs:
// its numbers logged, a val check now and then, checkpoints, and Ctrl-C.
// The run's folder (its files, lock, a start or a resume) is run_folder.c;
// what a finished run writes is run_metrics.c.
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/checkpoint.h"
#include "io/fileio.h"
#include "io/progress.h"
#include "run.h"

// ---------------------------------------------------------------------------
// Ctrl-C or a polite kill: finish the step, save a checkpoint, exit.
//
// The signal is let in between two steps only. A handler that runs on a
// thread inside oneDNN's dnnl_sgemm (version 2.6) leaves the heap corrupted,
// whatever the handler does (glibc then aborts: "corrupted size vs.
// prev_size"), so while the steps run SIGINT and SIGTERM are blocked in every
// thread that computes, and after each step the loop unblocks them for a
// moment in this thread: one that came meanwhile runs the handler here, which
// only sets a flag.
static volatile sig_atomic_t g_stop_signal = 0;
static void on_signal(int sig) { g_stop_signal = sig; }

// SIGINT and SIGTERM, the signals that stop a run.
static sigset_t stop_signal_set(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

// how = SIG_BLOCK or SIG_UNBLOCK, for the stop signals, in this thread (and
// so in the threads it starts from now on) and in OpenMP's threads.
static void mask_stop_signals(int how) {
    sigset_t set = stop_signal_set();
    pthread_sigmask(how, &set, NULL);
    #pragma omp parallel
    pthread_sigmask(how, &set, NULL);
}

// The stop signal that came since the last call, or 0. A blocked one waits
// until the unblock below and runs the handler in this thread, between steps.
static int stop_signal(void) {
    sigset_t set = stop_signal_set();
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    return (int)g_stop_signal;
}

// One step's numbers into the history, the per-block logit maxima, loss.tsv
// and the progress bar.
static void record_step(Run *r, int step, double loss, FILE *lf, Progress *pr) {
    r->loss_hist[step - 1] = (float)loss;
    r->gn_hist[step - 1] = (float)r->tr.ts.grad_norm;
    r->ml_hist[step - 1] = r->tr.ts.max_logit;
    for (int b = 0; b < r->tr.m.cfg.depth && b < TINYDIT_MAX_DEPTH; b++)
        if (r->tr.ts.act.max_logit[b] > r->max_logit_layers[b]) r->max_logit_layers[b] = r->tr.ts.act.max_logit[b];
    fprintf(lf, "%d\t%.6f\t%.6f\t%.4f\n", step, loss, r->tr.ts.grad_norm, r->tr.ts.max_logit);
    char extra[64];
    if (isnan(r->last_val)) snprintf(extra, sizeof extra, "loss %.4f", loss);
    else snprintf(extra, sizeof extra, "loss %.4f, val %.4f", loss, r->last_val);
    progress_update(pr, step, extra);
}

// Every run.val_every steps: the val exam on the weights of this step (not
// counted in train_seconds), into val_hist and val.tsv, rewritten whole (a
// few rows). The exam has its own fixed noise, so the training streams and
// the run's bits are the same with or without it.
static int check_val(Run *r, int step, const RunPaths *rp) {
    if (r->tr.run.val_every <= 0 || step % r->tr.run.val_every != 0) return 0;
    char err[ERRLEN];
    if (!r->have_exam) {
        if (val_exam_init(&r->exam, &r->tr.m, r->test, VAL_IMAGES) != 0) {
            fprintf(stderr, "error: out of memory for the val exam (val_every=0 turns the checks off)\n");
            return -1;
        }
        r->have_exam = 1;
    }
    r->val_hist[step - 1] = r->last_val = (float)val_exam_run(&r->exam, &r->tr.m, r->test);
    if (write_val_tsv(rp->val, step, r->val_hist, err, sizeof err) != 0) return run_error(err, -1);
    return 0;
}

// "the last good checkpoint (step N) is kept in PATH", or that there is none yet.
static void last_checkpoint_text(char *out, size_t n, int last_saved, const char *path) {
    if (last_saved > 0) snprintf(out, n, "the last good checkpoint (step %d) is kept in %s", last_saved, path);
    else snprintf(out, n, "no checkpoint was written yet");
}

// loss.tsv onto the disk, then the checkpoint. TRAIN_OK, or TRAIN_ERROR
// with a message that says which checkpoint is kept.
static int save_point(Run *r, const TrainOptions *o, const RunPaths *rp, FILE *lf, Progress *pr, int last_saved) {
    char err[ERRLEN], kept[2300];
    if (fflush(lf) != 0 || ferror(lf) || fsync(fileno(lf)) != 0) {
        int e = errno;
        progress_end(pr);
        last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
        fprintf(stderr, "error: cannot write %s: %s; %s\n", rp->loss, strerror(e), kept);
        return TRAIN_ERROR;
    }
    if (save_checkpoint(rp, &r->tr.m, &r->tr.run, &r->tr.ts, &r->tr.noise, &r->tr.dl, r->train_seconds, r->max_logit_layers, o->preset,
                        err, sizeof err) != 0) {
        progress_end(pr);
        last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
        fprintf(stderr, "error: %s\n(%s)\n", err, kept);
        return TRAIN_ERROR;
    }
    return TRAIN_OK;
}

double training_step(Training *t, float *x1, int *y) {
    dataloader_next(&t->dl, t->run.batch, x1, y, NULL, NULL);
    return train_step(&t->ts, x1, y, &t->noise);   // an unconditional model reads no y
}

// Steps start+1 .. steps, with a checkpoint every ckpt_every steps, at the
// end, and when interrupted. TRAIN_OK when every step ran; else TRAIN_DIVERGED,
// TRAIN_ERROR, TRAIN_STOPPED (stop_after) or 128 + the signal.
static int train_steps(Run *r, const TrainOptions *o, const RunPaths *rp, FILE *lf) {
    size_t per = cfg_image_floats(&r->tr.m.cfg);
    float *x1 = malloc(sizeof(float) * per * r->tr.run.batch);
    int *y = malloc(sizeof(int) * r->tr.run.batch);           // (batch) the images' labels
    if (!x1 || !y) {
        free(x1); free(y);
        fprintf(stderr, "error: out of memory for a batch of %d images\n", r->tr.run.batch);
        return TRAIN_ERROR;
    }
    Progress pr;
    progress_begin(&pr, stderr, o->name, r->start, r->steps);
    int last_saved = r->start, rc = TRAIN_OK;
    for (int step = r->start + 1; step <= r->steps; step++) {
        double t0 = wall_seconds();
        double loss = training_step(&r->tr, x1, y);
        r->train_seconds += wall_seconds() - t0;
        if (!isfinite(loss) || !isfinite(r->tr.ts.grad_norm)) {
            progress_end(&pr);
            char kept[2300];
            last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
            fprintf(stderr, "error: step %d: the loss is %s (gradient norm %g): training diverged; "
                            "%s. Try a lower lr.\n",
                    step, isfinite(loss) ? "finite but the gradient is not" : "not a number",
                    r->tr.ts.grad_norm, kept);
            record_divergence(r, rp, step, loss);
            rc = TRAIN_DIVERGED;
            break;
        }
        record_step(r, step, loss, lf, &pr);
        if (check_val(r, step, rp) != 0) {
            progress_end(&pr);
            rc = TRAIN_ERROR;
            break;
        }
        int stop_now = stop_signal() || (o->stop_after && step == o->stop_after);
        if (step % o->ckpt_every == 0 || step == r->steps || stop_now) {
            if ((rc = save_point(r, o, rp, lf, &pr, last_saved)) != TRAIN_OK) break;
            last_saved = step;
        }
        if (stop_now) {
            progress_end(&pr);
            if (g_stop_signal)
                fprintf(stderr, "[%s] stopped by signal %d at step %d; checkpoint saved. Continue with --resume.\n",
                        o->name, (int)g_stop_signal, step);
            rc = g_stop_signal ? 128 + (int)g_stop_signal : TRAIN_STOPPED;
            break;
        }
    }
    if (rc == TRAIN_OK) progress_end(&pr);
    free(x1); free(y);
    return rc;
}

// The steps, with Ctrl-C caught, then (if they all ran) the scorecard.
static int train_and_score(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train,
                           const CifarSet *test) {
    FILE *lf = fopen(rp->loss, "a");
    if (!lf) {
        fprintf(stderr, "error: cannot append to %s: %s\n", rp->loss, strerror(errno));
        return TRAIN_ERROR;
    }
    g_stop_signal = 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    mask_stop_signals(SIG_BLOCK);
    double this_start = wall_seconds();
    int rc = train_steps(r, o, rp, lf);
    mask_stop_signals(SIG_UNBLOCK);   // one that came during the last save: the flag, nothing more
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    fclose(lf);
    double this_time = wall_seconds() - this_start;
    if (rc == TRAIN_OK) {
        printf("[%s] trained %d steps: %.1f ms/step (%.1f s in this process)\n", o->name, r->steps,
               1000.0 * r->train_seconds / r->steps, this_time);
        if (o->scorecard) rc = finish_run(rp, o->name, o->preset, test, this_time);
    }
    return rc;
}

// Everything of trainer_run that happens while the folder is locked.
static int train_locked(const TrainOptions *o, const RunPaths *rp) {
    Run r;
    memset(&r, 0, sizeof r);
    r.tr.run = o->cfg.run;   // a resume keeps part of its checkpoint's (resume_run)
    r.steps = r.tr.run.steps;
    int have_ckpt = file_exists(rp->ckpt);
    int rc = check_existing_run(o, rp, have_ckpt, r.steps);
    if (rc >= 0) return rc;
    remove_stale_temp_files(rp->dir);
    CifarSet train, test;
    if (load_data(&train, &test) != 0) return TRAIN_ERROR;
    r.loss_hist = calloc(r.steps + 1, sizeof(float));
    r.gn_hist = calloc(r.steps + 1, sizeof(float));
    r.ml_hist = calloc(r.steps + 1, sizeof(float));
    r.val_hist = calloc(r.steps + 1, sizeof(float));
    for (int i = 0; i <= r.steps; i++) r.val_hist[i] = NAN;
    r.test = &test;
    r.last_val = NAN;
    rc = have_ckpt ? resume_run(&r, o, rp, &train) : start_run(&r, o, rp, &train);
    if (rc == TRAIN_OK) rc = train_and_score(&r, o, rp, &train, &test);
    run_free(&r);
    cifar_free(&train);
    cifar_free(&test);
    return rc;
}

// A run's name is its folder under --out: one path component, so that a
// run never lands outside --out, nor in --out itself.
static int check_run_name(const char *name) {
    if (!name || !name[0]) {
        fprintf(stderr, "error: --name is empty: a run needs a name, its folder under --out (e.g. --name base_s0)\n");
        return -1;
    }
    if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        fprintf(stderr, "error: --name '%s' is not a folder name: a run's name is one path component, without "
                        "'/' and not '.' or '..' (use --out for the folder the runs go in)\n", name);
        return -1;
    }
    return 0;
}

// Before anything is made on disk: the model that will train must take
// CIFAR-10's images as they are. A fresh run's model is the options'; a
// resumed one's is its checkpoint's (which resume_run reads and checks
// again; a checkpoint that cannot be read is its business).
static int check_config_fits_data(const TrainOptions *o, const RunPaths *rp) {
    char err[ERRLEN];
    Config c;
    if (o->resume && file_exists(rp->ckpt)) {
        if (checkpoint_read_config(rp->ckpt, &c, err, sizeof err) != 0) return TRAIN_OK;
        if (cifar_check_config(&c.model, rp->ckpt, err, sizeof err) == 0) return TRAIN_OK;
        fprintf(stderr, "error: cannot resume: %s\n", err);
        return TRAIN_ERROR;
    }
    if (cifar_check_config(&o->cfg.model, "--set", err, sizeof err) == 0) return TRAIN_OK;
    return run_error(err, TRAIN_USAGE);
}

// A start that failed before the run wrote anything leaves no folder
// behind: the run folder (and the folders above it that this call made)
// are removed when they hold nothing but the lock file.
static void remove_if_empty(const RunPaths *rp, const char *made_from) {
    DIR *d = opendir(rp->dir);
    if (!d) return;
    struct dirent *e;
    int others = 0;
    while ((e = readdir(d)))
        others += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, ".lock") != 0;
    closedir(d);
    if (others) return;
    char path[2100];
    snprintf(path, sizeof path, "%s/.lock", rp->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s", rp->dir);
    // up to made_from, the highest folder that did not exist before
    for (;;) {
        if (rmdir(path) != 0 || strcmp(path, made_from) == 0) break;
        char *slash = strrchr(path, '/');
        if (!slash || slash == path) break;
        *slash = '\0';
    }
}

int trainer_run(const TrainOptions *o) {
    char err[ERRLEN];
    char dir[2048];
    if (check_run_name(o->name) != 0) return TRAIN_USAGE;
    if (snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->name) >= (int)sizeof dir) {
        fprintf(stderr, "error: the run folder %s/%s: path too long\n", o->out_dir, o->name);
        return TRAIN_USAGE;
    }
    RunPaths rp;
    run_paths(&rp, dir);
    int rc = check_config_fits_data(o, &rp);
    if (rc != TRAIN_OK) return rc;
    // the highest folder of the run's path that does not exist yet, to
    // remove again if the start fails
    char made_from[2048] = "", probe[2048];
    snprintf(probe, sizeof probe, "%s", rp.dir);
    while (!file_exists(probe)) {
        snprintf(made_from, sizeof made_from, "%s", probe);
        char *slash = strrchr(probe, '/');
        if (!slash || slash == probe) break;
        *slash = '\0';
    }
    // the folder and its lock first: nothing below may touch a folder that
    // another train is writing
    if (make_dirs(rp.dir, err, sizeof err) != 0) return run_error(err, TRAIN_ERROR);
    int lock = lock_run_dir(rp.dir);
    if (lock < 0) {
        if (made_from[0]) remove_if_empty(&rp, made_from);
        return TRAIN_ERROR;
    }
    rc = train_locked(o, &rp);
    if (rc != TRAIN_OK && made_from[0]) remove_if_empty(&rp, made_from);
    close(lock);
    return rc;
}
