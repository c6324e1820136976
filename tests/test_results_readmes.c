// test_results_readmes.c: a results folder's README is the record of its
// runs, and nothing else.
//
// What a result means is taught on a docs page, from the folder's files;
// the folder's README.md says only where, when and how the runs were made,
// so that a reader finds each fact once. Every results/*/README.md (and one
// level deeper, results/*/*/README.md) is held to this shape:
//
//   - a title line "# ..." first, then exactly these sections, each once:
//     "## Machine", "## Code", "## Commands", "## Date", "## Wall time";
//   - outside fenced code blocks, every line is a heading, a table row
//     ("| ... |"), a list item ("- ...") or a list item's indented
//     continuation: no free paragraph, which is where explanations and
//     verdicts would go;
//   - "## Date" holds at least one date, YYYY-MM-DD, or says that the runs
//     do not record one ("not in the run's record", as
//     scripts/results_readme.sh writes it for runs made before they did);
//   - no time of day (hh:mm), and none of the words of a log, an
//     explanation or a verdict (LOG_WORDS below), outside code blocks.
//
// results/README.md, the index of the folders, is not a run's record and
// is not held to the shape. The checker is tested on made-up READMEs too:
// one of the right shape passes, and each way of breaking it is reported.
#include "testutil.h"
#include "io/paths.h"
#include <dirent.h>
#include <regex.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *const SECTIONS[] = { "Machine", "Code", "Commands", "Date", "Wall time" };
#define N_SECTIONS (int)(sizeof SECTIONS / sizeof *SECTIONS)

// Checks one README's text; each problem is one line "path:line: ..." in
// report. Returns the number of problems.
static int check_readme(const char *path, const char *text, FILE *report) {
    regex_t time_of_day, date;
    ck_assert_int_eq(regcomp(&time_of_day, "(^|[^0-9:])[0-2]?[0-9]:[0-5][0-9]([^0-9:]|$)", REG_EXTENDED), 0);
    ck_assert_int_eq(regcomp(&date, "(19|20)[0-9][0-9]-[01][0-9]-[0-3][0-9]", REG_EXTENDED), 0);
    int problems = 0, seen[N_SECTIONS] = { 0 }, section = -1, line_no = 0;
    bool in_code = false, in_item = false, dated = false;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (end ? 1 : 0);
        line_no++;
        const char *t = line;
        while (*t == ' ') t++;
        if (!strncmp(t, "```", 3)) { in_code = !in_code; continue; }
        if (in_code) continue;
        if (!*t) { in_item = false; continue; }
        if (line_no == 1) {
            if (strncmp(line, "# ", 2) != 0) {
                fprintf(report, "%s:1: the first line is not a title \"# ...\"\n", path);
                problems++;
            }
            continue;
        }
        if (!strncmp(line, "## ", 3)) {
            section = -1;
            for (int k = 0; k < N_SECTIONS; k++)
                if (!strcmp(line + 3, SECTIONS[k])) section = k;
            if (section < 0) {
                fprintf(report, "%s:%d: section \"%s\" is not one of a record's (Machine, Code, Commands, "
                        "Date, Wall time)\n", path, line_no, line + 3);
                problems++;
            } else if (seen[section]++) {
                fprintf(report, "%s:%d: a second \"## %s\"\n", path, line_no, SECTIONS[section]);
                problems++;
            }
            in_item = false;
            continue;
        }
        if (line[0] == '#') {
            fprintf(report, "%s:%d: a heading other than the title and the sections\n", path, line_no);
            problems++;
            continue;
        }
        bool item = !strncmp(line, "- ", 2), row = line[0] == '|', continuation = line[0] == ' ' && in_item;
        if (item) in_item = true;
        if (!item && !row && !continuation) {
            fprintf(report, "%s:%d: a paragraph (a record holds list items, tables and commands): %.60s\n",
                    path, line_no, line);
            problems++;
        }
        if (regexec(&time_of_day, line, 0, NULL, 0) == 0) {
            fprintf(report, "%s:%d: a time of day (the date is the record): %.60s\n", path, line_no, line);
            problems++;
        }
        if (section == 3 && (regexec(&date, line, 0, NULL, 0) == 0 || strstr(line, "not in the run's record")))
            dated = true;
    }
    for (int k = 0; k < N_SECTIONS; k++)
        if (!seen[k]) {
            fprintf(report, "%s: no \"## %s\" section\n", path, SECTIONS[k]);
            problems++;
        }
    if (seen[3] && !dated) {
        fprintf(report, "%s: \"## Date\" holds no date (YYYY-MM-DD), nor says the runs record none\n", path);
        problems++;
    }
    regfree(&time_of_day);
    regfree(&date);
    return problems;
}

