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
#     --step N     only step N's exercises (2 to 5 have some; "model" for docs/tinydit.md's)
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
'

usage() { sed -n '28,33p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

step="" times=0 first=0 names=""
while [ $# -gt 0 ]; do
    case $1 in
        --step)  [ $# -ge 2 ] || usage; step=$2; shift 2 ;;
        --times) times=1; shift ;;
        --first) first=1; shift ;;
        -h|--help) usage ;;
        -*) echo "grade.sh: unknown option $1" >&2; usage ;;
        *) names="$names $1"; shift ;;
    esac
done
case $step in
    ""|2|3|4|5|model) ;;
    1|6) echo "step $step has no exercises (docs/exercises.md lists them)"; exit 0 ;;
    *) echo "grade.sh: --step $step: no such step (1 to 6, or model)" >&2; exit 2 ;;
esac
for n in $names; do
    echo "$EXERCISES" | awk -v n="$n" '$1 == n { found = 1 } END { exit !found }' ||
        { echo "grade.sh: no exercise $n (scripts/exercises.sh list names them all)" >&2; exit 2; }
done
[ -n "${GRADE_DIR:-}" ] && [ -n "${GRADE_REFERENCE:-}" ] && [ -n "${GRADE_MAINS:-}" ] && [ -n "${GRADE_OBJS:-}" ] && [ -n "${GRADE_LINK:-}" ] ||
    { echo "grade.sh: run it with make grade (which compiles what it links)" >&2; exit 2; }
[ -d "$GRADE_DIR/obj" ] || { echo "grade.sh: no $GRADE_DIR/obj: run make grade, which compiles it" >&2; exit 2; }

out=$(mktemp "${TMPDIR:-/tmp}/tinydit_grade_XXXXXX") || exit 2
golden_dir=$out.golden   # golden:NAME[+NAME...] compares tests/golden/NAME.safetensors alone (or those few)
trap 'rm -rf "$out" "$out.all" "$golden_dir"' EXIT

# ---------------------------------------------------------------------------
# Linking one exercise's program: the grader (tests/grade_main.c and every
# test program it runs, GRADE_MAINS), the library's objects of the files
# that hold no exercise (GRADE_OBJS), and two copies of each file that
# holds exercises: yours, and the reference's (GRADE_REFERENCE).
LISTING=$(scripts/exercises.sh list) || exit 2
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
    objcopy $(for sym in "$@"; do printf -- '-W %s ' "$sym"; done) "$in" "$out.tmp" && mv "$out.tmp" "$out"
}

# The objects of exercise X's program (X = "": the reference's functions for
# every exercise). In each file that holds exercises, yours: every exercise
# function but X's made weak; the reference's: every symbol made weak but
# the exercise functions other than X's. The strong one of each pair wins.
link_objects() {
    x=$1 list=$GRADE_DIR/ex/${1:-reference}/objects.txt
    # the list made last time, while no object it was made from has changed
    inputs=""
    for f in $EX_FILES; do rel=${f#common/}; rel=${rel%.c}.o; inputs="$inputs $GRADE_DIR/obj/$rel $GRADE_REFERENCE/$rel"; done
    stale "$list" $inputs "$0" || { cat "$list"; return 0; }
    xfile=$(file_of "$x") xfn=$(function_of "$x")
    mkdir -p "$OBJECTS" || return 1
    objs="$GRADE_OBJS"
    for f in $EX_FILES; do
        rel=${f#common/}; rel=${rel%.c}.o; flat=$(echo "$rel" | tr / _)
        mine=$GRADE_DIR/obj/$rel ref=$GRADE_REFERENCE/$rel
        [ -f "$mine" ] && [ -f "$ref" ] || { echo "grade.sh: no $mine or $ref: run make grade" >&2; return 1; }
        tag=${flat%.o} others=$(functions_of "$f")
        if [ "$f" = "$xfile" ]; then
            tag=${tag}_$x others=$(echo "$others" | grep -v -x -F "$xfn")
        fi
        weakened "$OBJECTS/mine_$tag.o" "$mine" $others || return 1
        keep=" $(echo $others) "
        weakened "$OBJECTS/ref_$tag.o" "$ref" $(nm -g --defined-only "$ref" | awk '{ print $3 }' |
            while read -r sym; do case $keep in *" $sym "*) ;; *) echo "$sym" ;; esac; done) || return 1
        objs="$objs $OBJECTS/mine_$tag.o $OBJECTS/ref_$tag.o"
    done
    mkdir -p "$(dirname "$list")" && echo "$objs" > "$list" && echo "$objs"
}

