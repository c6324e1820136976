#!/bin/sh
# grade.sh: grades the exercises (docs/exercises.md) with the project's own
# tests. `make grade` runs it (it compiles the objects this links, and says
# where they are in the GRADE_* variables). Each exercise has up to five
# checks, each one test case of a test program, run on its own (Check's
# CK_RUN_CASE), or a golden file:
#   forward   the function's values against the formula
#   backward  its gradients against finite differences
#   threads   the same bits on 1, 2 and 3 OpenMP threads, at sizes where
#             every loop splits (an odd count splits an image's tokens)
#   parity    against PyTorch: the per-layer files of tests/golden/layers,
#             or model golden files (golden:baseline+adazero: those of
#             tests/golden; each holds the forward pass, every gradient,
#             three AdamW steps and an Euler sample)
#   smoke     a small model trains 30 steps on the synthetic images, its
#             loss and gradient norm compared step by step with the
#             reference's on the same weights, data and noise
# Each check prints "pass", or the first wrong number the test reports; a
# "-" is a check the exercise has none of.
#
# Each exercise is graded ON ITS OWN: its one program (tests/grade_main.c:
# every test program in one) is linked with your function for this
# exercise and the reference's for every other one (the other exercise
# functions of your objects are made weak with objcopy, and the
# reference's strong ones win), so the exercises can be done in any order
# and a failure names the exercise that is wrong.
#
#   scripts/grade.sh [--step N] [--times] [--first] [NAME...]
#     --step N     only step N's exercises (2 to 5 and 8 have some; "model" for docs/tinydit.md's)
#     --times      each exercise's grading time too
#     --first      after an exercise's first failed check, its other checks are not run
#     NAME...      only these exercises
# Run from the project root, by `make grade [EX=name]`. Exit 0 if every
# graded check passes, 1 if one fails, 2 on bad arguments or a missing object.
set -u

# name                    step   forward                          backward                          parity                 smoke                      threads
EXERCISES='
euler_step                model  test_model:sampler               -                                 golden:baseline        -                          test_layers:threads_flow
adamw_update              model  test_adamw:update                -                                 golden:baseline        test_model:smoke_baseline  test_adamw:threads
flow_loss                 model  test_layers:flow_loss            test_layers:flow_loss_grad        golden:baseline        test_model:smoke_baseline  test_layers:threads_flow
guided_velocity           model  test_model:guided_velocity       -                                 golden:classes+classes_adazero  -              test_layers:threads_flow
patchify                  model  test_layers:patchify             -                                 golden:baseline        test_model:smoke_baseline  test_layers:threads_patches
unpatchify                model  test_layers:unpatchify           -                                 golden:baseline        test_model:smoke_baseline  test_layers:threads_patches
time_embedding            model  test_layers:time_embedding       -                                 golden:baseline        test_model:smoke_baseline  test_layers:threads_time
softmax_forward           model  test_layers:softmax_forward      test_layers:attention             test_parity:attention  test_model:smoke_baseline  test_layers:threads_attention
softmax_backward          model  -                                test_layers:softmax_backward      test_parity:attention  test_model:smoke_baseline  test_layers:threads_attention
norm_modulate_backward    model  test_layers:norm_modulate        test_layers:norm_modulate_grad    golden:baseline        test_model:smoke_baseline  test_layers:threads_norm_modulate
block_backward            model  -                                test_model:grads                  golden:baseline+allfour+adazero  test_model:smoke_adazero  test_model:threads
rmsnorm_forward           2      test_layers:norm_forward         test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm   test_layers:threads_norms
rmsnorm_backward          2      -                                test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm   test_layers:threads_norms
qk_norm_backward          3      -                                test_layers:qk_norm               test_parity:attention  test_model:smoke_qknorm    test_layers:threads_attention
swiglu_forward            4      test_layers:activation_forward   test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu    test_layers:threads_activations
swiglu_backward           4      -                                test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu    test_layers:threads_activations
rope2d_tables             5      test_layers:rope_forward         -                                 test_parity:rope       test_model:smoke_rope2d    test_layers:threads_attention
rope_backward             5      -                                test_layers:rope_backward         test_parity:rope       test_model:smoke_rope2d    test_layers:threads_attention
logit_normal              8      test_layers:logit_normal         -                                 golden:recipe+recipe_ema  -                       -
ema_update                8      test_layers:ema_update           -                                 golden:recipe+recipe_ema  -                       -
heun_step                 8      test_layers:heun_step            -                                 golden:recipe+recipe_heun -                       test_layers:threads_flow
'

