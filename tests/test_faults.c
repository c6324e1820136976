// test_faults.c: what `step6_ablation train` does when things go wrong.
//
// Each test runs the real program (step6_ablation/step6_ablation, built by `make check`
// before this test; the cwd is the project root) in a child process on the smoke
// preset with one thread, into a fresh folder under /tmp, and then looks at
// its exit code, its messages and the files it left:
//
//   SIGKILL at random steps, then --resume    the final weights, AdamW moments
//                                             and data order are bit-identical
//                                             to an uninterrupted run
//   writes that fail (RLIMIT_FSIZE; a full    a clear error, exit 1, and the
//   tmpfs where mount works)                  last checkpoint and loss.tsv intact
//   a NaN loss (lr=1e30)                      exit 3 (TRAIN_DIVERGED) naming the
//                                             step; the last checkpoint is finite
//   checkpoints truncated, bit-flipped, or    --resume: exit 1 and a message,
//   whose header lies about sizes/offsets     never a crash
//   CIFAR files short, long, missing, or      exit 1 and a message naming the file
//   with a bad label
//   bad arguments, to every step program      usage and exit 2
//   a second train on a folder in use         exit 1 naming the first's PID;
//                                             a killed run's lock is no obstacle
//   a model CIFAR-10 cannot fill (img,        exit 2 (1 for a checkpoint) naming
//   channels, patch), in train, a resume      both values, before anything is
//   and step0_tour; bad run names             made; nothing under --out
//   a FIFO, a device, a folder as data;       exit 1 at once, saying what it is
//   a batch too large for memory              or how many bytes; no folder left
//   a resume with other options               a line naming each one ignored
//   SIGINT every millisecond during a step    it stops after the step, saves,
//                                             exits 130; the resume continues
//
// Why not `chmod 0500` for "cannot write": CI and this machine run as root,
// and root writes through any permission bits. RLIMIT_FSIZE is enforced for
// root too: the child sets it before exec (and ignores SIGXFSZ), so every
// write past the limit fails with EFBIG, like a quota.
//
// The runs train on a small synthetic set in CIFAR-10's layout
// (tests/synth_cifar.h): they test the trainer, not the data. Only the bad
// CIFAR files need the real ones; without them that test is skipped
// (test_skip). The child's output goes through a pipe into
// <tmp>/<name>.log, so RLIMIT_FSIZE cannot eat the messages, and a failing
// assertion prints the tail of that log. Under `make sanitize` the program
// is sanitized too, and a sanitizer report in its output fails the test.
#include "testutil.h"
#include "synth_cifar.h"
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "train/trainer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "step6_ablation/step6_ablation"
#define CIFAR_FILE_BYTES ((size_t)CIFAR_RECORDS_PER_FILE * CIFAR_RECORD_BYTES)  // 30,730,000: a real batch file
#define RUN_TIMEOUT 600.0   // seconds; a smoke run takes a few (more under ASan)

