#!/bin/sh
# exercises.sh: the exercises marked in the library's source (docs/exercises.md).
#
# An exercise is the body of a function between two marker lines:
#     // EXERCISE(rmsnorm_forward) begin
#     ...the reference body...
#     // EXERCISE end
# In a workbook the body becomes one call, exercise_not_written("name"),
# which says where the exercise is explained and aborts. The markers stay,
# so the reference bodies can be put back, byte for byte.
#
#   scripts/exercises.sh list                  name, file:line and function of every exercise
#   scripts/exercises.sh stub FILE BODIES [NAME]  FILE with its bodies (or only NAME's)
#                                              stubbed, to stdout; they are appended to BODIES
#   scripts/exercises.sh restore FILE BODIES [NAME]  FILE with the bodies of BODIES (or only
#                                              NAME's) put back, to stdout
#   scripts/exercises.sh workbook DIR BODIES OBJDIR [OBJECT...]
#                                              a copy of the project's files in DIR, every
#                                              exercise stubbed there (source and pages);
#                                              the reference bodies written to BODIES, and
#                                              compiled (OBJDIR's objects) to DIR/grade_reference;
#                                              each OBJECT (none of a file that holds an
#                                              exercise) copied to DIR, with its .d file
#   scripts/exercises.sh leaks DIR BODIES      every line under DIR that shows a line of a
#                                              reference body; exit 1 if there is one
#   scripts/exercises.sh apply FILE NAME OLD NEW  FILE with OLD changed to NEW in NAME's body
#                                              (OLD there exactly once), to stdout
#   scripts/exercises.sh files                 the project's files, one a line, NUL-free
# Run from the project root. Exit 0, or 1 with a message on stderr.
set -eu

