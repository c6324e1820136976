// paths.c: the project root found at run time (see paths.h).
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_root[PATH_MAX];
static char g_runs[PATH_MAX + 8];

static int holds_makefile_rules(const char *dir) {
    char probe[PATH_MAX + 32];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/mk/common.mk", dir);
    return stat(probe, &st) == 0 && S_ISREG(st.st_mode);
}

// Walks up from the folder of the running executable.
static int root_from_executable(char *out, size_t outlen) {
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return -1;
    dir[n] = 0;
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        *slash = 0;                          // one folder up
        const char *here = dir[0] ? dir : "/";
        if (holds_makefile_rules(here)) {
            snprintf(out, outlen, "%s", here);
            return 0;
        }
    }
    return -1;
}

const char *project_root(void) {
    if (g_root[0]) return g_root;
    const char *env = getenv("TINYDIT_HOME");
    if (env && env[0]) snprintf(g_root, sizeof g_root, "%s", env);
    else if (root_from_executable(g_root, sizeof g_root) != 0) snprintf(g_root, sizeof g_root, ".");
    return g_root;
}

int project_path(char *out, size_t outlen, const char *relative) {
    int n = snprintf(out, outlen, "%s/%s", project_root(), relative);
    return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

void project_command(char *out, size_t outlen, const char *relative) {
    char root[PATH_MAX], here[PATH_MAX];
    if (realpath(project_root(), root) && getcwd(here, sizeof here)) {
        size_t n = strlen(root);
        if (strcmp(here, root) == 0) { snprintf(out, outlen, "%s", relative); return; }
        const char *slash = strrchr(relative, '/');   // the program's own folder: ./NAME
        if (slash && strncmp(here, root, n) == 0 && here[n] == '/' &&
            strlen(here + n + 1) == (size_t)(slash - relative) &&
            strncmp(here + n + 1, relative, (size_t)(slash - relative)) == 0) {
            snprintf(out, outlen, ".%s", slash);
            return;
        }
        if (strncmp(here, root, n) == 0 && here[n] == '/' && !strchr(here + n + 1, '/')) {
            snprintf(out, outlen, "../%s", relative);
            return;
        }
    }
    if (project_path(out, outlen, relative) != 0) snprintf(out, outlen, "%s", relative);
}

const char *default_runs_dir(void) {
    if (!g_runs[0]) snprintf(g_runs, sizeof g_runs, "%s/runs", project_root());
    return g_runs;
}
