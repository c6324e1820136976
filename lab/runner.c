// runner.c: many runs, a few at a time, without a job pool of our own.
//
// A run is one shell command line (`step6_ablation train ... --resume`).
// Keeping N of them going is what `xargs -P N` (GNU findutils, on every
// Debian machine) does, so the ablation and the sweep hand their lines to it
// and wait. What is left here is the part xargs cannot know: a stop signal
// sent to this program alone must reach the runs, so that each saves its
// checkpoint. xargs and the runs get a process group of their own, and a
// SIGINT or SIGTERM that reaches us is passed on to that whole group (the
// group also keeps a terminal's Ctrl-C from reaching the runs twice).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lab.h"
#include "eval/probe.h"
#include "io/paths.h"
#include "io/fileio.h"

extern char **environ;

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

// Starts `xargs -0 -n 1 -P jobs sh -c` in a new process group, reading the
// lines from a pipe. The pid, or -1 with errno set; *to_xargs is the pipe's
// end. Its commands inherit report_fd as their descriptor 3 (-1: none).
static pid_t spawn_xargs(int jobs, int *to_xargs, int report_fd) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    char parallel[16];
    snprintf(parallel, sizeof parallel, "%d", jobs);
    char *argv[] = { "xargs", "-0", "-n", "1", "-P", parallel, "sh", "-c", NULL };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    if (report_fd >= 0) posix_spawn_file_actions_adddup2(&fa, report_fd, 3);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);            // its own group: pid == pgid
    pid_t pid;
    int rc = posix_spawnp(&pid, "xargs", &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fd[0]);
    if (rc != 0) { close(fd[1]); errno = rc; return -1; }
    *to_xargs = fd[1];
    return pid;
}

// Writes every line, each ended by a NUL (xargs -0: one line, one command,
// whatever quotes and spaces it holds). With report, each line first says
// on descriptor 3 that it starts, its index and its PID, then becomes its
// command (exec: the same process, which a stop signal reaches as before).
// 0, or -1 when xargs quit reading.
static int feed_lines(int fd, const CommandLine *lines, int n, bool report) {
    for (int i = 0; i < n; i++) {
        static CommandLine wrapped;
        snprintf(wrapped, sizeof wrapped, "echo %d $$ >&3; exec %s", i, lines[i]);
        const char *line = report ? wrapped : lines[i];
        size_t len = strlen(line) + 1, done = 0;
        while (done < len) {
            ssize_t w = write(fd, line + done, len - done);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return -1;
            done += (size_t)w;
        }
    }
    return 0;
}

// The starts the lines report on their descriptor 3 ("INDEX PID" lines),
// handed to the watch; what is left of a line cut short in *partial.
// Returns what read returned (0: every writer is gone).
static ssize_t read_starts(int fd, JobWatch *watch, char *partial, size_t cap) {
    size_t used = strlen(partial);
    ssize_t got = read(fd, partial + used, cap - 1 - used);
    if (got <= 0) return got;
    partial[used + (size_t)got] = 0;
    char *line = partial, *end;
    while ((end = strchr(line, '\n'))) {
        int i;
        long pid;
        *end = 0;
        if (sscanf(line, "%d %ld", &i, &pid) == 2) job_watch_started(watch, i, (pid_t)pid);
        line = end + 1;
    }
    memmove(partial, line, strlen(line) + 1);
    return got;
}

// Waits for xargs, calling the watch once a second and at each start.
// Returns as waitpid does; EINTR when a signal came.
static pid_t wait_watching(pid_t pid, int *status, int report_fd, JobWatch *watch) {
    static char partial[4096];
    struct pollfd p = { report_fd, POLLIN, 0 };
    for (;;) {
        int ready = poll(&p, 1, 1000), poll_errno = errno;
        // at its end (every writer gone) the pipe stays readable: poll then only waits
        if (ready > 0 && read_starts(report_fd, watch, partial, sizeof partial) <= 0) p.fd = -1;
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w != 0) {
            if (w == pid) {
                while (p.fd >= 0 && read_starts(report_fd, watch, partial, sizeof partial) > 0) {}
                job_watch_tick(watch, true);
            }
            return w;
        }
        job_watch_tick(watch, false);
        if (ready < 0 && poll_errno == EINTR) { errno = EINTR; return -1; }
    }
}