usage() { sed -n '12,29p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
die() { echo "exercises.sh: $*" >&2; exit 1; }

# The learner mistakes that tests/test_exercises.c applies to the reference
# bodies: they quote the bodies, so a workbook leaves the file out.
MISTAKES=tests/exercise_mistakes.txt

# The files that hold exercises, in a stable order.
exercise_files() { grep -rl --include='*.c' 'EXERCISE([a-z0-9_]*) begin' common | LC_ALL=C sort; }

# awk programs. A marker line is matched on its own: a begin line names the
# exercise in parentheses, an end line is `// EXERCISE end`, either indented.
BEGIN_RE='^[ \t]*\/\/ EXERCISE\([a-z0-9_]+\) begin$'
END_RE='^[ \t]*\/\/ EXERCISE end$'

# The function an exercise is the body of: the last definition's first line
# before its begin marker (a line at column 0 with a name and a parenthesis).
list() {
    for f in $(exercise_files); do
        awk -v file="$f" '/^[A-Za-z_][^;]*\(/ { fn = $0; sub(/\(.*/, "", fn); sub(/.*[^A-Za-z0-9_]/, "", fn) }
                          '"/$BEGIN_RE/"' { n = $0; sub(/.*EXERCISE\(/, "", n); sub(/\).*/, "", n);
                                         printf "%-24s %-28s %s\n", n, file ":" NR, fn }' "$f"
    done
}

# The body lines go to BODIES between "@@ name" and "@@ end" lines.
# With a third argument, only that exercise; the others stay as they are.
stub() {
    awk -v bodies="$2" -v file="$1" -v only="${3:-}" "
        /$BEGIN_RE/ { if (inside) { print file \": exercise \" name \" has no end line\" > \"/dev/stderr\"; exit 1 }
                      name = \$0; sub(/.*EXERCISE\\(/, \"\", name); sub(/\\).*/, \"\", name)
                      if (only != \"\" && name != only) { print; next }
                      indent = \$0; sub(/\\/\\/.*/, \"\", indent)
                      print; print indent \"exercise_not_written(\\\"\" name \"\\\");\"
                      print \"@@ \" name >> bodies; inside = 1; next }
        /$END_RE/ && inside { print \"@@ end\" >> bodies; inside = 0; print; next }
        inside { print >> bodies; next }
        { print }
        END { if (inside) { print file \": exercise \" name \" has no end line\" > \"/dev/stderr\"; exit 1 } }
    " "$1"
}

restore() {
    awk -v bodies="$2" -v file="$1" -v only="${3:-}" "
        BEGIN { while ((getline line < bodies) > 0) {
                    if (line == \"@@ end\") cur = \"\"
                    else if (substr(line, 1, 3) == \"@@ \") { cur = substr(line, 4); body[cur] = \"\"; known[cur] = 1 }
                    else body[cur] = body[cur] line \"\\n\" } }
        /$BEGIN_RE/ { name = \$0; sub(/.*EXERCISE\\(/, \"\", name); sub(/\\).*/, \"\", name)
                      if (only != \"\" && name != only) { print; next }
                      if (!(name in known)) { print file \": no reference body for \" name > \"/dev/stderr\"; exit 1 }
                      print; printf \"%s\", body[name]; skip = 1; next }
        /$END_RE/ && skip { skip = 0; print; next }
        skip { next }
        { print }
    " "$1"
}

# FILE with OLD replaced by NEW in NAME's body, where OLD must occur exactly
# once (a learner's slip applied to a body: tests/exercise_mistakes.txt).
apply_change() {
    awk -v name="$2" -v old="$3" -v new="$4" -v file="$1" "
        /$BEGIN_RE/ { n = \$0; sub(/.*EXERCISE\\(/, \"\", n); sub(/\\).*/, \"\", n); inside = n == name; print; next }
        /$END_RE/ { inside = 0; print; next }
        inside && (i = index(\$0, old)) > 0 { hits++; if (hits == 1) \$0 = substr(\$0, 1, i - 1) new substr(\$0, i + length(old)) }
        inside && index(\$0, old) > 0 && hits > 1 { hits++ }
        { print }
        END { if (hits != 1) { printf \"%s: %s occurs %d times in the body of %s, not once\\n\", file, old, hits, name > \"/dev/stderr\"; exit 1 } }
    " "$1"
}

# The project's files: in a git checkout, the tracked ones and the new ones
# git does not ignore (a tracked file deleted in the working tree is left
# out); elsewhere (a copy without .git, as `make sanitize` makes) every file
# but the build products, the runs, the data and a workbook.
files() {
    if command -v git >/dev/null && [ -d .git ] || [ -f .git ]; then
        git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
            [ -f "$f" ] && printf '%s\n' "$f"; done
    else
        find . \( -path ./build -o -path ./runs -o -path ./data -o -path ./workbook \) -prune -o \
            -type f ! -name '*.o' -print | sed 's|^\./||' | LC_ALL=C sort
    fi
}

# The lines that give an answer away: every line of a reference body
# (BODIES), spaces trimmed, of 8 characters or more, that appears nowhere in
# the project's files but the bodies, the pages and the list of mistakes (a
# loop header that rope_forward shares with rope_backward is no secret). One
# a line, to stdout.
secrets() {
    cands=$(mktemp "${TMPDIR:-/tmp}/tinydit_cands_XXXXXX") || exit 1
    awk '/^@@ / { next } { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, "") } length($0) >= 8' "$1" | LC_ALL=C sort -u > "$cands"
    files | grep -v -e '\.md$' -e "^$MISTAKES\$" | while IFS= read -r f; do grep -Iq . "$f" 2>/dev/null && printf '%s\n' "$f"; done |
        tr '\n' '\0' | xargs -0 awk "/$BEGIN_RE/ { inside = 1; next } /$END_RE/ { inside = 0; next } !inside" |
        grep -oF -f "$cands" | LC_ALL=C sort -u | LC_ALL=C comm -23 "$cands" -
    rm -f "$cands"
}

# Every line of the files under DIR (text files; not .git, not the compiled
# reference) that holds a secret of BODIES: file:line:text, to stdout.
# Exit 0 if there is none.
leaks() {
    list=$(mktemp "${TMPDIR:-/tmp}/tinydit_secrets_XXXXXX") || exit 1
    secrets "$2" > "$list"   # from the project (the current folder)
    [ -s "$list" ] || { rm -f "$list"; die "no reference body lines in $2"; }
    found=$(grep -rnIF -f "$list" --exclude-dir=.git --exclude-dir=grade_reference --exclude-dir=build "$1" || true)
    rm -f "$list"
    [ -z "$found" ] || { echo "$found"; return 1; }
}

# A page of the workbook: in every quote of code (the `<!-- quote: FILE -->`
# blocks that tests/test_docs.c checks), the lines between an exercise's
# marker lines become the stub, as in the workbook's source, so the quote
# still matches it; a quote that shows part of a body without its markers
# (SECRETS: the secret lines) becomes a pointer to the exercise, and a
# secret in the prose becomes "…".
stub_page() {
    awk -v secrets="$2" '
        function trim(x) { sub(/^[ \t]+/, "", x); sub(/[ \t]+$/, "", x); return x }
        function flush(   i, leak) {
            leak = 0
            for (i = 1; i <= nq; i++) if (!stubbed[i] && (trim(q[i]) in secret)) leak = 1
            if (leak) {
                print "<!-- exercise: this quote of " file " shows part of an exercise body (docs/exercises.md) -->"
                print fence
                print "    ... the body of an exercise: docs/exercises.md says what to write ..."
                print "```"
            } else {
                print head; print fence
                for (i = 1; i <= nq; i++) print q[i]
                print "```"
            }
            nq = 0
        }
        BEGIN { while ((getline line < secrets) > 0) secret[line] = 1 }
        state == 0 && /^<!-- quote: [^ ]+ -->$/ { head = $0; file = $3; state = 1; next }
        state == 1 && /^```/ { fence = $0; state = 2; nq = 0; inside = 0; next }
        state == 1 { print head; state = 0 }
        state == 2 && /^```[ \t]*$/ { flush(); state = 0; next }
        state == 2 && '"/$BEGIN_RE/"' {
            name = $0; sub(/.*EXERCISE\(/, "", name); sub(/\).*/, "", name)
            indent = $0; sub(/\/\/.*/, "", indent)
            q[++nq] = $0; stubbed[nq] = 1
            q[++nq] = indent "exercise_not_written(\"" name "\");"; stubbed[nq] = 1
            inside = 1; next }
        state == 2 && '"/$END_RE/"' && inside { inside = 0; q[++nq] = $0; stubbed[nq] = 1; next }
        state == 2 && inside { next }
        state == 2 { q[++nq] = $0; stubbed[nq] = 0; next }
        { for (t in secret) while ((i = index($0, t)) > 0) $0 = substr($0, 1, i - 1) "…" substr($0, i + length(t))
          print }
        END { if (state == 2) flush(); else if (state == 1) print head }' "$1"
}

# A copy of the project as it stands (files, above; not the list of
# mistakes, which quotes the bodies), then the stubs: in the
# source, on the pages, and the reference compiled (OBJDIR: the objects of
# `make grade-objects`) into grade_reference/ for the grader, without debug
# information. The objects after OBJDIR (the build's objects of the
# library's other files and of the test programs) go into the workbook's
# build folder, times kept, so that its first `make grade` compiles only the
# files that hold exercises.
workbook() {
    dir=$1 bodies=$2 objdir=$3
    shift 3
    [ -e "$dir" ] && die "$dir exists already (a workbook keeps your work, so it is never overwritten). To start again from the stubs: rm -rf '$dir' && make exercises WORKBOOK='$dir'; or name a new folder: make exercises WORKBOOK=other_dir"
    for f in $(exercise_files); do
        rel=${f#common/}; [ -f "$objdir/${rel%.c}.o" ] || die "no $objdir/${rel%.c}.o: make grade-objects compiles it"
    done
    mkdir -p "$dir"
    files | grep -v -x -e "$MISTAKES" | tar -T - -cf - | tar -C "$dir" -xf -
    : > "$bodies"
    for f in $(exercise_files); do
        stub "$f" "$bodies" > "$dir/$f.tmp" && mv "$dir/$f.tmp" "$dir/$f"
        rel=${f#common/}; rel=${rel%.c}.o
        mkdir -p "$dir/grade_reference/$(dirname "$rel")"
        objcopy --strip-debug "$objdir/$rel" "$dir/grade_reference/$rel"
    done
    for o in "$@"; do
        src=${o%.o}.c; src=${src#*/}
        exercise_files | grep -q -x -F "$src" && die "$o is an object of $src, which holds exercises: not copied"
        mkdir -p "$dir/$(dirname "$o")" && cp -p "$o" "$dir/$o" || die "cannot copy $o to $dir"
        [ ! -f "${o%.o}.d" ] || cp -p "${o%.o}.d" "$dir/${o%.o}.d"
    done
    secrets "$bodies" > "$bodies.secrets"
    for page in $(cd "$dir" && grep -rl --include='*.md' -e '<!-- quote: ' . | sed 's|^\./||'); do
        stub_page "$dir/$page" "$bodies.secrets" > "$dir/$page.tmp" && mv "$dir/$page.tmp" "$dir/$page"
    done
    echo "workbook: $dir ($(grep -c '^@@ end$' "$bodies") exercises stubbed; docs/exercises.md says where to start)"
    leaks "$dir" "$bodies" >&2 || die "$dir still shows a line of a reference body (above)"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
    list)     [ $# -eq 0 ] || usage; list ;;
    stub)     [ $# -eq 2 ] || [ $# -eq 3 ] || usage; [ -f "$1" ] || die "no file $1"
              if [ $# -eq 3 ]; then grep -q "EXERCISE($3) begin" "$1" || die "no exercise $3 in $1"; fi
              stub "$@" ;;
    restore)  [ $# -eq 2 ] || [ $# -eq 3 ] || usage; [ -f "$1" ] || die "no file $1"; [ -f "$2" ] || die "no file $2"
              if [ $# -eq 3 ]; then grep -q "EXERCISE($3) begin" "$1" || die "no exercise $3 in $1"; fi
              restore "$@" ;;
    workbook) [ $# -ge 3 ] || usage; workbook "$@" ;;
    leaks)    [ $# -eq 2 ] || usage; [ -d "$1" ] || die "no folder $1"; [ -f "$2" ] || die "no file $2"; leaks "$1" "$2" ;;
    files)    [ $# -eq 0 ] || usage; files ;;
    apply)    [ $# -eq 4 ] || usage; [ -f "$1" ] || die "no file $1"; apply_change "$@" ;;
    *)        usage ;;
esac
