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
#   scripts/exercises.sh list                  name and file:line of every exercise
#   scripts/exercises.sh stub FILE BODIES [NAME]  FILE with its bodies (or only NAME's)
#                                              stubbed, to stdout; they are appended to BODIES
#   scripts/exercises.sh restore FILE BODIES   FILE with the bodies of BODIES put back, to stdout
#   scripts/exercises.sh workbook DIR BODIES   a copy of the project's files in DIR, every
#                                              exercise stubbed there; the reference
#                                              bodies written to BODIES
#   scripts/exercises.sh files                 the project's files, one a line, NUL-free
# Run from the project root. Exit 0, or 1 with a message on stderr.
set -eu

usage() { sed -n '12,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
die() { echo "exercises.sh: $*" >&2; exit 1; }

# The files that hold exercises, in a stable order.
exercise_files() { grep -rl --include='*.c' 'EXERCISE([a-z0-9_]*) begin' common | LC_ALL=C sort; }

# awk programs. A marker line is matched on its own: a begin line names the
# exercise in parentheses, an end line is `// EXERCISE end`, either indented.
BEGIN_RE='^[ \t]*\/\/ EXERCISE\([a-z0-9_]+\) begin$'
END_RE='^[ \t]*\/\/ EXERCISE end$'

list() {
    for f in $(exercise_files); do
        awk -v file="$f" "/$BEGIN_RE/"' { n = $0; sub(/.*EXERCISE\(/, "", n); sub(/\).*/, "", n);
                                         printf "%-20s %s:%d\n", n, file, NR }' "$f"
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
    awk -v bodies="$2" -v file="$1" "
        BEGIN { while ((getline line < bodies) > 0) {
                    if (line == \"@@ end\") cur = \"\"
                    else if (substr(line, 1, 3) == \"@@ \") { cur = substr(line, 4); body[cur] = \"\"; known[cur] = 1 }
                    else body[cur] = body[cur] line \"\\n\" } }
        /$BEGIN_RE/ { name = \$0; sub(/.*EXERCISE\\(/, \"\", name); sub(/\\).*/, \"\", name)
                      if (!(name in known)) { print file \": no reference body for \" name > \"/dev/stderr\"; exit 1 }
                      print; printf \"%s\", body[name]; skip = 1; next }
        /$END_RE/ && skip { skip = 0; print; next }
        skip { next }
        { print }
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

# A copy of the project as it stands (files, above), then the stubs.
workbook() {
    dir=$1 bodies=$2
    [ -e "$dir" ] && die "$dir exists already (a workbook keeps your work, so it is never overwritten). To start again from the stubs: rm -rf '$dir' && make exercises WORKBOOK='$dir'; or name a new folder: make exercises WORKBOOK=other_dir"
    mkdir -p "$dir"
    files | tar -T - -cf - | tar -C "$dir" -xf -
    : > "$bodies"
    for f in $(exercise_files); do
        stub "$f" "$bodies" > "$dir/$f.tmp" && mv "$dir/$f.tmp" "$dir/$f"
    done
    echo "workbook: $dir ($(grep -c '^@@ end$' "$bodies") exercises stubbed; docs/exercises.md says where to start)"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
    list)     [ $# -eq 0 ] || usage; list ;;
    stub)     [ $# -eq 2 ] || [ $# -eq 3 ] || usage; [ -f "$1" ] || die "no file $1"
              if [ $# -eq 3 ]; then grep -q "EXERCISE($3) begin" "$1" || die "no exercise $3 in $1"; fi
              stub "$@" ;;
    restore)  [ $# -eq 2 ] || usage; [ -f "$1" ] || die "no file $1"; [ -f "$2" ] || die "no file $2"; restore "$1" "$2" ;;
    workbook) [ $# -eq 2 ] || usage; workbook "$1" "$2" ;;
    files)    [ $# -eq 0 ] || usage; files ;;
    *)        usage ;;
esac