usage() { sed -n '28,33p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

step="" times=0 first=0 names="" job=""
while [ $# -gt 0 ]; do
    case $1 in
        --step)  [ $# -ge 2 ] || usage; step=$2; shift 2 ;;
        --times) times=1; shift ;;
        --first) first=1; shift ;;
        --job)   [ $# -ge 4 ] || usage; job=$2 job_x=$3 job_work=$4; shift 4 ;;   # one job of a grading (below)
        -h|--help) usage ;;
        -*) echo "grade.sh: unknown option $1" >&2; usage ;;
        *) names="$names $1"; shift ;;
    esac
done
case $step in
    ""|2|3|4|5|8|model) ;;
    1|6|7) echo "step $step has no exercises (docs/exercises.md lists them)"; exit 0 ;;
    *) echo "grade.sh: --step $step: no such step (1 to 8, or model)" >&2; exit 2 ;;
esac
for n in $names; do
    echo "$EXERCISES" | awk -v n="$n" '$1 == n { found = 1 } END { exit !found }' ||
        { echo "grade.sh: no exercise $n (scripts/exercises.sh list names them all)" >&2; exit 2; }
done
[ -n "${GRADE_DIR:-}" ] && [ -n "${GRADE_REFERENCE:-}" ] && [ -n "${GRADE_MAINS:-}" ] && [ -n "${GRADE_OBJS:-}" ] && [ -n "${GRADE_LINK:-}" ] ||
    { echo "grade.sh: run it with make grade (which compiles what it links)" >&2; exit 2; }
[ -d "$GRADE_DIR/obj" ] || { echo "grade.sh: no $GRADE_DIR/obj: run make grade, which compiles it" >&2; exit 2; }

# ---------------------------------------------------------------------------
# Linking one exercise's program: the grader (tests/grade_main.c and every
# test program it runs, GRADE_MAINS), the library's objects of the files
# that hold no exercise (GRADE_OBJS), and two copies of each file that
# holds exercises: yours, and the reference's (GRADE_REFERENCE).
LISTING=${GRADE_LISTING:-$(scripts/exercises.sh list)} || exit 2
export GRADE_LISTING="$LISTING"
EX_FILES=$(echo "$LISTING" | awk '{ sub(/:[0-9]+$/, "", $2); print $2 }' | sort -u)
OBJECTS=$GRADE_DIR/ex/objects   # the weakened copies, shared by the exercises that need the same one

# The exercise functions of file F; the one exercise X's; the file of X.
functions_of() { echo "$LISTING" | awk -v f="$1" '{ sub(/:[0-9]+$/, "", $2) } $2 == f { print $3 }'; }
function_of() { echo "$LISTING" | awk -v x="$1" '$1 == x { print $3 }'; }
file_of() { echo "$LISTING" | awk -v x="$1" '$1 == x { sub(/:[0-9]+$/, "", $2); print $2 }'; }

# out is missing or not newer than one of the files after it (a tie counts
# as stale: a shell may compare whole seconds)
stale() { o=$1; shift; [ -e "$o" ] || return 0; for i in "$@"; do [ "$o" -nt "$i" ] || return 0; done; return 1; }

# OUT: a copy of object IN with the symbols after it made weak (when stale).
weakened() {
    out=$1 in=$2; shift 2
    stale "$out" "$in" "$0" || return 0
    objcopy $(for sym in "$@"; do printf -- '-W %s ' "$sym"; done) "$in" "$out.$$.tmp" && mv "$out.$$.tmp" "$out"
}

