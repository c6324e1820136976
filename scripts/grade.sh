#!/bin/sh
# grade.sh: grades the exercises (docs/exercises.md) with the project's own
# tests. `make grade` runs it (it compiles the objects this links, and says
# where they are in the GRADE_* variables). Each exercise has up to four
# checks, each one test case of a test program, run on its own (Check's
# CK_RUN_CASE), or a golden file:
#   forward   the function's values against the formula
#   backward  its gradients against finite differences
#   parity    against PyTorch: the per-layer files of tests/golden/layers,
#             or model golden files (golden:baseline+adazero: those of
#             tests/golden; each holds the forward pass, every gradient,
#             three AdamW steps and an Euler sample)
#   smoke     a small model trains 30 steps on the synthetic images, its
#             loss compared step by step with the reference's loss on the
#             same weights, data and noise
# Each check prints "pass", or the first wrong number the test reports; a
# "-" is a check the exercise has none of.
#
# Each exercise is graded ON ITS OWN: its test programs are linked with
# your function for this exercise and the reference's for every other one
# (the other exercise functions of your objects are made weak with objcopy,
# and the reference's strong ones win), so the exercises can be done in any
# order and a failure names the exercise that is wrong.
#
#   scripts/grade.sh [--step N] [--times] [--first] [NAME...]
#     --step N     only step N's exercises (2 to 5 have some; "model" for docs/tinydit.md's)
#     --times      each exercise's grading time too
#     --first      after an exercise's first failed check, its other checks are not run
#     NAME...      only these exercises
# Run from the project root, by `make grade [EX=name]`. Exit 0 if every
# graded check passes, 1 if one fails, 2 on bad arguments or a missing object.
set -u

# name                    step   forward                          backward                          parity                 smoke
EXERCISES='
euler_step                model  test_model:sampler               -                                 golden:baseline        -
adamw_update              model  test_adamw:update                -                                 golden:baseline        test_model:smoke_baseline
flow_loss                 model  test_layers:flow_loss            test_layers:flow_loss_grad        golden:baseline        test_model:smoke_baseline
guided_velocity           model  test_model:guided_velocity       -                                 golden:classes+classes_adazero  -
patchify                  model  test_layers:patchify             -                                 golden:baseline        test_model:smoke_baseline
unpatchify                model  test_layers:unpatchify           -                                 golden:baseline        test_model:smoke_baseline
time_embedding            model  test_layers:time_embedding       -                                 golden:baseline        test_model:smoke_baseline
softmax_forward           model  test_layers:softmax_forward      test_layers:attention             test_parity:attention  test_model:smoke_baseline
softmax_backward          model  -                                test_layers:softmax_backward      test_parity:attention  test_model:smoke_baseline
norm_modulate_backward    model  test_layers:norm_modulate        test_layers:norm_modulate_grad    golden:baseline        test_model:smoke_baseline
block_backward            model  -                                test_model:grads                  golden:baseline+allfour+adazero  test_model:smoke_adazero
rmsnorm_forward           2      test_layers:norm_forward         test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm
rmsnorm_backward          2      -                                test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm
qk_norm_backward          3      -                                test_layers:qk_norm               test_parity:attention  test_model:smoke_qknorm
swiglu_forward            4      test_layers:activation_forward   test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu
swiglu_backward           4      -                                test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu
rope2d_tables             5      test_layers:rope_forward         -                                 test_parity:rope       test_model:smoke_rope2d
rope_backward             5      -                                test_layers:rope_backward         test_parity:rope       test_model:smoke_rope2d
'

usage() { sed -n '25,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

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
# Linking one exercise's programs.
LISTING=$(scripts/exercises.sh list) || exit 2
EX_FILES=$(echo "$LISTING" | awk '{ sub(/:[0-9]+$/, "", $2); print $2 }' | sort -u)

# The functions of file F's exercises, but exercise X's (none: X="").
other_functions() { echo "$LISTING" | awk -v f="$1" -v x="$2" '{ sub(/:[0-9]+$/, "", $2) } $2 == f && $1 != x { print $3 }'; }

# out is missing or not newer than one of the files after it (a tie counts
# as stale: a shell may compare whole seconds)
stale() { o=$1; shift; [ -e "$o" ] || return 0; for i in "$@"; do [ "$o" -nt "$i" ] || return 0; done; return 1; }

# The objects of exercise X's programs, in $GRADE_DIR/ex/X (X = "" gives
# $GRADE_DIR/ex/reference: the reference's functions for every exercise).
# Yours: every exercise function but X's weakened. The reference's: every
# symbol weakened but the other exercises' functions.
link_objects() {
    x=$1 dir=$GRADE_DIR/ex/${1:-reference}
    mkdir -p "$dir" || return 1
    objs=""
    for o in $GRADE_OBJS; do   # the library's objects, as make lists them (not a stale one of a moved file)
        case " $(echo $EX_FILES) " in *" common/${o%.o}.c "*) continue ;; esac
        objs="$objs $GRADE_DIR/obj/$o"
    done
    for f in $EX_FILES; do
        rel=${f#common/}; rel=${rel%.c}.o; flat=$(echo "$rel" | tr / _)
        mine=$GRADE_DIR/obj/$rel ref=$GRADE_REFERENCE/$rel
        [ -f "$mine" ] && [ -f "$ref" ] || { echo "grade.sh: no $mine or $ref: run make grade" >&2; return 1; }
        others=$(other_functions "$f" "$x")
        if stale "$dir/mine_$flat" "$mine" "$0"; then
            objcopy $(for fn in $others; do printf -- '-W %s ' "$fn"; done) "$mine" "$dir/mine_$flat" || return 1
        fi
        if stale "$dir/ref_$flat" "$ref" "$0"; then
            keep=" $(echo $others) "
            objcopy $(nm -g --defined-only "$ref" | awk '{ print $3 }' | while read -r s; do
                          case $keep in *" $s "*) ;; *) printf -- '-W %s ' "$s" ;; esac; done) \
                    "$ref" "$dir/ref_$flat" || return 1
        fi
        objs="$objs $dir/mine_$flat $dir/ref_$flat"
    done
    echo "$objs"
}