static char g_tmp[256];
static char g_synth[256];   // the synthetic data set of this test, if any
static double g_t0;   // when the current test started
static const char *g_test;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void sleep_s(double s) {
    if (s <= 0) return;
    struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void tmp_begin(const char *test) {
    g_t0 = now_s();
    g_test = test;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/test_faults.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
}

static void tmp_end(void) {
    printf("%s: passed in %.1f s\n", g_test, now_s() - g_t0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    ck_assert_int_eq(system(cmd), 0);
    if (g_synth[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_synth);
        ck_assert_int_eq(system(cmd), 0);
    }
}

static char *path_in(char *out, size_t n, const char *a, const char *b) {
    snprintf(out, n, "%s/%s", a, b);
    return out;
}

// ---------------------------------------------------------------------------
// Files

static uint8_t *read_bytes(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    ck_assert_uint_eq(got, (size_t)n);
    buf[n] = 0;   // text files are strings too
    *len = (size_t)n;
    return buf;
}

static char *read_text(const char *path) {
    size_t len;
    char *s = (char *)read_bytes(path, &len);
    return s ? s : strdup("");
}

static void write_bytes(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

// Files matching a glob pattern.
static int count_matches(const char *pattern) {
    glob_t g;
    int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

// Rows of loss.tsv (lines after the header).
static int loss_rows(const char *path) {
    char *t = read_text(path);
    int lines = 0;
    for (char *p = t; *p; p++) lines += *p == '\n';
    free(t);
    return lines > 0 ? lines - 1 : 0;
}

// ---------------------------------------------------------------------------
// Running the program

typedef struct {
    const char *cifar_dir;   // CIFAR_DIR for the child; NULL: inherited
    long fsize_limit;        // > 0: RLIMIT_FSIZE in bytes for the child
} ChildOpts;

typedef struct {
    pid_t pid;
    int out_fd;              // the read end of the child's stdout + stderr
    char *out;               // what it printed so far
    size_t len, cap;
    char log[300];           // where the output is kept
} Child;

static pid_t spawn(Child *ch, const char *log, const ChildOpts *o, char *const argv[]) {
    memset(ch, 0, sizeof *ch);
    snprintf(ch->log, sizeof ch->log, "%s", log);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        setenv("OMP_NUM_THREADS", "1", 1);   // deterministic, and the cores are shared
        if (o && o->cifar_dir) setenv("CIFAR_DIR", o->cifar_dir, 1);
        if (o && o->fsize_limit > 0) {
            signal(SIGXFSZ, SIG_IGN);   // a write past the limit fails with EFBIG instead
            struct rlimit rl = { (rlim_t)o->fsize_limit, (rlim_t)o->fsize_limit };
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(121);
        }
        execv(argv[0], argv);
        fprintf(stderr, "cannot exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    ch->pid = pid;
    ch->out_fd = p[0];
    return pid;
}

// Reads whatever the child printed since the last call.
static void drain(Child *ch) {
    for (;;) {
        if (ch->cap - ch->len < 4097) {
            ch->cap = ch->cap ? 2 * ch->cap : 65536;
            ch->out = realloc(ch->out, ch->cap);
            ck_assert_ptr_nonnull(ch->out);
        }
        ssize_t r = read(ch->out_fd, ch->out + ch->len, 4096);
        if (r <= 0) break;
        ch->len += (size_t)r;
    }
    if (ch->out) ch->out[ch->len] = 0;
}

// Non-blocking: 1 and the wait status in *status once the child is gone.
static int poll_exit(Child *ch, int *status) {
    drain(ch);
    return waitpid(ch->pid, status, WNOHANG) == ch->pid;
}

// Waits (draining the pipe) and keeps the output in ch->log. Returns the
// wait status; a child that outlives the timeout is killed and fails the test.
static int finish(Child *ch, double timeout) {
    double t0 = now_s();
    int status = 0;
    while (!poll_exit(ch, &status)) {
        if (now_s() - t0 > timeout) {
            kill(ch->pid, SIGKILL);
            waitpid(ch->pid, &status, 0);
            ck_abort_msg("%s: still running after %.0f s", ch->log, timeout);
        }
        sleep_s(0.002);
    }
    // the child is gone: read the pipe to its end
    fcntl(ch->out_fd, F_SETFL, 0);
    drain(ch);
    close(ch->out_fd);
    write_bytes(ch->log, ch->out ? ch->out : "", ch->len);
    free(ch->out);
    ch->out = NULL;
    return status;
}

// step6_ablation train --name NAME --preset smoke --out DIR --no-scorecard
// --set threads=1 EXTRA... ; output in <g_tmp>/NAME.log.
static void start_train(Child *ch, const char *dir, const char *name, const ChildOpts *o,
                        const char *const *extra) {
    char *argv[64];
    int n = 0;
    argv[n++] = PROG;
    argv[n++] = "train";
    argv[n++] = "--name";  argv[n++] = (char *)name;
    argv[n++] = "--preset"; argv[n++] = "smoke";
    argv[n++] = "--out";   argv[n++] = (char *)dir;
    argv[n++] = "--no-scorecard";
    argv[n++] = "--set";   argv[n++] = "threads=1";
    for (int i = 0; extra && extra[i] && n < 62; i++) argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    char log[300];
    snprintf(log, sizeof log, "%s/%s.log", g_tmp, name);   // never on the disk under test
    spawn(ch, log, o, argv);
}

static int run_train(const char *dir, const char *name, const ChildOpts *o, const char *const *extra) {
    Child ch;
    start_train(&ch, dir, name, o, extra);
    return finish(&ch, RUN_TIMEOUT);
}

// The last lines of a log, for failure messages.
static const char *tail_of(const char *text) {
    size_t n = strlen(text);
    return n > 1500 ? text + n - 1500 : text;
}

// The child exited by itself (no signal, no sanitizer report) with `code`.
static void assert_exit(int status, int code, const char *log) {
    char *t = read_text(log);
    ck_assert_msg(!strstr(t, "Sanitizer") && !strstr(t, "runtime error:"),
                  "%s: sanitizer report:\n%s", log, tail_of(t));
    ck_assert_msg(WIFEXITED(status), "%s: killed by signal %d\n%s", log,
                  WIFSIGNALED(status) ? WTERMSIG(status) : -1, tail_of(t));
    ck_assert_msg(WEXITSTATUS(status) == code, "%s: exit %d, expected %d\n%s", log,
                  WEXITSTATUS(status), code, tail_of(t));
    free(t);
}

static void assert_log_has(const char *log, const char *needle) {
    char *t = read_text(log);
    ck_assert_msg(strstr(t, needle) != NULL, "%s: no \"%s\" in:\n%s", log, needle, tail_of(t));
    free(t);
}

// ---------------------------------------------------------------------------
// CIFAR-10: the real files for the test of bad files; the runs take the
// synthetic set.

static const char *CIFAR_FILES[6] = { "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                      "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin" };
static char g_cifar[4096];

static int have_real_cifar(const char *test) {
    const char *dir = cifar_dir();
    if (getenv("CIFAR_RECORDS") || !realpath(dir, g_cifar)) {
        test_skip("cifar", 1, test, "no CIFAR-10 at %s (make data, or set CIFAR_DIR)", dir);
        return 0;
    }
    for (int i = 0; i < 6; i++) {
        char p[4300];
        struct stat sb;
        if (stat(path_in(p, sizeof p, g_cifar, CIFAR_FILES[i]), &sb) != 0 ||
            (size_t)sb.st_size != CIFAR_FILE_BYTES) {
            test_skip("cifar", 1, test, "%s missing or not 30,730,000 bytes", p);
            return 0;
        }
    }
    if (access(PROG, X_OK) != 0) {
        ck_abort_msg("%s not built (make all builds it first)", PROG);
    }
    return 1;
}

// Data for the runs: a synthetic set in its own
// temporary folder (removed by tmp_end), which the children inherit through
// CIFAR_DIR and CIFAR_RECORDS. Always 1: the runs never skip.
static int have_cifar(const char *test) {
    g_synth[0] = 0;
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/test_faults_data.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_msg(synth_cifar_use(dir, test) == 1, "could not write a synthetic data set into %s", dir);
    snprintf(g_synth, sizeof g_synth, "%s", dir);
    if (access(PROG, X_OK) != 0) ck_abort_msg("%s not built (make all builds it first)", PROG);
    return 1;
}

// ---------------------------------------------------------------------------
// Checkpoints

static int ckpt_step(const char *path) {
    SafeTensors st;
    char err[1024];
    if (st_read(path, &st, err, sizeof err) != 0) return -1;
    const char *v = st_meta(&st, "train.step");
    int s = v ? atoi(v) : -1;
    st_free(&st);
    return s;
}

// Loads with checkpoint_load (what --resume uses) and checks that every
// tensor is finite. Returns train.step.
static int assert_good_checkpoint(const char *path) {
    Model m;
    SafeTensors st;
    char err[1024];
    ck_assert_msg(checkpoint_load(path, &m, &st, err, sizeof err) == 0, "%s does not load: %s", path, err);
    for (size_t i = 0; i < m.n_params; i++)
        ck_assert_msg(isfinite(m.params[i]), "%s: parameter %zu is %g", path, i, m.params[i]);
    for (int t = 0; t < st.n_tensors; t++)
        for (size_t i = 0; i < st.tensors[t].numel; i++)
            ck_assert_msg(isfinite(st.tensors[t].data[i]), "%s: %s[%zu] is not finite", path,
                          st.tensors[t].name, i);
    const char *v = st_meta(&st, "train.step");
    int step = v ? atoi(v) : -1;
    st_free(&st);
    model_free(&m);
    return step;
}

// Every tensor of a (weights, AdamW moments) and the trainer state that
// decides what comes next are bit for bit the same in b.
static void assert_same_checkpoint(const char *a, const char *b) {
    SafeTensors x, y;
    char err[1024];
    ck_assert_msg(st_read(a, &x, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(st_read(b, &y, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(x.n_tensors, y.n_tensors);
    size_t floats = 0;
    for (int i = 0; i < x.n_tensors; i++) {
        const StTensor *tx = &x.tensors[i], *ty = st_find(&y, tx->name);
        ck_assert_msg(ty != NULL, "%s has no %s", b, tx->name);
        ck_assert_uint_eq(tx->numel, ty->numel);
        ck_assert_msg(memcmp(tx->data, ty->data, tx->numel * sizeof(float)) == 0,
                      "%s differs between the uninterrupted and the resumed run", tx->name);
        floats += tx->numel;
    }
    const char *keys[] = { "train.step", "train.noise_rng", "train.data" };
    for (int k = 0; k < 3; k++) {
        const char *va = st_meta(&x, keys[k]), *vb = st_meta(&y, keys[k]);
        ck_assert_msg(va && vb && strcmp(va, vb) == 0, "%s: %s vs %s", keys[k], va, vb);
    }
    printf("  %d tensors (%zu floats: weights and AdamW moments) bit-identical, same data order and noise\n",
           x.n_tensors, floats);
    st_free(&x);
    st_free(&y);
}

// ===========================================================================
// SIGKILL at random steps, then --resume: the same weights as a run that was
// never interrupted.
//
// Checkpoints every 3 steps, so loss.tsv (flushed at each checkpoint) shows
// where the run is. Each round picks a random target step, waits until
// loss.tsv reaches it, waits a random few more milliseconds (so the kill
// also lands inside a step or inside a checkpoint write) and sends SIGKILL;
// the next round resumes. Seed: TEST_FAULTS_SEED, else the clock (printed).
START_TEST(test_sigkill_then_resume_is_bit_identical) {
    if (!have_cifar("sigkill")) return;
    tmp_begin(__func__);
    const char *every[] = { "--ckpt-every", "3", NULL };
    const char *resume[] = { "--ckpt-every", "3", "--resume", NULL };
    char log[400], ref[400], got[400], loss[400];

    double t0 = now_s();
    int st = run_train(g_tmp, "ref", NULL, every);
    double t_ref = now_s() - t0;
    assert_exit(st, TRAIN_OK, path_in(log, sizeof log, g_tmp, "ref.log"));

    const char *env = getenv("TEST_FAULTS_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL) ^ (unsigned)getpid();
    Rng r;
    rng_seed(&r, seed);
    printf("sigkill: TEST_FAULTS_SEED=%llu; uninterrupted run %.1f s\n", seed, t_ref);

    snprintf(loss, sizeof loss, "%s/killed/loss.tsv", g_tmp);
    snprintf(got, sizeof got, "%s/killed/ckpt.safetensors", g_tmp);
    int kills = 0, target = 0;
    for (int round = 0; round < 4; round++) {
        // targets climb, so every round has steps left to train
        target += 1 + (int)(rng_uniform(&r) * 13);
        Child ch;
        start_train(&ch, g_tmp, "killed", NULL, resume);
        int status, gone = 0;
        double t_start = now_s();
        while (!(gone = poll_exit(&ch, &status)) && loss_rows(loss) < target) {
            ck_assert_msg(now_s() - t_start < RUN_TIMEOUT, "round %d: no progress", round);
            sleep_s(0.001);
        }
        if (!gone) {
            sleep_s(0.04 * rng_uniform(&r));   // a few steps' worth (about 15 ms each)
            kill(ch.pid, SIGKILL);
        }
        status = finish(&ch, RUN_TIMEOUT);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
            kills++;
            int at = exists(got) ? assert_good_checkpoint(got) : 0;   // never torn
            printf("  kill %d: loss.tsv at %d rows (target %d), checkpoint at step %d\n", kills,
                   loss_rows(loss), target, at);
        } else {
            // it ended before the kill: only a normal end is acceptable
            assert_exit(status, TRAIN_OK, ch.log);
            printf("  round %d: finished before the kill (target %d)\n", round, target);
            break;
        }
    }
    ck_assert_msg(kills >= 2, "only %d of the runs were killed", kills);
    // a kill inside a save leaves its temporary file (named per process);
    // harmless to the next run, but it stays on disk
    char pattern[400];
    snprintf(pattern, sizeof pattern, "%s/killed/*.tmp*", g_tmp);
    printf("  temporary files left by the kills: %d\n", count_matches(pattern));
    st = run_train(g_tmp, "killed", NULL, resume);
    assert_exit(st, TRAIN_OK, path_in(log, sizeof log, g_tmp, "killed.log"));

    snprintf(ref, sizeof ref, "%s/ref/ckpt.safetensors", g_tmp);
    ck_assert_int_eq(ckpt_step(got), 60);
    assert_same_checkpoint(ref, got);

    // loss.tsv: all 60 rows, equal to the uninterrupted run's. Rows before a
    // resume point were parsed and printed again, so compare numbers.
    char ref_loss[400];
    snprintf(ref_loss, sizeof ref_loss, "%s/ref/loss.tsv", g_tmp);
    ck_assert_int_eq(loss_rows(loss), 60);
    char *a = read_text(ref_loss), *b = read_text(loss);
    char *sa = NULL, *sb = NULL;
    char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);   // headers
    for (int i = 1; i <= 60; i++) {
        la = strtok_r(NULL, "\n", &sa);
        lb = strtok_r(NULL, "\n", &sb);
        ck_assert_ptr_nonnull(la);
        ck_assert_ptr_nonnull(lb);
        int s1, s2;
        double l1, l2;
        ck_assert_int_eq(sscanf(la, "%d %lf", &s1, &l1), 2);
        ck_assert_int_eq(sscanf(lb, "%d %lf", &s2, &l2), 2);
        ck_assert_int_eq(s1, i);
        ck_assert_int_eq(s2, i);
        ck_assert_msg(fabs(l1 - l2) <= 2e-6, "step %d: loss %s vs %s", i, la, lb);
    }
    free(a);
    free(b);
    tmp_end();
}
END_TEST

// ===========================================================================
// Ctrl-C, again and again, while the steps compute: the run finishes the step
// it is in, saves, says so and exits 128 + SIGINT; the checkpoint loads and a
// resume continues from it.
//
// A signal handler that runs on a thread inside oneDNN's dnnl_sgemm corrupts
// the heap, whatever the handler does (glibc aborts: "corrupted size vs.
// prev_size while consolidating"); the trainer keeps the stop signals blocked
// while it computes and lets them in between steps. One Ctrl-C lands inside a
// product most of the time, not always, so this sends a SIGINT every
// millisecond from its first progress line until it names the signal it ends by: hundreds
// land inside a step of the quick preset's model. As the abort is not
// certain, the test first looks at what decides it: while the steps run, the
// computing thread (the only one, on one thread) blocks SIGINT and SIGTERM
// (SigBlk in /proc/PID/status), all but the moments between two steps.
static int child_gone(pid_t pid) {   // exited or killed, not yet reaped
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

// 1 when the main thread of pid blocks both SIGINT and SIGTERM, 0 when not,
// -1 when its status cannot be read.
static int blocks_stop_signals(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long long mask = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "SigBlk: %llx", &mask) == 1;
    fclose(f);
    if (!found) return -1;
    unsigned long long both = (1ULL << (SIGINT - 1)) | (1ULL << (SIGTERM - 1));
    return (mask & both) == both;
}

START_TEST(test_ctrl_c_during_the_steps_saves_and_stops) {
    if (!have_cifar("ctrl_c")) return;
    tmp_begin(__func__);
    const char *quick_model[] = { "--set", "dim=128", "--set", "depth=4", "--set", "heads=4",
                                  "--set", "batch=64", "--set", "steps=200", NULL };
    char log[400], ckpt[400];
    Child ch;
    start_train(&ch, g_tmp, "ctrl_c", NULL, quick_model);
    double t0 = now_s();
    while (!child_gone(ch.pid) && !(drain(&ch), ch.out && strstr(ch.out, "ctrl_c step "))) {   // the progress line
        ck_assert_msg(now_s() - t0 < RUN_TIMEOUT, "no progress line");
        sleep_s(0.005);
    }
    int looks = 0, blocked = 0;
    for (; looks < 100 && !child_gone(ch.pid); looks++) {
        int b = blocks_stop_signals(ch.pid);
        ck_assert_msg(b >= 0, "cannot read /proc/%d/status", (int)ch.pid);
        blocked += b;
        sleep_s(0.003);
    }
    ck_assert_msg(blocked >= looks * 9 / 10 && looks == 100, "during the steps SIGINT and SIGTERM were blocked "
                  "at %d of %d looks", blocked, looks);
    int sent = 0;
    while (!child_gone(ch.pid) && !(drain(&ch), strstr(ch.out, "stopped by signal"))) {
        ck_assert_msg(now_s() - t0 < RUN_TIMEOUT, "still running after %d SIGINTs", sent);
        kill(ch.pid, SIGINT);
        sent++;
        sleep_s(0.001);
    }
    int status = finish(&ch, RUN_TIMEOUT);
    path_in(log, sizeof log, g_tmp, "ctrl_c.log");
    assert_exit(status, 128 + SIGINT, log);
    assert_log_has(log, "stopped by signal 2 at step");
    int step = assert_good_checkpoint(path_in(ckpt, sizeof ckpt, g_tmp, "ctrl_c/ckpt.safetensors"));
    ck_assert_int_ge(step, 1);
    printf("ctrl-c: stop signals blocked at %d of %d looks during the steps; %d SIGINTs; stopped with a "
           "checkpoint at step %d\n", blocked, looks, sent, step);
    // the resume takes that checkpoint and trains on
    char stop_after[16];
    snprintf(stop_after, sizeof stop_after, "%d", step + 1);
    const char *resume[] = { "--set", "dim=128", "--set", "depth=4", "--set", "heads=4", "--set", "batch=64",
                             "--set", "steps=200", "--resume", "--stop-after", stop_after, NULL };
    assert_exit(run_train(g_tmp, "ctrl_c", NULL, resume), TRAIN_STOPPED, log);
    char want[64];
    snprintf(want, sizeof want, "resuming at step %d of 200", step);
    assert_log_has(log, want);
    ck_assert_int_eq(assert_good_checkpoint(ckpt), step + 1);
    tmp_end();
}
END_TEST

// ===========================================================================
// Writes that fail.

// A run stopped at step 20 (exit 4), the starting point of several tests.
static void train_to_step_20(const char *name) {
    const char *stop[] = { "--stop-after", "20", NULL };
    char log[400];
    snprintf(log, sizeof log, "%s/%s.log", g_tmp, name);
    assert_exit(run_train(g_tmp, name, NULL, stop), TRAIN_STOPPED, log);
}

// Resuming with a 64 KiB file size limit: the checkpoint (about 500 KB) at
// step 40 cannot be written. Exit 1, a message that says so, and the step-20
// checkpoint and loss.tsv exactly as they were. Then a fresh run under the
// same limit, which has no checkpoint to fall back on, says that instead.
START_TEST(test_write_failure_keeps_last_checkpoint) {
    if (!have_cifar("write failure")) return;
    tmp_begin(__func__);
    train_to_step_20("w");
    char ckpt[400], loss[400], log[400], tmp[400];
    snprintf(ckpt, sizeof ckpt, "%s/w/ckpt.safetensors", g_tmp);
    snprintf(loss, sizeof loss, "%s/w/loss.tsv", g_tmp);
    snprintf(tmp, sizeof tmp, "%s/w/*.tmp*", g_tmp);   // the writers' temporary files
    size_t ck_len, loss_len;
    uint8_t *ck_before = read_bytes(ckpt, &ck_len), *loss_before = read_bytes(loss, &loss_len);
    ck_assert_ptr_nonnull(ck_before);
    ck_assert_ptr_nonnull(loss_before);

    ChildOpts limited = { NULL, 64 * 1024 };
    const char *resume[] = { "--resume", NULL };
    int st = run_train(g_tmp, "w", &limited, resume);
    path_in(log, sizeof log, g_tmp, "w.log");
    assert_exit(st, TRAIN_ERROR, log);
    assert_log_has(log, "File too large");
    assert_log_has(log, "the last good checkpoint (step 20)");

    size_t n;
    uint8_t *ck_after = read_bytes(ckpt, &n);
    ck_assert_msg(n == ck_len && memcmp(ck_before, ck_after, n) == 0, "the step-20 checkpoint changed");
    ck_assert_msg(count_matches(tmp) == 0, "%s left behind", tmp);
    ck_assert_int_eq(assert_good_checkpoint(ckpt), 20);
    // loss.tsv: the 20 rows of the checkpoint as they were (rows after them
    // may follow; a resume drops them)
    uint8_t *loss_after = read_bytes(loss, &n);
    ck_assert_msg(n >= loss_len && memcmp(loss_before, loss_after, loss_len) == 0, "loss.tsv rows 1-20 changed");
    free(ck_before); free(ck_after); free(loss_before); free(loss_after);

    // The same limit from the start: the first checkpoint (step 20) fails.
    st = run_train(g_tmp, "fresh", &limited, NULL);
    path_in(log, sizeof log, g_tmp, "fresh.log");
    assert_exit(st, TRAIN_ERROR, log);
    assert_log_has(log, "File too large");
    assert_log_has(log, "no checkpoint was written yet");
    snprintf(ckpt, sizeof ckpt, "%s/fresh/ckpt.safetensors", g_tmp);
    ck_assert(!exists(ckpt));

    // And a limit so small that not even loss.tsv can be started.
    ChildOpts tiny = { NULL, 16 };
    st = run_train(g_tmp, "tiny", &tiny, NULL);
    path_in(log, sizeof log, g_tmp, "tiny.log");
    assert_exit(st, TRAIN_ERROR, log);
    assert_log_has(log, "loss.tsv");
    tmp_end();
}
END_TEST

// A full disk, for real: a 1 MiB tmpfs, filled up after the first run. Needs
// root and a mount that works (it does in this project's containers); skipped
// otherwise. All assertions come after the umount, so a failure cannot leave
// the mount behind.
START_TEST(test_full_disk_keeps_last_checkpoint) {
    if (!have_cifar("full disk")) return;
    tmp_begin(__func__);
    char mnt[300];
    snprintf(mnt, sizeof mnt, "%s/mnt", g_tmp);
    ck_assert_int_eq(mkdir(mnt, 0755), 0);
    if (geteuid() != 0 || mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0) {
        test_skip("tmpfs", 1, "full disk", "cannot mount a tmpfs here (%s)", strerror(errno));
        tmp_end();
        return;
    }
    char log[400], ckpt[400], filler[400];
    snprintf(log, sizeof log, "%s/d.log", g_tmp);
    snprintf(ckpt, sizeof ckpt, "%s/d/ckpt.safetensors", mnt);
    snprintf(filler, sizeof filler, "%s/filler", mnt);
    const char *stop[] = { "--stop-after", "20", NULL };
    const char *resume[] = { "--resume", NULL };
    int st1 = run_train(mnt, "d", NULL, stop);
    char *text1 = read_text(log);
    size_t ck_len = 0;
    uint8_t *before = read_bytes(ckpt, &ck_len);
    // fill the disk, then give back 8 KiB: enough for the resume to rewrite
    // loss.tsv, far too little for a 500 KB checkpoint
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    static char block[4096];
    while (write(fd, block, sizeof block) > 0) {}
    off_t size = lseek(fd, 0, SEEK_END);
    int trunc_ok = ftruncate(fd, size > 8192 ? size - 8192 : 0) == 0;
    close(fd);
    int st2 = run_train(mnt, "d", NULL, resume);
    char *text2 = read_text(log);
    size_t n = 0;
    uint8_t *after = read_bytes(ckpt, &n);
    int step_after = after ? ckpt_step(ckpt) : -1;
    char keep[400];
    snprintf(keep, sizeof keep, "%s/kept.safetensors", g_tmp);
    if (after) write_bytes(keep, after, n);
    int umount_rc = umount(mnt);
    ck_assert_int_eq(umount_rc, 0);

    ck_assert_msg(WIFEXITED(st1) && WEXITSTATUS(st1) == TRAIN_STOPPED, "first run:\n%s", tail_of(text1));
    ck_assert(trunc_ok);
    ck_assert_msg(WIFEXITED(st2) && WEXITSTATUS(st2) == TRAIN_ERROR, "resume on a full disk:\n%s",
                  tail_of(text2));
    ck_assert_msg(strstr(text2, "No space left on device") != NULL, "%s", tail_of(text2));
    ck_assert_msg(!strstr(text2, "Sanitizer"), "%s", tail_of(text2));
    ck_assert_msg(before && after && n == ck_len && memcmp(before, after, n) == 0,
                  "the step-20 checkpoint changed");
    ck_assert_int_eq(step_after, 20);
    ck_assert_int_eq(assert_good_checkpoint(keep), 20);
    free(text1); free(text2); free(before); free(after);
    tmp_end();
}
END_TEST

// --out somewhere no folder can be made (a path through a file).
START_TEST(test_output_folder_cannot_be_made) {
    if (access(PROG, X_OK) != 0) ck_abort_msg("%s not built", PROG);
    tmp_begin(__func__);
    char out[400], log[400];
    snprintf(out, sizeof out, "%s/a_file", g_tmp);
    write_bytes(out, "x", 1);
    snprintf(out, sizeof out, "%s/a_file/runs", g_tmp);
    Child ch;
    char *argv[] = { PROG, "train", "--name", "x", "--preset", "smoke", "--out", out, "--no-scorecard", NULL };
    spawn(&ch, path_in(log, sizeof log, g_tmp, "nofolder.log"), NULL, argv);
    assert_exit(finish(&ch, RUN_TIMEOUT), TRAIN_ERROR, log);
    assert_log_has(log, "cannot create folder");
    tmp_end();
}
END_TEST

// ===========================================================================
// A NaN loss: lr=1e30 sends the weights to 1e30 in one step, the next
// forward pass overflows. With a checkpoint every step, the last good one is
// the step before; it must load and be finite. Without one yet, the message
// must not point at a file that does not exist.
START_TEST(test_nan_loss_stops_with_exit_3) {
    if (!have_cifar("nan")) return;
    tmp_begin(__func__);
    const char *huge[] = { "--set", "lr=1e30", "--ckpt-every", "1", NULL };
    char log[400], ckpt[400], loss[400];
    int st = run_train(g_tmp, "nan", NULL, huge);
    path_in(log, sizeof log, g_tmp, "nan.log");
    assert_exit(st, TRAIN_DIVERGED, log);
    char *t = read_text(log);
    const char *e = strstr(t, "error: step ");
    ck_assert_msg(e != NULL, "no \"error: step N\" in:\n%s", tail_of(t));
    int bad = atoi(e + strlen("error: step "));
    ck_assert_int_ge(bad, 2);
    ck_assert_msg(strstr(t, "diverged") != NULL, "%s", tail_of(t));
    free(t);
    snprintf(ckpt, sizeof ckpt, "%s/nan/ckpt.safetensors", g_tmp);
    snprintf(loss, sizeof loss, "%s/nan/loss.tsv", g_tmp);
    ck_assert_int_eq(assert_good_checkpoint(ckpt), bad - 1);
    ck_assert_int_eq(loss_rows(loss), bad - 1);   // the diverged step is not logged
    // and the divergence is recorded as a result, with its step
    char diverged[400], want[64];
    snprintf(diverged, sizeof diverged, "%s/nan/diverged.json", g_tmp);
    snprintf(want, sizeof want, "\"diverged_at_step\":\t%d", bad);
    assert_log_has(diverged, want);
    printf("nan: diverged at step %d, checkpoint of step %d kept and finite\n", bad, bad - 1);

    // resuming it diverges again, the same way, and still keeps the checkpoint
    const char *again[] = { "--set", "lr=1e30", "--ckpt-every", "1", "--resume", NULL };
    st = run_train(g_tmp, "nan", NULL, again);
    assert_exit(st, TRAIN_DIVERGED, log);
    ck_assert_int_eq(assert_good_checkpoint(ckpt), bad - 1);

    const char *no_ckpt[] = { "--set", "lr=1e30", NULL };
    st = run_train(g_tmp, "nan0", NULL, no_ckpt);
    path_in(log, sizeof log, g_tmp, "nan0.log");
    assert_exit(st, TRAIN_DIVERGED, log);
    assert_log_has(log, "no checkpoint was written yet");
    tmp_end();
}
END_TEST

// ===========================================================================
// Broken checkpoints and `train --resume`.

// A checkpoint file split into its 8-byte length, JSON header and data.
typedef struct {
    uint8_t *bytes;
    size_t len, hlen;
    char *header;   // NUL-terminated copy
    char *plain;    // the same without the checksums, for header_edit (see ckpt_open)
} Ckpt;

// Removes the "crc32.*" metadata entries (io/checksum.h) from a header.
static void strip_checksums(char *h) {
    char *p;
    while ((p = strstr(h, ",\"crc32."))) {
        char *end = strstr(p + 2, "\":\"");
        ck_assert_ptr_nonnull(end);
        end = strchr(end + 3, '"');
        ck_assert_ptr_nonnull(end);
        memmove(p, end + 1, strlen(end + 1) + 1);
    }
}

static void ckpt_open(Ckpt *c, const char *path) {
    c->bytes = read_bytes(path, &c->len);
    ck_assert_ptr_nonnull(c->bytes);
    ck_assert_uint_ge(c->len, 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | c->bytes[i];
    ck_assert_uint_le(n, c->len - 8);
    c->hlen = (size_t)n;
    c->header = malloc(c->hlen + 1);
    memcpy(c->header, c->bytes + 8, c->hlen);
    c->header[c->hlen] = 0;
    // Header edits make a file as written before checksums existed: with
    // them, every edit would be caught at the CRC check, and the checks behind it
    // (which such files still rely on) would go untested.
    c->plain = strdup(c->header);
    strip_checksums(c->plain);
}

static void ckpt_close(Ckpt *c) {
    free(c->bytes);
    free(c->header);
    free(c->plain);
}

// A new file: the 8-byte length of `header`, `header`, and c's data section.
static void write_with_header(const char *path, const Ckpt *c, const char *header) {
    size_t h = strlen(header), dlen = c->len - 8 - c->hlen;
    uint8_t *out = malloc(8 + h + dlen);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(out + 8, header, h);
    memcpy(out + 8 + h, c->bytes + 8 + c->hlen, dlen);
    write_bytes(path, out, 8 + h + dlen);
    free(out);
}

// c's header with the first `from` (after `after`, if given) replaced by `to`.
static char *header_edit(const Ckpt *c, const char *after, const char *from, const char *to) {
    const char *start = c->plain;
    if (after) {
        start = strstr(c->plain, after);
        ck_assert_msg(start != NULL, "no %s in the header", after);
    }
    const char *at = strstr(start, from);
    ck_assert_msg(at != NULL, "no %s in the header", from);
    size_t pre = (size_t)(at - c->plain), fl = strlen(from), tl = strlen(to);
    char *h = malloc(strlen(c->plain) - fl + tl + 1);
    memcpy(h, c->plain, pre);
    memcpy(h + pre, to, tl);
    strcpy(h + pre + tl, at + fl);
    return h;
}

// The "[begin,end]" of a tensor's data_offsets in the header, copied to out.
static void offsets_of(const Ckpt *c, const char *tensor_key, char *out, size_t n) {
    const char *t = strstr(c->header, tensor_key);
    ck_assert_ptr_nonnull(t);
    const char *o = strstr(t, "\"data_offsets\":");
    ck_assert_ptr_nonnull(o);
    o += strlen("\"data_offsets\":");
    const char *e = strchr(o, ']');
    ck_assert_ptr_nonnull(e);
    snprintf(out, n, "%.*s", (int)(e - o + 1), o);
}

typedef struct {
    const char *name;
    uint8_t *bytes;   // the broken ckpt.safetensors
    size_t len;
    const char *expect;   // in the message
} Broken;

// A copy of the step-20 run with b's checkpoint in place of its own, then
// `train --resume` on it: the exit status, and the path of its log in log.
static int resume_broken(const Broken *b, const uint8_t *loss, size_t loss_len, char *log, size_t loglen) {
    char dir[400], p[500];
    const char *resume[] = { "--resume", NULL };
    snprintf(dir, sizeof dir, "%s/%s", g_tmp, b->name);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    write_bytes(path_in(p, sizeof p, dir, "loss.tsv"), loss, loss_len);
    write_bytes(path_in(p, sizeof p, dir, "ckpt.safetensors"), b->bytes, b->len);
    int st = run_train(g_tmp, b->name, NULL, resume);
    snprintf(log, loglen, "%s/%s.log", g_tmp, b->name);
    return st;
}

// Each broken file goes into a copy of the step-20 run, and `train --resume`
// must exit 1 with a message (naming the checkpoint or what is wrong in it).
static void resume_each(const Broken *b, int n) {
    char src_loss[400];
    snprintf(src_loss, sizeof src_loss, "%s/base/loss.tsv", g_tmp);
    size_t loss_len;
    uint8_t *loss = read_bytes(src_loss, &loss_len);
    ck_assert_ptr_nonnull(loss);
    for (int i = 0; i < n; i++) {
        char log[400];
        int st = resume_broken(&b[i], loss, loss_len, log, sizeof log);
        assert_exit(st, TRAIN_ERROR, log);
        assert_log_has(log, "error: ");
        assert_log_has(log, b[i].expect);
        char *t = read_text(log), *e = strstr(t, "error: ");
        char *nl = e ? strchr(e, '\n') : NULL;
        if (nl) *nl = 0;
        printf("  %-16s exit 1: %.150s\n", b[i].name, e ? e : "");
        free(t);
    }
    free(loss);
}

static Broken broken_bytes(const char *name, const uint8_t *bytes, size_t len, const char *expect) {
    Broken b = { name, malloc(len + 1), len, expect };
    memcpy(b.bytes, bytes, len);
    return b;
}

static Broken broken_header(const char *name, const Ckpt *c, char *header, const char *expect) {
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s/edit.tmp", g_tmp);
    write_with_header(tmp, c, header);
    free(header);
    Broken b = { name, NULL, 0, expect };
    b.bytes = read_bytes(tmp, &b.len);
    return b;
}

// Truncated files and headers whose sizes and offsets lie.
START_TEST(test_resume_from_truncated_or_lying_checkpoint) {
    if (!have_cifar("broken checkpoint")) return;
    tmp_begin(__func__);
    train_to_step_20("base");
    char path[400];
    snprintf(path, sizeof path, "%s/base/ckpt.safetensors", g_tmp);
    Ckpt c;
    ckpt_open(&c, path);
    Broken b[12];
    int n = 0;
    b[n++] = broken_bytes("empty", c.bytes, 0, "too short");
    b[n++] = broken_bytes("length_only", c.bytes, 8, "header length");
    b[n++] = broken_bytes("half_header", c.bytes, 8 + c.hlen / 2, "truncated");
    b[n++] = broken_bytes("short_data", c.bytes, c.len - 4, "outside the data section");
    // the length field lies: far too big, or a little too big
    uint8_t *lie = malloc(c.len);
    memcpy(lie, c.bytes, c.len);
    for (int i = 0; i < 8; i++) lie[i] = 0xff;
    lie[7] = 0x7f;
    b[n++] = broken_bytes("length_huge", lie, c.len, "header length");
    uint64_t more = c.hlen + 16;
    for (int i = 0; i < 8; i++) lie[i] = (uint8_t)(more >> (8 * i));
    b[n++] = broken_bytes("length_plus_16", lie, c.len, "after the JSON header");
    free(lie);
    // offsets past the end, a shape that does not match its bytes, two
    // tensors on the same bytes, a dtype that is not F32
    char offs[64];
    b[n++] = broken_header("offsets_past_end", &c,
                           header_edit(&c, "\"head.bias\"", "\"data_offsets\":[", "\"data_offsets\":[0,99999999999],\"x\":["),
                           "outside the data section");
    b[n++] = broken_header("shape_lie", &c, header_edit(&c, "\"head.bias\"", "\"shape\":[", "\"shape\":[1000,"),
                           "shape does not match");
    offsets_of(&c, "\"head.bias\"", offs, sizeof offs);
    char want[100];
    snprintf(want, sizeof want, "\"data_offsets\":%s,\"x\":", offs);
    b[n++] = broken_header("overlap", &c, header_edit(&c, "\"adamw_m.head.bias\"", "\"data_offsets\":", want),
                           "overlap");
    b[n++] = broken_header("dtype_f16", &c, header_edit(&c, NULL, "\"F32\"", "\"F16\""), "dtype");
    // trainer state that lies: a step past the run's end, a step that is not a number
    b[n++] = broken_header("step_past_end", &c, header_edit(&c, NULL, "\"train.step\":\"20\"", "\"train.step\":\"5000\""),
                           "past the run's steps=60");
    b[n++] = broken_header("step_not_number", &c, header_edit(&c, NULL, "\"train.step\":\"20\"", "\"train.step\":\"2O\""),
                           "no usable trainer state");
    resume_each(b, n);
    for (int i = 0; i < n; i++) free(b[i].bytes);
    ckpt_close(&c);

    // an honest checkpoint, but --set steps below its step: the history
    // arrays of the run are `steps` long (this once wrote past them)
    char log[400];
    const char *fewer[] = { "--resume", "--set", "steps=10", NULL };
    int st = run_train(g_tmp, "base", NULL, fewer);
    assert_exit(st, TRAIN_ERROR, path_in(log, sizeof log, g_tmp, "base.log"));
    assert_log_has(log, "past the run's steps=10");
    ck_assert_int_eq(assert_good_checkpoint(path), 20);
    tmp_end();
}
END_TEST

// Flipped bits. In the header they break the JSON, a name, a number or a
// string; in the data they change one weight. The reader's checks or the
// checkpoint's CRC32s (io/checksum.h) must refuse every one of 400 random
// single-bit flips of the header and 50 of the data, with a message, and
// without a crash (in this process, so `make sanitize` watches every read);
// a few go through `train --resume`: exit 1 with a message, never a signal.
// A missing parameter, a half-present AdamW state, bad config metadata and
// a file that is not safetensors at all go through `train --resume` too.
START_TEST(test_resume_from_bit_flipped_checkpoint) {
    if (!have_cifar("bit flips")) return;
    tmp_begin(__func__);
    train_to_step_20("base");
    char path[400], flip[400];
    snprintf(path, sizeof path, "%s/base/ckpt.safetensors", g_tmp);
    snprintf(flip, sizeof flip, "%s/flip.safetensors", g_tmp);
    Ckpt c;
    ckpt_open(&c, path);
    Rng r;
    rng_seed(&r, 20240229);
    int loaded = 0, refused = 0, by_crc = 0;
    for (int i = 0; i < 450; i++) {
        size_t at = i < 400 ? rng_below(&r, (uint32_t)(8 + c.hlen))
                            : 8 + c.hlen + rng_below(&r, (uint32_t)(c.len - 8 - c.hlen));
        int bit = (int)rng_below(&r, 8);
        c.bytes[at] ^= (uint8_t)(1u << bit);
        write_bytes(flip, c.bytes, c.len);
        c.bytes[at] ^= (uint8_t)(1u << bit);
        Model m;
        char err[4608];
        err[0] = 0;
        if (checkpoint_load(flip, &m, NULL, err, sizeof err) == 0) {
            loaded++;
            model_free(&m);
            printf("  byte %zu bit %d: loaded\n", at, bit);
        } else {
            refused++;
            by_crc += strstr(err, "CRC32") != NULL;
            ck_assert_msg(err[0] != 0, "byte %zu bit %d: refused without a message", at, bit);
        }
    }
    printf("bit flips: 450 single-bit flips, %d refused (%d by a CRC32 check, %d by the reader), %d loaded\n",
           refused, by_crc, refused - by_crc, loaded);
    ck_assert_msg(loaded == 0, "%d of 450 flipped checkpoints loaded", loaded);

    // through the program: header flips in a tensor name, the metadata and a
    // shape, and one in the data
    Broken b[9];
    int n = 0;
    const char *spots[] = { "\"head.bias\"", "\"train.data\"", "\"shape\":[" };
    const char *names[] = { "flip_name", "flip_metadata", "flip_shape" };
    for (int k = 0; k < 3; k++) {
        const char *s = strstr(c.header, spots[k]);
        ck_assert_ptr_nonnull(s);
        size_t at = 8 + (size_t)(s - c.header) + strlen(spots[k]) - 2;
        c.bytes[at] ^= 0x04;
        b[n++] = broken_bytes(names[k], c.bytes, c.len, "");
        c.bytes[at] ^= 0x04;
    }
    size_t data_at = c.len - 100;   // in the last tensor, adamw_v.head.bias
    c.bytes[data_at] ^= 0x08;
    b[n++] = broken_bytes("flip_data", c.bytes, c.len, "fails its CRC32 check");
    c.bytes[data_at] ^= 0x08;
    // a missing parameter, a half-present AdamW state, a bad config value,
    // and something that is not a checkpoint at all
    b[n++] = broken_header("missing_param", &c, header_edit(&c, NULL, "\"head.bias\":{", "\"head.bias_\":{"),
                           "head.bias");
    b[n++] = broken_header("half_adamw", &c, header_edit(&c, NULL, "\"adamw_v.head.bias\":{", "\"adamw_v.head.bia5\":{"),
                           "no usable trainer state");
    b[n++] = broken_header("bad_config", &c, header_edit(&c, NULL, "\"dim\":\"32\"", "\"dim\":\"-32\""), "dim");
    static const char text[] = "step\tloss\tgrad_norm\tmax_logit\n1\t1.0\t1.0\t1.0\n";
    b[n++] = broken_bytes("not_safetensors", (const uint8_t *)text, sizeof text - 1, "header length");
    // header flips through the program: exit 1 with a message
    char src_loss[400];
    snprintf(src_loss, sizeof src_loss, "%s/base/loss.tsv", g_tmp);
    size_t loss_len;
    uint8_t *loss = read_bytes(src_loss, &loss_len);
    for (int i = 0; i < 3; i++) {
        char log[400];
        int st = resume_broken(&b[i], loss, loss_len, log, sizeof log);
        char *t = read_text(log);
        ck_assert_msg(WIFEXITED(st) && !strstr(t, "Sanitizer"), "%s:\n%s", b[i].name, tail_of(t));
        int code = WEXITSTATUS(st);
        ck_assert_msg(code == TRAIN_ERROR && strstr(t, "error: "), "%s: exit %d\n%s", b[i].name, code, tail_of(t));
        char *e = strstr(t, "error: ");
        char *nl = e ? strchr(e, '\n') : NULL;
        if (nl) *nl = 0;
        printf("  %-16s exit %d%s%.150s\n", b[i].name, code, e ? ": " : "", e ? e : "");
        free(t);
    }
    // a checkpoint written before checksums existed resumes, and is saved with them
    Broken old = broken_header("no_checksums", &c, strdup(c.plain), "");
    char log[400], saved[400];
    assert_exit(resume_broken(&old, loss, loss_len, log, sizeof log), TRAIN_OK, log);
    SafeTensors st;
    char err[4608];
    snprintf(saved, sizeof saved, "%s/no_checksums/ckpt.safetensors", g_tmp);
    ck_assert_msg(st_read(saved, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(st_meta(&st, "crc32.__metadata__") != NULL, "a resumed old checkpoint was saved without checksums");
    st_free(&st);
    printf("  %-16s exit 0: resumed to the end, saved with checksums\n", old.name);
    free(old.bytes);
    free(loss);
    resume_each(b + 3, n - 3);
    for (int i = 0; i < n; i++) free(b[i].bytes);
    ckpt_close(&c);
    tmp_end();
}
END_TEST

// ===========================================================================
// Two trains on one run folder. The first holds <run>/.lock (flock, with its
// PID inside); a second, with or without --resume, must stop at once with a
// message naming that PID, exit 1, and leave the first run alone: the first
// is then stopped by SIGKILL, which leaves the lock file (with the dead PID)
// behind but releases the lock, and --resume continues the run to its end.
START_TEST(test_second_train_on_a_locked_folder_stops) {
    if (!have_cifar("run lock")) return;
    tmp_begin(__func__);
    char ckpt[400], lock[400], loss[400], log[400];
    snprintf(ckpt, sizeof ckpt, "%s/run/ckpt.safetensors", g_tmp);
    snprintf(lock, sizeof lock, "%s/run/.lock", g_tmp);
    snprintf(loss, sizeof loss, "%s/run/loss.tsv", g_tmp);
    const char *forever[] = { "--set", "steps=1000000", NULL };
    Child first;
    start_train(&first, g_tmp, "run", NULL, forever);
    int status;
    double t_start = now_s();
    while (!exists(ckpt)) {   // its first checkpoint (step 20 of the smoke preset)
        ck_assert_msg(!poll_exit(&first, &status), "the first train ended early");
        ck_assert_msg(now_s() - t_start < RUN_TIMEOUT, "the first train made no checkpoint");
        sleep_s(0.01);
    }
    char pid[32];
    snprintf(pid, sizeof pid, "PID %ld", (long)first.pid);
    const char *names[] = { "second_resume", "second_fresh" };
    for (int k = 0; k < 2; k++) {
        // under its own name for the log, into the first run's folder
        char *argv[] = { PROG, "train", "--name", "run", "--preset", "smoke", "--out", g_tmp, "--no-scorecard",
                         "--set", "threads=1", k == 0 ? "--resume" : NULL, NULL };
        Child second;
        snprintf(log, sizeof log, "%s/%s.log", g_tmp, names[k]);
        double t0 = now_s();
        spawn(&second, log, NULL, argv);
        status = finish(&second, RUN_TIMEOUT);
        assert_exit(status, TRAIN_ERROR, log);
        assert_log_has(log, "is in use by another train");
        assert_log_has(log, pid);
        char *t = read_text(log);
        ck_assert_msg(!strstr(t, "resuming") && !strstr(t, "preset,"), "the second train started:\n%s", tail_of(t));
        char *nl = strchr(t, '\n');
        if (nl) *nl = 0;
        printf("  %-14s exit 1 after %.2f s: %.200s\n", names[k], now_s() - t0, t);
        free(t);
        ck_assert_msg(!poll_exit(&first, &status), "the first train ended while the second ran");
    }
    kill(first.pid, SIGKILL);
    status = finish(&first, RUN_TIMEOUT);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char *held = read_text(lock);
    ck_assert_msg(strstr(held, pid + 4) == held, "the lock file holds '%s', not the killed PID", held);
    free(held);
    int at = assert_good_checkpoint(ckpt);
    ck_assert_int_ge(loss_rows(loss), at);   // the second trains cut nothing
    char steps[32];
    snprintf(steps, sizeof steps, "steps=%d", at + 3);
    const char *more[] = { "--resume", "--set", steps, NULL };
    int st = run_train(g_tmp, "run", NULL, more);
    assert_exit(st, TRAIN_OK, path_in(log, sizeof log, g_tmp, "run.log"));
    ck_assert_int_eq(assert_good_checkpoint(ckpt), at + 3);
    printf("  killed at checkpoint %d with its lock file left behind; --resume ran to step %d\n", at, at + 3);
    tmp_end();
}
END_TEST

// ===========================================================================
// CIFAR-10 files that are wrong: CIFAR_DIR points at a folder of links to the
// real files, with one of them replaced. Exit 1, and the message names the
// file and what is wrong with it.
START_TEST(test_bad_cifar_files) {
    if (!have_real_cifar("bad cifar")) return;
    tmp_begin(__func__);
    typedef struct { const char *name, *file; long size; int bad_label; const char *expect; } Case;
    const Case cases[] = {
        { "truncated", "data_batch_3.bin", 3073 * 10 + 17, 0, "30747 bytes, expected 30730000" },
        { "one_byte_long", "data_batch_5.bin", (long)CIFAR_FILE_BYTES + 1, 0, "30730001 bytes" },
        { "empty", "test_batch.bin", 0, 0, "0 bytes, expected 30730000" },
        { "missing", "data_batch_2.bin", -1, 0, "No such file" },
        { "bad_label", "test_batch.bin", (long)CIFAR_FILE_BYTES, 1, "label 12" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const Case *cs = &cases[k];
        char dir[400], p[4400], src[4400], log[400];
        snprintf(dir, sizeof dir, "%s/cifar_%s", g_tmp, cs->name);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        for (int i = 0; i < 6; i++) {
            if (strcmp(CIFAR_FILES[i], cs->file) == 0) continue;
            ck_assert_int_eq(symlink(path_in(src, sizeof src, g_cifar, CIFAR_FILES[i]),
                                     path_in(p, sizeof p, dir, CIFAR_FILES[i])), 0);
        }
        if (cs->size >= 0) {
            size_t len;
            uint8_t *real = read_bytes(path_in(src, sizeof src, g_cifar, cs->file), &len);
            ck_assert_ptr_nonnull(real);
            uint8_t *data = calloc((size_t)cs->size + 1, 1);
            memcpy(data, real, (size_t)cs->size < len ? (size_t)cs->size : len);
            if (cs->bad_label) data[5 * CIFAR_RECORD_BYTES] = 12;   // record 5
            write_bytes(path_in(p, sizeof p, dir, cs->file), data, (size_t)cs->size);
            free(real);
            free(data);
        }
        ChildOpts o = { dir, 0 };
        int st = run_train(g_tmp, cs->name, &o, NULL);
        snprintf(log, sizeof log, "%s/%s.log", g_tmp, cs->name);
        assert_exit(st, TRAIN_ERROR, log);
        assert_log_has(log, cs->file);
        assert_log_has(log, cs->expect);
        char *t = read_text(log), *e = strstr(t, "error: ");
        char *nl = e ? strchr(e, '\n') : NULL;
        if (nl) *nl = 0;
        printf("  cifar %-13s exit 1: %.160s\n", cs->name, e ? e : "");
        free(t);
    }
    // CIFAR_DIR pointing nowhere
    char nowhere[400], log[400];
    snprintf(nowhere, sizeof nowhere, "%s/no_such_dir", g_tmp);
    ChildOpts o = { nowhere, 0 };
    assert_exit(run_train(g_tmp, "nowhere", &o, NULL), TRAIN_ERROR, path_in(log, sizeof log, g_tmp, "nowhere.log"));
    assert_log_has(log, "no_such_dir");
    tmp_end();
}
END_TEST

// ===========================================================================
// Bad arguments: usage (or the list of what is allowed) and exit 2.

static int run_args(char *const argv[], const char *log, double timeout) {
    Child ch;
    spawn(&ch, log, NULL, argv);
    return finish(&ch, timeout);
}

// ===========================================================================
// Inputs checked before anything runs, and a failed start that leaves
// nothing behind: a model whose img, channels or patch the data cannot fill,
// class labels the model does not know, a label_drop or guidance out of range,
// run names that are not one folder name, data "files" that are a FIFO, a
// device or a directory, a batch too large for memory. Each: a clear message
// naming the values, a non-zero exit, and no folder under --out.

// The folder must not exist, or be empty: nothing was left behind.
static void assert_nothing_in(const char *dir, const char *log) {
    if (!exists(dir)) return;
    char pattern[600];
    snprintf(pattern, sizeof pattern, "%s/*", dir);
    int n = count_matches(pattern);
    snprintf(pattern, sizeof pattern, "%s/.[!.]*", dir);
    n += count_matches(pattern);
    char *t = read_text(log);
    ck_assert_msg(n == 0, "%s: a failed start left %d entries in %s\n%s", log, n, dir, tail_of(t));
    free(t);
}

START_TEST(test_config_that_does_not_fit_the_data_is_refused) {
    if (!have_cifar("config vs data")) return;
    tmp_begin(__func__);
    typedef struct { const char *set[4]; int code; const char *expect[2]; } Case;
    const Case cases[] = {
        { { "--set", "img=16" }, 2, { "img=16", "img=32" } },        // wrote past the batch: heap overflow
        { { "--set", "channels=1" }, 2, { "channels=1", "channels=3" } },
        { { "--set", "img=64" }, 2, { "img=64", "img=32" } },        // trained on uninitialised memory
        { { "--set", "img=48", "--set", "patch=16" }, 2, { "img=48", "img=32" } },
        { { "--set", "patch=5" }, 2, { "img=32", "patch=5" } },
        { { "--set", "classes=5" }, 1, { "classes=5 knows labels 0..4", "has label" } },   // CIFAR-10's are 0..9
        { { "--set", "label_drop=1.5" }, 2, { "'1.5' for label_drop", "[0, 1]" } },
        { { "--set", "label_drop=-0.1" }, 2, { "'-0.1' for label_drop", "[0, 1]" } },
        { { "--set", "guidance=-1" }, 2, { "'-1' for guidance", ">= 0" } },
        { { "--set", "guidance=inf" }, 2, { "'inf' for guidance", "finite" } },
        { { "--name", "../escape" }, 2, { "../escape", "one path component" } },
        { { "--name", "" }, 2, { "--name is empty", "" } },
        { { "--name", "a/b" }, 2, { "a/b", "one path component" } },
        { { "--name", ".." }, 2, { "'..'", "" } },
    };
    char out[400];
    snprintf(out, sizeof out, "%s/runs/deeper", g_tmp);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const Case *c = &cases[k];
        const char *name = "fit";
        const char *extra[8] = { NULL };
        int n = 0;
        for (int i = 0; i < 4 && c->set[i]; i += 2) {
            if (strcmp(c->set[i], "--name") == 0) { name = c->set[i + 1]; continue; }
            extra[n++] = c->set[i];
            extra[n++] = c->set[i + 1];
        }
        extra[n] = NULL;
        char *argv[20], log[400];
        int a = 0;
        argv[a++] = PROG; argv[a++] = "train"; argv[a++] = "--name"; argv[a++] = (char *)name;
        argv[a++] = "--preset"; argv[a++] = "smoke"; argv[a++] = "--out"; argv[a++] = out;
        argv[a++] = "--no-scorecard";
        for (int i = 0; extra[i]; i++) argv[a++] = (char *)extra[i];
        argv[a] = NULL;
        snprintf(log, sizeof log, "%s/fit_%zu.log", g_tmp, k);
        Child ch;
        spawn(&ch, log, NULL, argv);
        assert_exit(finish(&ch, RUN_TIMEOUT), c->code, log);
        for (int i = 0; i < 2; i++) assert_log_has(log, c->expect[i]);
        char runs[400];   // "../escape" would land in runs/, "" in runs/deeper itself
        assert_nothing_in(path_in(runs, sizeof runs, g_tmp, "runs"), log);
        char *t = read_text(log), *e = strstr(t, "error: ");
        if (e) e[strcspn(e, "\n")] = 0;
        printf("  case %zu, exit %d: %.150s\n", k, c->code, e ? e : "");
        free(t);
    }
    tmp_end();
}
END_TEST

// A checkpoint of a model that is not CIFAR-10's shape (img=16), made the way
// a trainer of another data set would; and one whose file has no checksums.
static void write_checkpoint(const char *path, const char *set, int with_checksums) {
    Config c = config_default();
    char err[1024];
    c.model.dim = 16; c.model.depth = 1; c.model.heads = 2; c.model.freq_dim = 8;
    if (set) ck_assert_msg(config_set(&c, set, err, sizeof err) == 0, "%s", err);
    Model m;
    ck_assert_msg(model_build(&m, &c.model, err, sizeof err) == 0, "%s", err);
    model_init_weights(&m, 1);
    ck_assert_msg(checkpoint_save(path, &m, &c.run, NULL, 0, NULL, 0, err, sizeof err) == 0, "%s", err);
    model_free(&m);
    if (with_checksums) return;
    Ckpt k;
    ckpt_open(&k, path);
    write_with_header(path, &k, k.plain);
    ckpt_close(&k);
}

START_TEST(test_programs_reading_a_checkpoint_check_its_shape) {
    if (!have_cifar("checkpoint vs data")) return;
    tmp_begin(__func__);
    const char *tour = "step0_tour/step0_tour";
    if (access(tour, X_OK) != 0) ck_abort_msg("%s not built", tour);
    char small[400], plain[400], log[400];
    write_checkpoint(path_in(small, sizeof small, g_tmp, "img16.safetensors"), "img=16", 1);
    write_checkpoint(path_in(plain, sizeof plain, g_tmp, "plain.safetensors"), NULL, 0);
    const char *flags[2] = { "--val-mse", "--test-image" };
    for (int i = 0; i < 2; i++) {
        char *argv[] = { (char *)tour, "--threads", "1", "--model", small, (char *)flags[i], NULL };
        snprintf(log, sizeof log, "%s/tour_%d.log", g_tmp, i);
        assert_exit(run_args(argv, log, RUN_TIMEOUT), 1, log);
        assert_log_has(log, "img=16");
        assert_log_has(log, "img=32");
    }
    // "checksums verified" only for a file that has them
    char *argv[] = { (char *)tour, "--threads", "1", "--model", plain, NULL };
    assert_exit(run_args(argv, path_in(log, sizeof log, g_tmp, "plain.log"), RUN_TIMEOUT), 0, log);
    char *t = read_text(log);
    ck_assert_msg(!strstr(t, "checksums verified"), "%s: claims checksums it does not have:\n%s", log, tail_of(t));
    ck_assert_msg(strstr(t, "no checksums"), "%s: does not say the file has no checksums:\n%s", log, tail_of(t));
    free(t);
    // a resume from a checkpoint of the wrong shape: the trainer's own check
    char run[400], ckpt[500];
    snprintf(run, sizeof run, "%s/runs/r16", g_tmp);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/ckpt.safetensors'", run, small, run);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(ckpt, sizeof ckpt, "%s/runs", g_tmp);
    const char *extra[] = { "--resume", NULL };
    int st = run_train(ckpt, "r16", NULL, extra);
    assert_exit(st, TRAIN_ERROR, path_in(log, sizeof log, g_tmp, "r16.log"));
    assert_log_has(log, "img=16");
    printf("  step0_tour --val-mse/--test-image and train --resume refuse an img=16 checkpoint; "
           "a file without checksums is not called verified\n");
    tmp_end();
}
END_TEST

START_TEST(test_data_that_is_not_a_regular_file) {
    if (!have_cifar("not a regular file")) return;
    tmp_begin(__func__);
    char real[4200];
    ck_assert_ptr_nonnull(realpath(cifar_dir(), real));
    typedef struct { const char *name, *file, *expect; } Case;
    const Case cases[] = {
        { "fifo", "data_batch_3.bin", "FIFO" },           // blocked the trainer forever in fopen
        { "device", "test_batch.bin", "character device" },
        { "folder", "data_batch_1.bin", "directory" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const Case *cs = &cases[k];
        char dir[400], p[4400], src[4400], log[400], out[400];
        snprintf(dir, sizeof dir, "%s/cifar_%s", g_tmp, cs->name);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        for (int i = 0; i < 6; i++) {
            path_in(p, sizeof p, dir, CIFAR_FILES[i]);
            if (strcmp(CIFAR_FILES[i], cs->file) != 0)
                ck_assert_int_eq(symlink(path_in(src, sizeof src, real, CIFAR_FILES[i]), p), 0);
            else if (k == 0) ck_assert_int_eq(mkfifo(p, 0644), 0);
            else if (k == 1) ck_assert_int_eq(symlink("/dev/zero", p), 0);
            else ck_assert_int_eq(mkdir(p, 0755), 0);
        }
        snprintf(out, sizeof out, "%s/runs_%s", g_tmp, cs->name);
        ChildOpts o = { dir, 0 };
        Child ch;
        double t0 = now_s();
        start_train(&ch, out, cs->name, &o, NULL);
        int st = finish(&ch, 60);   // the FIFO: at once, not after a timeout
        snprintf(log, sizeof log, "%s/%s.log", g_tmp, cs->name);
        assert_exit(st, TRAIN_ERROR, log);
        assert_log_has(log, cs->file);
        assert_log_has(log, cs->expect);
        ck_assert_msg(!exists(out), "%s: the failed start left %s behind", log, out);
        printf("  %-6s in place of %s: exit 1 in %.1f s, nothing left in --out\n", cs->name, cs->file, now_s() - t0);
    }
    tmp_end();
}
END_TEST

START_TEST(test_out_of_memory_says_how_much) {
    if (!have_cifar("out of memory")) return;
    tmp_begin(__func__);
    // under ASan, a failed calloc must return NULL, as it does without
    const char *asan = getenv("ASAN_OPTIONS");
    char *saved = asan ? strdup(asan) : NULL, opts[2048];
    snprintf(opts, sizeof opts, "%s%sallocator_may_return_null=1", asan ? asan : "", asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    char out[400], log[400];
    snprintf(out, sizeof out, "%s/runs", g_tmp);
    const char *extra[] = { "--set", "batch=2000000000", NULL };
    int st = run_train(out, "huge", NULL, extra);
    if (saved) { setenv("ASAN_OPTIONS", saved, 1); free(saved); } else unsetenv("ASAN_OPTIONS");
    path_in(log, sizeof log, g_tmp, "huge.log");
    // ASan says "WARNING: AddressSanitizer failed to allocate 0x... bytes"
    // before it returns NULL as asked: that line is the test's doing, not a
    // finding (any other sanitizer report still fails below)
    char *t = read_text(log), *w = strstr(t, "WARNING: AddressSanitizer failed to allocate");
    if (w) {
        char *bol = w, *eol = strchr(w, '\n');
        while (bol > t && bol[-1] != '\n') bol--;
        memmove(bol, eol ? eol + 1 : w + strlen(w), strlen(eol ? eol + 1 : w + strlen(w)) + 1);
        write_bytes(log, t, strlen(t));
    }
    free(t);
    assert_exit(st, TRAIN_ERROR, log);
    assert_log_has(log, "out of memory");
    assert_log_has(log, " bytes");
    assert_log_has(log, "batch=2000000000");
    ck_assert_msg(!exists(out), "%s: the failed start left %s behind", log, out);
    tmp_end();
}
END_TEST

// A resume takes the checkpoint's config: each option it ignores, and each
// it takes from the command line instead (steps of another preset), is
// named on a line of its own.
START_TEST(test_resume_names_the_options_it_ignores) {
    if (!have_cifar("resume options")) return;
    tmp_begin(__func__);
    const char *first[] = { "--stop-after", "1", NULL };
    char log[400];
    assert_exit(run_train(g_tmp, "opts", NULL, first), TRAIN_STOPPED, path_in(log, sizeof log, g_tmp, "opts.log"));
    const char *again[] = { "--resume", "--preset", "quick", "--set", "dim=64", "--set", "lr=0.001",
                            "--set", "steps=2", "--stop-after", "2", NULL };
    assert_exit(run_train(g_tmp, "opts", NULL, again), TRAIN_STOPPED, log);
    char *t = read_text(log);
    const char *lines[2] = { "ignores these options: ", "takes these options, not the checkpoint's: " };
    const char *want[2][3] = { { "dim=64 (checkpoint: 32)", "lr=1e-3", "(checkpoint: 3e-4)" },
                               { "steps=2 (checkpoint: 60)", NULL, NULL } };
    for (int i = 0; i < 2; i++) {
        char *l = strstr(t, lines[i]);
        ck_assert_msg(l != NULL, "%s: no line \"%s\":\n%s", log, lines[i], tail_of(t));
        char *bol = l;
        while (bol > t && bol[-1] != '\n') bol--;
        ck_assert_msg(strncmp(bol, "note: ", 6) == 0, "%s: \"%s\" is not on a line of its own", log, lines[i]);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(bol, "\n"), bol);
        for (int j = 0; j < 3 && want[i][j]; j++)
            ck_assert_msg(strstr(line, want[i][j]), "%s: no \"%s\" in \"%s\"", log, want[i][j], line);
        printf("  %s\n", line);
    }
    free(t);
    tmp_end();
}
END_TEST

START_TEST(test_bad_arguments_exit_2) {
    if (access(PROG, X_OK) != 0) ck_abort_msg("%s not built", PROG);
    tmp_begin(__func__);
    char out[400];
    snprintf(out, sizeof out, "%s/runs", g_tmp);   // in case a case wrongly starts training
    typedef struct { const char *args[12]; const char *expect; } Case;
    const Case cases[] = {
        { { "frobnicate" }, "usage" },
        { { "train", "--bogus" }, "usage" },
        { { "train", "--name" }, "usage" },                                  // missing value
        { { "summary", "--no-such-flag" }, "usage" },
        { { "train", "--preset", "smoke", "--out", out }, "--name" },        // no --name
        { { "train", "--name", "x", "--out", out, "--preset", "huge" }, "preset" },
        { { "train", "--name", "x", "--out", out, "--set", "nope=1" }, "nope" },
        { { "train", "--name", "x", "--out", out, "--set", "dim=abc" }, "dim" },
        { { "train", "--name", "x", "--out", out, "--set", "lr=nan" }, "lr" },
        { { "train", "--name", "x", "--out", out, "--set", "dim=30", "--set", "heads=4" }, "heads" },
        { { "train", "--name", "x", "--out", out, "--stop-after", "-3" }, "--stop-after" },
        { { "train", "--name", "x", "--out", out, "--ckpt-every", "0" }, "--ckpt-every" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *argv[16];
        int n = 0;
        argv[n++] = PROG;
        for (int i = 0; cases[k].args[i]; i++) argv[n++] = (char *)cases[k].args[i];
        argv[n] = NULL;
        char log[400];
        snprintf(log, sizeof log, "%s/args_%zu.log", g_tmp, k);
        int st = run_args(argv, log, 60);
        assert_exit(st, 2, log);
        assert_log_has(log, cases[k].expect);
    }
    ck_assert_msg(!exists(out), "a bad command line created %s", out);

    // every other step program that is built: an unknown option
    glob_t g;
    int progs = 0;
    if (glob("step*/step[0-9]_*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *p = g.gl_pathv[i];
            const char *base = strrchr(p, '/') + 1;
            struct stat sb;
            if (strchr(base, '.') || stat(p, &sb) != 0 || !S_ISREG(sb.st_mode) || access(p, X_OK) != 0)
                continue;
            char *argv[] = { (char *)p, "--definitely-not-an-option", NULL };
            char log[400];
            snprintf(log, sizeof log, "%s/%s.log", g_tmp, base);
            int st = run_args(argv, log, 120);
            assert_exit(st, 2, log);
            char *t = read_text(log);
            ck_assert_msg(strstr(t, "usage") || strstr(t, "Usage"), "%s printed no usage:\n%s", p, tail_of(t));
            free(t);
            progs++;
        }
        globfree(&g);
    }
    printf("bad arguments: %zu cases of step6_ablation, %d step programs with an unknown option\n",
           sizeof cases / sizeof cases[0], progs);
    tmp_end();
}
END_TEST

int main(void) {
    Suite *s = suite_create("faults");
    // each test is a few runs of seconds; ASan makes them slower
    add_tests(s, "faults", 1800,
              TESTS(test_bad_arguments_exit_2, test_bad_cifar_files, test_nan_loss_stops_with_exit_3,
                    test_output_folder_cannot_be_made, test_write_failure_keeps_last_checkpoint,
                    test_full_disk_keeps_last_checkpoint, test_resume_from_truncated_or_lying_checkpoint,
                    test_resume_from_bit_flipped_checkpoint, test_sigkill_then_resume_is_bit_identical,
                    test_second_train_on_a_locked_folder_stops,
                    test_config_that_does_not_fit_the_data_is_refused,
                    test_programs_reading_a_checkpoint_check_its_shape, test_data_that_is_not_a_regular_file,
                    test_out_of_memory_says_how_much, test_resume_names_the_options_it_ignores));
    add_tests(s, "ctrl_c", 600, TESTS(test_ctrl_c_during_the_steps_saves_and_stops));
    return run_suite(s);
}