# The objects of exercise X's program (X = "": the reference's program,
# which links the reference's objects as they are). In each file that holds
# exercises, yours: every exercise function but X's made weak; the
# reference's: every symbol made weak but the exercise functions other than
# X's. The strong one of each pair wins.
link_objects() {
    x=$1 list=$GRADE_DIR/ex/${1:-reference}/objects.txt
    # the list made last time, while no object it was made from has changed
    inputs=""
    for f in $EX_FILES; do rel=${f#common/}; rel=${rel%.c}.o; inputs="$inputs $GRADE_DIR/obj/$rel $GRADE_REFERENCE/$rel"; done
    stale "$list" $inputs "$0" || { cat "$list"; return 0; }
    if [ -z "$x" ]; then   # the reference's program: its objects alone, whatever yours hold
        objs="$GRADE_OBJS"
        for f in $EX_FILES; do rel=${f#common/}; objs="$objs $GRADE_REFERENCE/${rel%.c}.o"; done
        mkdir -p "$(dirname "$list")" && echo "$objs" > "$list.$$" && mv "$list.$$" "$list" && echo "$objs"
        return
    fi
    xfile=$(file_of "$x") xfn=$(function_of "$x")
    mkdir -p "$OBJECTS" || return 1
    objs="$GRADE_OBJS"
    for f in $EX_FILES; do
        rel=${f#common/}; rel=${rel%.c}.o; flat=$(echo "$rel" | tr / _)
        mine=$GRADE_DIR/obj/$rel ref=$GRADE_REFERENCE/$rel
        [ -f "$mine" ] && [ -f "$ref" ] || { echo "grade.sh: no $mine or $ref: run make grade" >&2; return 1; }
        # two copies of a variable, one weak, are one variable to the linker but two to
        # AddressSanitizer (an ODR violation): a file with exercises holds functions only
        vars=$(nm -g --defined-only "$ref" | awk '$2 ~ /^[BDGRSV]$/ { print $3 }')
        [ -z "$vars" ] || { echo "grade.sh: $f defines the variable(s) $vars: move them to a file without exercises" >&2; return 1; }
        tag=${flat%.o} others=$(functions_of "$f")
        if [ "$f" = "$xfile" ]; then
            tag=${tag}_$x others=$(echo "$others" | grep -v -x -F "$xfn")
        fi
        weakened "$OBJECTS/mine_$tag.o" "$mine" $others || return 1
        if stale "$OBJECTS/ref_$tag.o" "$ref" "$0"; then
            keep=" $(echo $others) "
            weakened "$OBJECTS/ref_$tag.o" "$ref" $(nm -g --defined-only "$ref" | awk '{ print $3 }' |
                while read -r sym; do case $keep in *" $sym "*) ;; *) echo "$sym" ;; esac; done) || return 1
        fi
        objs="$objs $OBJECTS/mine_$tag.o $OBJECTS/ref_$tag.o"
    done
    mkdir -p "$(dirname "$list")" && echo "$objs" > "$list.$$" && mv "$list.$$" "$list" && echo "$objs"
}

# Exercise X's program, linked if anything it is made of is newer.
program() {
    x=$1 dir=$GRADE_DIR/ex/${1:-reference}
    mkdir -p "$dir" || return 1
    for o in $GRADE_MAINS; do [ -f "$o" ] || { echo "grade.sh: no $o: run make grade" >&2; return 1; }; done
    objs=$(link_objects "$x") || return 1
    if stale "$dir/grader" $GRADE_MAINS $objs; then
        $GRADE_LINK $GRADE_MAINS $objs -o "$dir/grader.$$" ${GRADE_LIBS:-} > "$dir/link.txt" 2>&1 &&
            mv "$dir/grader.$$" "$dir/grader" ||
            { echo "grade.sh: linking $dir/grader failed:" >&2; cat "$dir/link.txt" >&2; rm -f "$dir/grader.$$"; return 1; }
    fi
    echo "$dir/grader"
}

# The reference's smoke run of a case, step by step: what yours is compared with.
reference_trace() {
    bin=$(program "") || return 1
    trace=$GRADE_DIR/ex/reference/$1.txt
    if stale "$trace" "$bin"; then
        CK_RUN_CASE=$1 TINYDIT_SMOKE_RECORD=$trace.$$ "$bin" test_model > "$trace.log" 2>&1 && mv "$trace.$$" "$trace" ||
            { echo "grade.sh: the reference's smoke run $1 failed (see $trace.log)" >&2; return 1; }
    fi
    echo "$trace"
}

# ---------------------------------------------------------------------------
# The first thing a failed check says: a stub's message; else the crash
# report of tests/crash.h (the signal, the functions on the stack, the
# call the test made); else Check's first failure (its
# file:line:F:case:test:0: prefix cut off); else what of the golden file
# is over its tolerance, and by how much (its whole line of numbers when
# no reason follows); else how the program ended.
first_failure() {
    line=$(grep -m1 'not written yet' "$out") && { echo "$line"; return; }
    line=$(grep -m1 '^crashed: ' "$out") && { echo "$line"; return; }
    line=$(grep -m1 -E '^[^:]+:[0-9]+:[FE]:' "$out") &&
        { echo "$line" | sed -E 's/^[^:]+:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+: //'; return; }
    line=$(awk '/ MISS/ { file = $1 } /^  over the tolerance:/ && file { sub(/^  /, ""); print file ": " $0; exit }' "$out")
    case $line in *"over the tolerance:"*[a-z]*) echo "$line"; return ;; esac
    line=$(awk '/^file / { head = $0 } / MISS/ && !row { row = $0; next } row && /^  / { more = more " |" $0 }
                END { if (row) { gsub(/  +/, " ", head); gsub(/  +/, " ", row); gsub(/  +/, " ", more)
                                 print "over a tolerance (columns:" substr(head, 5) "): " row more } }' "$out")
    [ -n "$line" ] && { echo "$line"; return; }
    [ "$1" -gt 128 ] && { echo "the program died of signal $(($1 - 128)): $(tail -n 1 "$out")"; return; }
    echo "exit status $1: $(tail -n 1 "$out")"
}

# One check, "-", golden:NAME or program:case, run by the grader BIN; its
# output in OUT. Prints its verdict; 0 pass. A test case that runs no test
# fails: a misspelt name must not pass.
run_check() {
    bin=$1 c=$2 out=$3
    [ "$c" = - ] && { echo "-"; return 0; }
    [ -n "$bin" ] || { echo "FAIL: could not link (above)"; return 1; }
    case $c in
        golden:*)
            golden_dir=$out.golden   # golden:NAME[+NAME...] compares tests/golden/NAME.safetensors alone (or those few)
            rm -rf "$golden_dir" && mkdir "$golden_dir" || return 1
            for g in $(echo "${c#golden:}" | tr + ' '); do
                ln -s "$PWD/tests/golden/$g.safetensors" "$golden_dir/" || return 1
            done
            "$bin" golden_check "$golden_dir" > "$out" 2>&1 ;;
        *) p=${c%%:*} case=${c#*:}
           trace=""
           case $case in smoke_*) trace=$(reference_trace "$case") || { echo "FAIL: no reference run"; return 1; } ;; esac
           CK_RUN_CASE=$case TINYDIT_SMOKE_REFERENCE=$trace "$bin" "$p" > "$out" 2>&1
           rc=$?
           if [ $rc -eq 0 ] && ! grep -q -E 'Checks: [1-9]' "$out"; then
               echo "FAIL: $p has no test case $case"; return 1; fi
           (exit $rc) ;;
    esac
    rc=$?
    if [ $rc -eq 0 ]; then
        smoke=$(grep -m1 'training smoke' "$out" | sed 's/.*: loss/loss/')
        echo "pass${smoke:+ ($smoke)}"
        return 0
    fi
    echo "FAIL: $(first_failure $rc)"
    return 1
}