# Program P of exercise X, linked if anything it is made of is newer: its
# own object (P.o, one of GRADE_MAINS: the normal build's test objects)
# and the library's.
program() {
    x=$1 p=$2 dir=$GRADE_DIR/ex/${1:-reference} main=
    for o in $GRADE_MAINS; do case $o in */"$p".o) main=$o ;; esac; done
    [ -f "$main" ] || { echo "grade.sh: no $p.o in GRADE_MAINS: run make grade" >&2; return 1; }
    objs=$(link_objects "$x") || return 1
    if stale "$dir/$p" "$main" $objs; then
        $GRADE_LINK "$main" $objs -o "$dir/$p" ${GRADE_LIBS:-} > "$dir/$p.link.txt" 2>&1 ||
            { echo "grade.sh: linking $dir/$p failed:" >&2; cat "$dir/$p.link.txt" >&2; return 1; }
    fi
    echo "$dir/$p"
}

# The reference's smoke run of a case, step by step: what yours is compared with.
reference_trace() {
    bin=$(program "" test_model) || return 1
    trace=$GRADE_DIR/ex/reference/$1.txt
    if stale "$trace" "$bin"; then
        CK_RUN_CASE=$1 TINYDIT_SMOKE_RECORD=$trace.tmp "$bin" > "$trace.log" 2>&1 && mv "$trace.tmp" "$trace" ||
            { echo "grade.sh: the reference's smoke run $1 failed (see $trace.log)" >&2; return 1; }
    fi
    echo "$trace"
}

# ---------------------------------------------------------------------------
# The first thing a failed check says: a stub's message, else Check's first
# failure (its file:line:F:case:test:0: prefix cut off), else what of the
# golden file is over its tolerance, and by how much.
first_failure() {
    line=$(grep -m1 'not written yet' "$out") && { echo "$line"; return; }
    line=$(grep -m1 -E '^[^:]+:[0-9]+:[FE]:' "$out") &&
        { echo "$line" | sed -E 's/^[^:]+:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+: //'; return; }
    line=$(awk '/ MISS/ { file = $1 } /^  over the tolerance:/ && file { sub(/^  /, ""); print file ": " $0; exit }' "$out")
    [ -n "$line" ] && { echo "$line"; return; }
    echo "exit status $1: $(tail -n 1 "$out")"
}

# One check of exercise X: "-", golden:NAME, or program:case. Prints its
# verdict; 0 pass. A test case that runs no test fails: a misspelt name must not pass.
run_check() {
    x=$1 c=$2
    case $c in
        -) echo "-"; return 0 ;;
        golden:*)
            bin=$(program "$x" golden_check) || { echo "FAIL: could not link"; return 1; }
            rm -rf "$golden_dir" && mkdir "$golden_dir" || return 1
            for g in $(echo "${c#golden:}" | tr + ' '); do
                ln -s "$PWD/tests/golden/$g.safetensors" "$golden_dir/" || return 1
            done
            "$bin" "$golden_dir" > "$out" 2>&1 ;;
        *) p=${c%%:*} case=${c#*:}
           bin=$(program "$x" "$p") || { echo "FAIL: could not link"; return 1; }
           trace=""
           case $case in smoke_*) trace=$(reference_trace "$case") || { echo "FAIL: no reference run"; return 1; } ;; esac
           CK_RUN_CASE=$case TINYDIT_SMOKE_REFERENCE=$trace "$bin" > "$out" 2>&1
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

echo "$EXERCISES" | while read -r name st fwd bwd par smk; do
    [ -n "$name" ] || continue
    [ -z "$step" ] || [ "$st" = "$step" ] || continue
    [ -z "$names" ] || case " $names " in *" $name "*) ;; *) continue ;; esac
    t0=$(now)
    where=$([ "$st" = model ] && echo "docs/tinydit.md" || echo "step $st")
    echo "$name ($where)"
    failed=0
    for col in forward backward parity smoke; do
        case $col in forward) c=$fwd ;; backward) c=$bwd ;; parity) c=$par ;; smoke) c=$smk ;; esac
        if [ $failed -eq 1 ] && [ $first -eq 1 ]; then printf '  %-9s %s\n' "$col" "not run"; continue; fi
        verdict=$(run_check "$name" "$c") || failed=1
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
