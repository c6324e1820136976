// test_wording.c: the project speaks only of itself.
//
// A reader has the code, the docs and the results, not the story of how they
// were made: that story is git log. So no tracked file (code, comments, help
// text, printed output, docs, results) may use the words of a work log. The
// test reads every tracked file (`git ls-files`; outside a git checkout,
// every file under the root but .git, build, runs and data), skips binary
// files (a NUL byte) and this file (it holds the word list), and reports
// each hit as file:line.
//
// The rule. A word is a run of letters, digits, '_' and '-', so names such
// as --stop-after, TRAIN_STOPPED or turn_table are not the words below.
// Case does not matter. In C sources (.c, .h) only the prose is read, the
// comments and the string literals (help text, printed output): a name in
// the code, such as a variable `turn` holding an angle, is not a word.
//   - issue, issues, session, sessions: never (the project has neither).
//   - "family" and a number (family-25, family 26): never; a machine is
//     named by its CPU and its cores.
//   - stop, stops, stopped, stopping: only where the line says what stops,
//     a run or a program: it names a run (run, runs, runner, running, a
//     sweep, an ablation), a signal (Ctrl-C, signal, SIGINT, SIGSTOP, an
//     interrupt, a kill), a checkpoint, --resume or an exit.
//   - turn, turns, turned, turning: only in the project's three senses:
//     the timing term (calls "take turns", timed "in turns", "per turn",
//     "each turn", "one turn", "turn about", or a line about medians,
//     rounds or interleaving), a rotation (the line speaks of RoPE, a pair
//     of features, an angle, a rotation, degrees, radians or grid slots),
//     and "turns X into / on / off / one-hot / back / local".
// Everything else is a hit: rewrite the line, or say what it means in the
// project's own terms.
#include "testutil.h"
#include <ctype.h>
#include <regex.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *const WORDS_ALWAYS[] = { "issue", "issues", "session", "sessions" };
static const char *const WORDS_STOP[] = { "stop", "stops", "stopped", "stopping" };
static const char *const WORDS_TURN[] = { "turn", "turns", "turned", "turning" };

// The allowed senses, as POSIX extended regular expressions over the line
// (case-insensitive); WB and WE keep them to whole words.
#define WB "(^|[^a-z0-9_-])"
#define WE "([^a-z0-9_-]|$)"
static const char *const RE_FAMILY = WB "family[ -]?[0-9]+";
static const char *const RE_STOP_OK =
    WB "(runs?|runner|running|sweep|ablation|ctrl-c|signals?|sig[a-z]+|interrupt[a-z]*|kill[a-z]*|"
    "checkpoints?|--resume|resumes?|resumed|exits?)" WE;
static const char *const RE_TURN_OK[] = {
    WB "(in|take|takes|taking|taken|per|each|one|their) turns?" WE "|" WB "turns? about" WE
        "|" WB "(median|rounds?|interleaved)" WE,
    WB "(rope|pairs?|angles?|rotat[a-z]*|deg|degrees?|rad|radians?|slots?|grid)" WE,
    WB "turn(s|ed|ing)?[^a-z0-9_-](.*[^a-z0-9_-])?(into|on|off|one-hot|back|local)" WE,
};

typedef struct { regex_t family, stop_ok, turn_ok[3]; } Rules;