now() { date +%s.%N; }
COLUMNS_IN_ORDER="forward backward threads parity smoke"

# The test of exercise X's check COL, from the table ("-": none; a row
# without a threads column has none).
check_of() {
    echo "$EXERCISES" | awk -v x="$1" -v col="$2" '$1 == x {
        k = col == "forward" ? 3 : col == "backward" ? 4 : col == "parity" ? 5 : col == "smoke" ? 6 : 7
        print (NF >= k ? $k : "-") }'
}

# ---------------------------------------------------------------------------
# The jobs, each run by this script again (`--job KIND X WORK`, its results
# in the folder WORK), so that xargs can run as many at once as the machine
# has cores (GRADE_JOBS): link X's program; make the reference's smoke run X;
# run X's check (X = exercise:column); or run X's checks in order, stopping
# at the first failure (--first).
one_check() {   # exercise column
    t0=$(now)
    bin=$(cat "$job_work/$1.bin" 2>/dev/null)
    verdict=$(run_check "$bin" "$(check_of "$1" "$2")" "$job_work/$1.$2.out")
    st=$?
    echo "$verdict" > "$job_work/$1.$2.verdict"
    echo "$t0 $(now)" > "$job_work/$1.$2.time"
    return $st
}
if [ -n "$job" ]; then
    case $job in
        link)  program "$job_x" > "$job_work/$job_x.bin" 2> "$job_work/$job_x.linkerr" ;;
        trace) reference_trace "$job_x" > /dev/null ;;
        check) one_check "${job_x%%:*}" "${job_x#*:}" ;;
        chain) failed=0
               for col in $COLUMNS_IN_ORDER; do
                   if [ $failed -eq 1 ]; then echo "not run" > "$job_work/$job_x.$col.verdict"; continue; fi
                   one_check "$job_x" "$col" || failed=1
               done ;;
        *) usage ;;
    esac
    exit 0
