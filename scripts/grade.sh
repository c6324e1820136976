#!/bin/sh
# grade.sh: grades the exercises (docs/exercises.md) with the project's own
# tests. Each exercise has up to four checks, each one test case of a test
# program, run on its own (Check's CK_RUN_CASE), or the golden files:
#   forward   the layer's values against the formula
#   backward  its gradients against finite differences
#   parity    against PyTorch: the per-layer files of tests/golden/layers,
#             or, for AdamW and Euler, the baseline model's golden file
#             (tests/golden/baseline.safetensors: three AdamW steps and an
#             Euler sample; the baseline uses none of the other exercises)
#   smoke     a small model trains a few steps on the synthetic images and
#             its loss must fall (the exercise's code inside the model)
# Each check prints "pass", or the first wrong number the test reports; a
# "-" is a check the exercise has none of.
#
#   scripts/grade.sh [--step N] [--times] [--build DIR] [NAME...]
#     --step N     only step N's exercises (2 to 5 have some; "model" for docs/tinydit.md's)
#     --times      each exercise's grading time too
#     --build DIR  where the test programs are (default build; `make grade` builds them)
#     NAME...      only these exercises
# Run from the project root. Exit 0 if every graded check passes, 1 if one
# fails, 2 on bad arguments or a missing test program.
set -u

# name             step   forward                         backward                          parity                 smoke
EXERCISES='
euler_step         model  test_model:sampler              -                                 golden:baseline        -
adamw_update       model  test_adamw:update               -                                 golden:baseline        test_model:smoke_baseline
rmsnorm_forward    2      test_layers:norm_forward        test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm
rmsnorm_backward   2      test_layers:norm_forward        test_layers:norm_backward         test_parity:norms      test_model:smoke_rmsnorm
qk_norm_backward   3      -                               test_layers:qk_norm               test_parity:attention  test_model:smoke_qknorm
swiglu_forward     4      test_layers:activation_forward  test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu
swiglu_backward    4      test_layers:activation_forward  test_layers:activation_backward   test_parity:ffns       test_model:smoke_swiglu
rope2d_tables      5      test_layers:rope_forward        -                                 test_parity:rope       test_model:smoke_rope2d
rope_backward      5      test_layers:rope_forward        test_layers:rope_backward         test_parity:rope       test_model:smoke_rope2d
'

usage() { sed -n '15,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

step="" times=0 build=build names=""
while [ $# -gt 0 ]; do
    case $1 in
        --step)  [ $# -ge 2 ] || usage; step=$2; shift 2 ;;
        --times) times=1; shift ;;
        --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
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
        { echo "grade.sh: no exercise $n (scripts/exercises.sh list)" >&2; exit 2; }
done
for p in test_layers test_parity test_adamw test_model golden_check; do
    [ -x "$build/tests/$p" ] || { echo "grade.sh: no $build/tests/$p: run make grade, which builds it" >&2; exit 2; }
done

out=$(mktemp "${TMPDIR:-/tmp}/tinydit_grade_XXXXXX") || exit 2
golden_dir=$out.golden   # golden:NAME compares tests/golden/NAME.safetensors alone
trap 'rm -rf "$out" "$out.all" "$golden_dir"' EXIT

# The first thing a failed check says: a stub's message, else Check's first
# failure (its file:line:F:case:test:0: prefix cut off), else the golden
# file that missed, with the columns' names.
first_failure() {
    line=$(grep -m1 'not written yet' "$out") && { echo "$line"; return; }
    line=$(grep -m1 -E '^[^:]+:[0-9]+:[FE]:' "$out") &&
        { echo "$line" | sed -E 's/^[^:]+:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+: //'; return; }
    line=$(awk '/^file / { for (i = 2; i <= NF; i++) col[i] = $i }
                / MISS/ { s = $1 ":"; for (i = 2; i <= 7; i++) s = s " " col[i] " " $i;
                          print s " (tolerances: first line of make golden)"; exit }' "$out")
    [ -n "$line" ] && { echo "$line"; return; }
    echo "exit status $1: $(tail -n 1 "$out")"
}

# One check: "-", golden:NAME, or program:case. Prints its verdict; 0 pass.
# A test case that runs no test fails: a misspelt name must not pass.
run_check() {
    case $1 in
        -) echo "-"; return 0 ;;
        golden:*)
            rm -rf "$golden_dir" && mkdir "$golden_dir" &&
                ln -s "$PWD/tests/golden/${1#golden:}.safetensors" "$golden_dir/" || return 1
            "$build/tests/golden_check" "$golden_dir" > "$out" 2>&1 ;;
        *) CK_RUN_CASE=${1#*:} "$build/tests/${1%%:*}" > "$out" 2>&1
           rc=$?
           if [ $rc -eq 0 ] && ! grep -q -E 'Checks: [1-9]' "$out"; then
               echo "FAIL: $build/tests/${1%%:*} has no test case ${1#*:}"; return 1; fi
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
    for col in forward backward parity smoke; do
        case $col in forward) c=$fwd ;; backward) c=$bwd ;; parity) c=$par ;; smoke) c=$smk ;; esac
        printf '  %-9s %s\n' "$col" "$(run_check "$c")"
    done
    [ $times -eq 1 ] && awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "  graded in %.1f s\n", b - a }'
done > "$out.all"
cat "$out.all"
n=$(grep -c '^[a-z]' "$out.all")
bad=$(awk '/^[a-z]/ { name = $1 } /^  [a-z]+ +FAIL/ && !(name in seen) { seen[name] = 1; n++ } END { print n + 0 }' "$out.all")
rm -f "$out.all"
echo "$((n - bad)) of $n exercises pass every check"
[ "$bad" -eq 0 ]