static void rules_make(Rules *r) {
    ck_assert_int_eq(regcomp(&r->family, RE_FAMILY, REG_EXTENDED | REG_ICASE | REG_NOSUB), 0);
    ck_assert_int_eq(regcomp(&r->stop_ok, RE_STOP_OK, REG_EXTENDED | REG_ICASE | REG_NOSUB), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(regcomp(&r->turn_ok[i], RE_TURN_OK[i], REG_EXTENDED | REG_ICASE | REG_NOSUB), 0);
}

static void rules_free(Rules *r) {
    regfree(&r->family);
    regfree(&r->stop_ok);
    for (int i = 0; i < 3; i++) regfree(&r->turn_ok[i]);
}

static bool in_list(const char *word, const char *const *list, int n) {
    for (int i = 0; i < n; i++)
        if (strcasecmp(word, list[i]) == 0) return true;
    return false;
}

static bool matches(regex_t *re, const char *line) { return regexec(re, line, 0, NULL, 0) == 0; }

static bool is_word_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-'; }

// The first word of `line` the rule forbids, copied into `hit`; false if none.
static bool line_hit(Rules *r, const char *line, char *hit, size_t hitlen) {
    if (matches(&r->family, line)) { snprintf(hit, hitlen, "family <number>"); return true; }
    for (const char *p = line; *p;) {
        if (!is_word_char(*p)) { p++; continue; }
        const char *start = p;
        while (*p && is_word_char(*p)) p++;
        char word[32];
        if (p - start >= (long)sizeof word) continue;
        snprintf(word, sizeof word, "%.*s", (int)(p - start), start);
        bool bad = in_list(word, WORDS_ALWAYS, 4) ||
                   (in_list(word, WORDS_STOP, 4) && !matches(&r->stop_ok, line));
        if (!bad && in_list(word, WORDS_TURN, 4)) {
            bad = true;
            for (int i = 0; i < 3; i++) if (matches(&r->turn_ok[i], line)) bad = false;
        }
        if (bad) { snprintf(hit, hitlen, "%s", word); return true; }
    }
    return false;
}

// The prose of one line of C: comments and string literals kept, the code
// between them blanked. *in_comment carries a /* comment over lines.
static void c_prose(const char *line, bool *in_comment, char *out) {
    char in_string = 0;
    for (size_t i = 0; line[i]; i++) {
        char c = line[i], next = line[i + 1];
        bool keep = *in_comment || in_string;
        if (*in_comment) {
            if (c == '*' && next == '/') *in_comment = false;
        } else if (in_string) {
            if (c == '\\' && next) { out[i] = c; out[i + 1] = next; i++; continue; }
            if (c == in_string) in_string = 0;
        } else if (c == '/' && next == '/') {
            strcpy(out + i, line + i);
            return;
        } else if (c == '/' && next == '*') {
            *in_comment = true;
        } else if (c == '"' || c == '\'') {
            in_string = c;
        }
        out[i] = keep ? c : ' ';
    }
    out[strlen(line)] = '\0';
}

static bool is_c_source(const char *rel) {
    size_t n = strlen(rel);
    return (n > 2 && strcmp(rel + n - 2, ".c") == 0) || (n > 2 && strcmp(rel + n - 2, ".h") == 0);
}

// Checks one file (path relative to root); reports and counts its hits.
// A file with a NUL byte is binary and skipped.
static int check_file(Rules *r, const char *root, const char *rel, FILE *report) {
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t got;
    char *text = read_file_all(path, &got, err, sizeof err);
    if (!text) return 0;                     // listed by git, deleted in the worktree
    int hits = 0;
    char *prose = malloc(got + 1);
    ck_assert_ptr_nonnull(prose);
    bool c_file = is_c_source(rel), in_comment = false;
    if (memchr(text, '\0', got) == NULL) {
        int line_no = 1;
        for (char *line = text; line; line_no++) {
            char *next = strchr(line, '\n');
            if (next) *next++ = '\0';
            char hit[64];
            if (c_file) c_prose(line, &in_comment, prose);
            if (line_hit(r, c_file ? prose : line, hit, sizeof hit)) {
                fprintf(report, "%s:%d: \"%s\": %s\n", rel, line_no, hit, line);
                hits++;
            }
            line = next;
        }
    }
    free(prose);
    free(text);
    return hits;
}

// The files to read, one path a line relative to root: git's list, or
// (not a git checkout) every file but .git, build, runs and data.
static FILE *list_files(const char *root) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && { git ls-files 2>/dev/null | grep . || find . -type f "
             "! -path './.git/*' ! -path './build/*' ! -path './runs/*' ! -path './data/*' "
             "| sed 's|^\\./||'; }", root);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    return p;
}

// Every file under root; returns the number of hits (each reported) and
// the number of files read in *files.
static int check_tree(const char *root, FILE *report, int *files) {
    Rules r;
    rules_make(&r);
    FILE *list = list_files(root);
    char rel[2048];
    int hits = 0;
    *files = 0;
    while (fgets(rel, sizeof rel, list)) {
        rel[strcspn(rel, "\n")] = '\0';
        if (!*rel || strcmp(rel, "tests/test_wording.c") == 0) continue;
        hits += check_file(&r, root, rel, report);
        (*files)++;
    }
    pclose(list);
    rules_free(&r);
    return hits;
}

START_TEST(test_project_wording) {
    int files = 0;
    int hits = check_tree(project_root(), stderr, &files);
    printf("wording: %d files read, %d lines use the words of a work log\n", files, hits);
    fflush(stdout);
    ck_assert_int_gt(files, 100);
    ck_assert_msg(hits == 0, "%d line(s) speak of the project's history (listed above)", hits);
}
END_TEST