// Every results/*/README.md and results/*/*/README.md under root; returns
// the number of problems, *n the number of READMEs read.
static int check_results(const char *root, FILE *report, int *n) {
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/results", root);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no folder %s", dir);
    int problems = 0;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[2304];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        // the folder's own README, then its folders' (one level)
        DIR *d2 = opendir(sub);
        ck_assert(d2 != NULL);
        struct dirent *e2;
        const char *names[256];
        int k = 0;
        names[k++] = ".";
        char held[256][256];
        while ((e2 = readdir(d2)) && k < 256)
            if (e2->d_name[0] != '.') {
                snprintf(held[k], sizeof held[k], "%s", e2->d_name);
                names[k] = held[k];
                k++;
            }
        closedir(d2);
        for (int i = 0; i < k; i++) {
            char path[2816];
            snprintf(path, sizeof path, "%s/%s/README.md", sub, names[i]);
            if (access(path, R_OK) != 0) continue;
            char *text = read_whole_file(path);
            ck_assert_msg(text != NULL, "cannot read %s", path);
            const char *rel = path + strlen(root) + 1;
            char shown[2816];
            snprintf(shown, sizeof shown, "%s", rel);
            char *dot = strstr(shown, "/./");   // results/x/./README.md -> results/x/README.md
            if (dot) memmove(dot, dot + 2, strlen(dot + 2) + 1);
            problems += check_readme(shown, text, report);
            free(text);
            (*n)++;
        }
    }
    closedir(d);
    return problems;
}

START_TEST(test_results_readmes_are_records) {
    int n = 0;
    int problems = check_results(project_root(), stderr, &n);
    printf("results READMEs: %d read, %d problems\n", n, problems);
    ck_assert_int_gt(n, 5);
    ck_assert_msg(problems == 0, "%d problems in the results READMEs (listed above)", problems);
}
END_TEST

static const char *GOOD =
    "# results/x: the quick preset\n"
    "\n"
    "## Machine\n"
    "\n"
    "- CPU: a CPU, 2 cores; Linux 6.1\n"
    "\n"
    "## Code\n"
    "\n"
    "- the build of commit `abc1234`\n"
    "\n"
    "## Commands\n"
    "\n"
    "```sh\n"
    "lab/lab ablation --preset quick --out RUNS   # so that it resumes, at 10:30\n"
    "```\n"
    "\n"
    "## Date\n"
    "\n"
    "- trained on 2026-12-01 and 2026-12-02, on two\n"
    "  machines\n"
    "\n"
    "## Wall time\n"
    "\n"
    "| run | training steps (min) |\n"
    "|---|---:|\n"
    "| p11_base_s0 | 49.5 |\n";

// Checks text as a README and returns the report.
static int check_text(const char *text, char *report, size_t len) {
    FILE *r = fmemopen(report, len, "w");
    ck_assert(r != NULL);
    int problems = check_readme("x/README.md", text, r);
    fclose(r);
    return problems;
}

START_TEST(test_checker_accepts_a_record) {
    char report[4096] = "";
    ck_assert_msg(check_text(GOOD, report, sizeof report) == 0, "%s", report);
}
END_TEST

// Each way of breaking the shape, made from GOOD, and what the report says.
START_TEST(test_checker_finds_what_is_not_a_record) {
    static const struct { const char *from, *to, *says; } cases[] = {
        { "## Wall time\n", "## Results\n", "section \"Results\" is not one of" },
        { "## Date\n\n- trained on 2026-12-01 and 2026-12-02, on two\n  machines\n",
          "## Date\n\n- trained in December\n", "holds no date" },
        { "## Code\n", "## Cod\n", "no \"## Code\" section" },
        { "- CPU: a CPU", "The runs were made here.\n- CPU: a CPU", "a paragraph" },
        { "on 2026-12-01 and", "on 2026-12-01 from 13:44 and", "a time of day" },
        { "# results/x", "results/x", "not a title" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *at = strstr(GOOD, cases[i].from);
        ck_assert_msg(at != NULL, "case %zu: %s is not in GOOD", i, cases[i].from);
        char text[4096], report[4096] = "";
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - GOOD), GOOD, cases[i].to, at + strlen(cases[i].from));
        int problems = check_text(text, report, sizeof report);
        ck_assert_msg(problems > 0 && strstr(report, cases[i].says),
                      "case %zu (%s): wanted a report saying \"%s\", got %d problems:\n%s", i, cases[i].to,
                      cases[i].says, problems, report);
    }
}
END_TEST

static Suite *readmes_suite(void) {
    Suite *s = suite_create("results_readmes");
    add_tests(s, "shape", 0, TESTS(test_results_readmes_are_records, test_checker_accepts_a_record,
                                   test_checker_finds_what_is_not_a_record));
    return s;
}

int main(void) { return run_suite(readmes_suite()); }