fi

# ---------------------------------------------------------------------------
# The grading: the selected exercises' programs linked, the reference's
# smoke runs they compare with made, then their checks, all as jobs; then
# the verdicts, in the table's order.
work=$(mktemp -d "${TMPDIR:-/tmp}/tinydit_grade_XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
selected=$(echo "$EXERCISES" | while read -r name st rest; do
    [ -n "$name" ] || continue
    [ -z "$step" ] || [ "$st" = "$step" ] || continue
    [ -z "$names" ] || case " $names " in *" $name "*) ;; *) continue ;; esac
    echo "$name"
done)
JOBS=${GRADE_JOBS:-$(nproc 2>/dev/null || echo 1)}
for x in $selected; do echo "$x"; done | xargs -P "$JOBS" -I{} "$0" --job link {} "$work"
for x in $selected; do cat "$work/$x.linkerr" >&2; done
smokes=$(for x in $selected; do check_of "$x" smoke; done | grep '^test_model:smoke_' | sed 's/.*://' | sort -u)
if [ -n "$smokes" ]; then
    program "" > /dev/null || exit 2
    for c in $smokes; do echo "$c"; done | xargs -P "$JOBS" -I{} "$0" --job trace {} "$work"
fi
if [ $first -eq 1 ]; then
    for x in $selected; do echo "$x"; done | xargs -P "$JOBS" -I{} "$0" --job chain {} "$work"
else
    for x in $selected; do
        for col in $COLUMNS_IN_ORDER; do   # a check the exercise has none of needs no job
            if [ "$(check_of "$x" "$col")" = - ]; then echo "-" > "$work/$x.$col.verdict"; else echo "$x:$col"; fi
        done
    done | xargs -P "$JOBS" -I{} "$0" --job check {} "$work"
fi
for x in $selected; do
    st=$(echo "$EXERCISES" | awk -v x="$x" '$1 == x { print $2 }')
    where=$([ "$st" = model ] && echo "docs/tinydit.md" || echo "step $st")
    echo "$x ($where)"
    for col in $COLUMNS_IN_ORDER; do printf '  %-9s %s\n' "$col" "$(cat "$work/$x.$col.verdict" 2>/dev/null)"; done
    # the time from its first check's start to its last check's end
    [ $times -eq 1 ] && cat "$work/$x".*.time 2>/dev/null |
        awk 'NR == 1 || $1 < a { a = $1 } $2 > b { b = $2 } END { printf "  graded in %.1f s\n", b - a }'
done > "$work/all.txt"
cat "$work/all.txt"
n=$(grep -c '^[a-z]' "$work/all.txt")
bad=$(awk '/^[a-z]/ { name = $1 } /^  [a-z]+ +FAIL/ && !(name in seen) { seen[name] = 1; n++ } END { print n + 0 }' "$work/all.txt")
echo "$((n - bad)) of $n exercises pass every check"
[ "$bad" -eq 0 ]