# Exercise X's program, linked if anything it is made of is newer.
program() {
    x=$1 dir=$GRADE_DIR/ex/${1:-reference}
    mkdir -p "$dir" || return 1
    for o in $GRADE_MAINS; do [ -f "$o" ] || { echo "grade.sh: no $o: run make grade" >&2; return 1; }; done
    objs=$(link_objects "$x") || return 1
    if stale "$dir/grader" $GRADE_MAINS $objs; then
        $GRADE_LINK $GRADE_MAINS $objs -o "$dir/grader" ${GRADE_LIBS:-} > "$dir/link.txt" 2>&1 ||
            { echo "grade.sh: linking $dir/grader failed:" >&2; cat "$dir/link.txt" >&2; return 1; }
    fi
    echo "$dir/grader"
}

# The reference's smoke run of a case, step by step: what yours is compared with.
reference_trace() {
    bin=$(program "") || return 1
    trace=$GRADE_DIR/ex/reference/$1.txt
    if stale "$trace" "$bin"; then
        CK_RUN_CASE=$1 TINYDIT_SMOKE_RECORD=$trace.tmp "$bin" test_model > "$trace.log" 2>&1 && mv "$trace.tmp" "$trace" ||
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

# One check, "-", golden:NAME or program:case, run by the grader BIN.
# Prints its verdict; 0 pass. A test case that runs no test fails: a
# misspelt name must not pass.
run_check() {
    bin=$1 c=$2
    [ "$c" = - ] && { echo "-"; return 0; }
    [ -n "$bin" ] || { echo "FAIL: could not link (above)"; return 1; }
    case $c in
        golden:*)
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

# The checks in the order they are printed; a row without a threads column
# has none ("-").
echo "$EXERCISES" | while read -r name st fwd bwd par smk thr; do
    [ -n "$name" ] || continue
    [ -z "$step" ] || [ "$st" = "$step" ] || continue
    [ -z "$names" ] || case " $names " in *" $name "*) ;; *) continue ;; esac
    t0=$(now)
    where=$([ "$st" = model ] && echo "docs/tinydit.md" || echo "step $st")
    echo "$name ($where)"
    failed=0
    bin=$(program "$name") || bin=""
    for col in forward backward threads parity smoke; do
        case $col in forward) c=$fwd ;; backward) c=$bwd ;; threads) c=${thr:--} ;; parity) c=$par ;; smoke) c=$smk ;; esac
        if [ $failed -eq 1 ] && [ $first -eq 1 ]; then printf '  %-9s %s\n' "$col" "not run"; continue; fi
        verdict=$(run_check "$bin" "$c") || failed=1
        printf '  %-9s %s\n' "$col" "$verdict"
    done
    [ $times -eq 1 ] && awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "  graded in %.1f s\n", b - a }'
done > "$out.all"
cat "$out.all"
n=$(grep -c '^[a-z]' "$out.all")
bad=$(awk '/^[a-z]/ { name = $1 } /^  [a-z]+ +FAIL/ && !(name in seen) { seen[name] = 1; n++ } END { print n + 0 }' "$out.all")
rm -f "$out.all"
echo "$((n - bad)) of $n exercises pass every check"
[ "$bad" -eq 0 ]
