// crash.h: what a test program says when the code it tests crashes. Without
// it a segmentation fault inside a graded function reads "Received signal
// 11" (Check's report, for the test as a whole); with it the program first
// prints one line that names the signal, the functions on the stack (the
// innermost first) and the call the test was making:
//
//   crashed: signal 11 (SIGSEGV: a bad pointer, NULL or out of bounds) in
//   attention_backward < block_backward < model_backward < train_forward_backward;
//   the call: train_forward_backward of the tiny model 'qk_norm' ...
//
// A test says what it is calling with crash_context(...) (printf-style)
// before the call; the names come from the program's exported symbols, so
// a program linked with -rdynamic names every function that is not static
// (`make grade` links them so, scripts/grade.sh; without it the line names
// none). The handler then dies of the same signal, as the program would have.
#pragma once
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char crash_call[1024];

static inline void crash_context(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(crash_call, sizeof crash_call, fmt, ap);
    va_end(ap);
}

// The name of the exported function holding address pc, or NULL (a static
// function, or one outside the program: its nearest exported symbol would
// lie about it).
static inline const char *crash_function(void *pc) {
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(pc, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_sname) return NULL;
    char *start = (char *)info.dli_saddr;
    if ((char *)pc < start || (char *)pc >= start + sym->st_size) return NULL;
    return info.dli_sname;
}

static inline const char *crash_signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV: a bad pointer, NULL or out of bounds";
    case SIGBUS:  return "SIGBUS: a bad address";
    case SIGFPE:  return "SIGFPE: an integer division by zero";
    case SIGILL:  return "SIGILL: an illegal instruction";
    default:      return "a fatal signal";
    }
}

static void crash_handler(int sig) {
    char line[4096];
    int len = snprintf(line, sizeof line, "crashed: signal %d (%s)", sig, crash_signal_name(sig));
    void *frames[48];
    int n = backtrace(frames, 48), named = 0;
    for (int i = 0; i < n && len < (int)sizeof line - 200; i++) {
        const char *name = crash_function(frames[i]);
        if (!name || strncmp(name, "crash_", 6) == 0) continue;
        // the test framework and the program's own main: where the call came from, not what crashed
        if (strncmp(name, "srunner_", 8) == 0 || strncmp(name, "tcase_", 6) == 0 || strcmp(name, "main") == 0 ||
            strncmp(name, "grade_main", 10) == 0)
            break;
        len += snprintf(line + len, sizeof line - len, "%s%s", named ? " < " : " in ", name);
        named++;
    }
    if (crash_call[0]) len += snprintf(line + len, sizeof line - len, "; the call: %s", crash_call);
    if (len > (int)sizeof line - 2) len = (int)sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)len);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

// Installs the handler for the signals of a crash (not SIGABRT: an
// exercise's stub aborts on purpose, with its own message).
// The handler runs on a stack of its own, so that a runaway recursion is
// reported too.
static inline void crash_report_install(void) {
    static char alt[1 << 16];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
    void *warm[1];
    backtrace(warm, 1);   // loads what backtrace needs now, not inside the handler
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_handler;
    sa.sa_flags = SA_ONSTACK;
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}