// ---------------------------------------------------------------------------
// The rule itself, on a made-up tree (not a git checkout: the find fallback).

static char g_dir[256];

static void write_text(const char *rel, const char *text, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void fake_setup(void) { tmpdir_make(g_dir, sizeof g_dir, "wording"); }
static void fake_teardown(void) { tmpdir_remove(g_dir); }

// Writes one file into the made-up tree and checks the tree; the report
// goes into `report`. Returns the hits; *files counts the files read.
static int check_one_file(const char *rel, const char *text, size_t len, char *report, size_t report_len,
                          int *files) {
    write_text(rel, text, len);
    FILE *r = fmemopen(report, report_len, "w");
    ck_assert_ptr_nonnull(r);
    int hits = check_tree(g_dir, r, files);
    fclose(r);
    return hits;
}

START_TEST(test_rule_allows_the_projects_senses) {
    const char *ok =
        "Ctrl-C stops a run; it continues with --resume.\n"
        "A run stopped part-way keeps its checkpoint.\n"
        "--stop-after 2 and TRAIN_STOPPED are names.\n"
        "The calls take turns; timed in turns, one turn each.\n"
        "2D RoPE turns q and k; the slowest pair turns 7 degrees.\n"
        "QK-norm keeps it level; without it attention turns one-hot.\n"
        "val_every=0 turns the checks off.\n";
    char report[2048] = "";
    int files = 0;
    int hits = check_one_file("page.md", ok, strlen(ok), report, sizeof report, &files);
    ck_assert_int_eq(files, 1);
    ck_assert_msg(hits == 0, "%s", report);
}
END_TEST

START_TEST(test_rule_reads_the_prose_of_c) {
    const char *src =
        "double turn[2];   // the angle of each pair\n"             // a name: not read
        "static int session_count;\n"                              // a name: not read
        "/* a block comment\n"
        "   from the last session */ int x;\n"                     // line 4: a hit
        "printf(\"%d s this session\\n\", n);   // output\n"      // line 5: a hit
        "char q = '\"'; int turn2; // \"quoted\" issue\n";          // line 6: a hit
    char report[2048] = "";
    int files = 0;
    int hits = check_one_file("prog.c", src, strlen(src), report, sizeof report, &files);
    ck_assert_int_eq(files, 1);
    ck_assert_msg(hits == 3, "%s", report);
    ck_assert_msg(strstr(report, "prog.c:4: \"session\"") && strstr(report, "prog.c:5: \"session\"") &&
                  strstr(report, "prog.c:6: \"issue\""), "%s", report);
}
END_TEST

START_TEST(test_rule_finds_a_work_log) {
    const char *log =
        "fine line\n"
        "As issue 40 asks,\n"                       // line 2
        "measured in this session.\n"               // 3
        "on the family-25 VM\n"                     // 4
        "done in a later turn\n"                    // 5
        "the work stopped here\n"                   // 6
        "Sessions and Issues, capitalised\n";       // 7
    const char binary[] = "issue\0session\n";      // a NUL byte: skipped
    write_text("blob.bin", binary, sizeof binary);
    char report[4096] = "";
    int files = 0;
    int hits = check_one_file("notes.md", log, strlen(log), report, sizeof report, &files);
    ck_assert_int_eq(files, 2);
    ck_assert_int_eq(hits, 6);
    const char *want[] = { "notes.md:2: \"issue\"", "notes.md:3: \"session\"",
                           "notes.md:4: \"family <number>\"", "notes.md:5: \"turn\"",
                           "notes.md:6: \"stopped\"", "notes.md:7: \"Sessions\"" };
    for (int i = 0; i < 6; i++) ck_assert_msg(strstr(report, want[i]) != NULL, "%s", report);
    ck_assert_msg(strstr(report, "blob.bin") == NULL, "%s", report);
}
END_TEST

static Suite *wording_suite(void) {
    Suite *s = suite_create("wording");
    add_tests(s, "repository", 60, TESTS(test_project_wording));
    TCase *rule = add_tests(s, "rule", 0, TESTS(test_rule_allows_the_projects_senses, test_rule_finds_a_work_log,
                                                test_rule_reads_the_prose_of_c));
    tcase_add_checked_fixture(rule, fake_setup, fake_teardown);
    return s;
}

int main(void) { return run_suite(wording_suite()); }