// The lines run by xargs, as launch_lines (lab.h) says.
static int run_xargs(const CommandLine *lines, int n, int jobs, JobWatch *watch, int *stop_signal) {
    fflush(stdout);
    fflush(stderr);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;        // no SA_RESTART: waitpid returns on a signal
    g_stop = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signal(SIGPIPE, SIG_IGN);       // xargs gone early: a failed write, not a death
    int fd = -1, report[2] = { -1, -1 };
    if (watch && pipe2(report, O_CLOEXEC) != 0) report[0] = report[1] = -1;
    pid_t pid = spawn_xargs(jobs, &fd, report[1]);
    if (report[1] >= 0) close(report[1]);
    int status = 0, passed_on = 0;
    if (pid < 0) fprintf(stderr, "error: cannot start xargs (GNU findutils): %s\n", strerror(errno));
    else {
        feed_lines(fd, lines, n, report[0] >= 0);   // an interrupt while writing shows up in g_stop below
        close(fd);
        for (;;) {
            if (g_stop && !passed_on) {
                passed_on = 1;
                fprintf(stderr, "[runner] stopping: the running runs save a checkpoint; start again to resume\n");
                kill(-pid, (int)g_stop);
            }
            pid_t w = report[0] >= 0 ? wait_watching(pid, &status, report[0], watch) : waitpid(pid, &status, 0);
            if (w == pid) break;
            if (w < 0 && errno != EINTR) { status = 0; break; }
        }
    }
    if (report[0] >= 0) close(report[0]);
    signal(SIGPIPE, SIG_DFL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    *stop_signal = (int)g_stop;
    return pid < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The probe classifier of probe-FD (common/eval/probe.h), loaded before any
// run starts, so that a missing or damaged probe fails the runs before hours
// of training, not after. 0, or -1 with a message on stderr.
static int prepare_probe(void) {
    char err[4600];
    Probe *p = probe_for_scoring(1, err, sizeof err);
    if (!p) fprintf(stderr, "error: probe: %s\n", err);
    probe_free(p);
    return p ? 0 : -1;
}

int launch_lines(CommandLine *lines, int n, int jobs, bool need_probe, JobWatch *watch, int *stop_signal) {
    *stop_signal = 0;
    for (int i = 0; i < n; i++) printf("%s\n", lines[i]);
    int rc = n == 0 ? 0 : need_probe && prepare_probe() != 0 ? -1 : run_xargs(lines, n, jobs, watch, stop_signal);
    free(lines);
    return rc;
}

void shell_quote(const char *s, char *out, size_t outlen) {
    // Letters, digits and a few punctuation marks are safe as they are; any
    // other string goes in single quotes, with ' written as '\''.
    const char *safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%";
    if (*s && strspn(s, safe) == strlen(s)) { snprintf(out, outlen, "%s", s); return; }
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

// Appends word to a shell line (empty to begin with), quoted if it needs it.
static void line_add(char *line, size_t len, const char *word) {
    char q[PATH_MAX + 256];
    shell_quote(word, q, sizeof q);
    size_t used = strlen(line);
    snprintf(line + used, len - used, "%s%s", used ? " " : "", q);
}

void line_add_set(char *line, size_t len, const char *setting) {
    line_add(line, len, "--set");
    line_add(line, len, setting);
}

void train_line_start(char *line, size_t len, const char *exe, const char *name, Preset preset, const char *out_dir) {
    line[0] = 0;
    // --resume continues an interrupted run, and does nothing for a finished one
    const char *words[] = { exe, "train", "--name", name, "--preset", preset_name(preset), "--resume", "--out", out_dir };
    for (int i = 0; i < (out_dir ? 9 : 7); i++) line_add(line, len, words[i]);
}

int line_add_log(char *line, size_t len, const char *runs_dir, const char *name) {
    char log[PATH_MAX + 200], q[PATH_MAX + 256], err[1024];
    snprintf(log, sizeof log, "%s/%s", runs_dir, name);
    if (make_dirs(log, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    strcat(log, "/train.log");
    shell_quote(log, q, sizeof q);
    size_t used = strlen(line);
    snprintf(line + used, len - used, " >> %s 2>&1", q);
    return strlen(line) + 1 < len ? 0 : -1;
}

const char *lab_train_program(void) {
    static char exe[PATH_MAX];
    if (!exe[0] && project_path(exe, sizeof exe, "step6_ablation/step6_ablation") != 0)
        snprintf(exe, sizeof exe, "step6_ablation");
    return exe;
}

// `lab report [runs-dir]`: step 6 writes its own tables as Markdown
// (step6_ablation table --report); the lab hands the folder on.
int cmd_report(int argc, char **argv) {
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {   // --help, or a mistake
        bool help = argc == 2 && is_help_option(argv[1]);
        fprintf(help ? stdout : stderr, "usage: lab report [runs-dir]\n");
        return help ? 0 : 2;
    }
    char *args[] = { (char *)lab_train_program(), "table", "--report",
                     argc == 2 ? argv[1] : (char *)default_runs_dir(), NULL };
    execv(args[0], args);
    fprintf(stderr, "error: cannot run %s: %s\n", args[0], strerror(errno));
    return 1;
}
