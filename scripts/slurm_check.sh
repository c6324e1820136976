#!/bin/sh
# slurm_check.sh (make slurm-check): RUNNER=slurm against a real Slurm. A
# one-node cluster starts on this machine (scripts/slurm_cluster.sh), `make
# tutorial RUNNER=slurm PRESET=smoke` submits to it, one task is requeued
# (scontrol requeue) in the middle of its run, and when the job is done:
# that run resumed from its checkpoint, the finish job wrote the report, and
# every run's metrics.json, checkpoint, loss.tsv and samples equal those of
# the same runs trained here by lab ablation, bit for bit (metrics.json apart
# from its per-machine fields: timings and record). Then the daemons stop and
# the temporary folder goes: nothing is left behind. Without root or the
# packages it says SKIPPED and why (TINYDIT_NO_SKIPS=slurm fails instead).
# SLURM_CHECK_SECONDS bounds it all (default 600: about 4 minutes on two
# cores that others use too; when they are overloaded, raise it).
cd "$(dirname "$0")/.." || exit 2
limit=${SLURM_CHECK_SECONDS:-600}

# SKIPPED with a reason, or FAILED when TINYDIT_NO_SKIPS says this machine
# has what it needs (tests/testutil.h: test_skip).
skip() {
    case ",${TINYDIT_NO_SKIPS:-}," in
    ,1,|*,$1,*) echo "slurm-check: FAILED: needs $1, which TINYDIT_NO_SKIPS=$TINYDIT_NO_SKIPS says is here: $2"; exit 1;;
    esac
    echo "slurm-check: SKIPPED (needs $1): $2"
    exit 0
}

if [ "${1:-}" != --inner ]; then
    . scripts/slurm_cluster.sh
    why=$(cluster_cannot_start)
    [ -z "$why" ] || skip slurm "$why"
    data=${CIFAR_DIR:-data/cifar-10-batches-bin}
    [ -f "$data/test_batch.bin" ] || skip cifar "no CIFAR-10 in $data (make data, or CIFAR_DIR)"
    for p in lab/lab step6_ablation/step6_ablation; do
        [ -x $p ] || { echo "slurm-check: FAILED: no $p (make slurm-check builds it)"; exit 1; }
    done
    start=$(date +%s)
    tmp=$(mktemp -d /tmp/tinydit-slurm-check.XXXXXX) || exit 1
    # the whole check in a process group that timeout stops at the limit;
    # what its own cleanup did not finish then, this one does
    timeout --kill-after=60 "$limit" sh "$0" --inner "$tmp"
    rc=$?
    if [ -d "$tmp" ]; then
        CLUSTER=$tmp/cluster SLURM_CONF=$tmp/cluster/slurm.conf PATH=$PATH:/usr/sbin
        export SLURM_CONF
        cluster_stop
        rm -rf "$tmp"
    fi
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "slurm-check: FAILED: not done in $limit s (SLURM_CHECK_SECONDS)"
    [ $rc -ne 0 ] || echo "slurm-check: passed in $(($(date +%s) - start)) s"
    exit $rc
fi

. scripts/slurm_cluster.sh
unset OPENBLAS_CORETYPE MAKEFLAGS MFLAGS MAKELEVEL
tmp=$2
local_pid=
cleanup() {
    trap - EXIT INT TERM HUP
    [ -z "$local_pid" ] || { kill $local_pid 2>/dev/null; wait $local_pid 2>/dev/null; }
    cluster_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
t0=$(date +%s)
say() { echo "slurm-check: [$(($(date +%s) - t0)) s] $*"; }
fail() {
    say "FAILED: $*"
    for f in "$tmp"/slurm/slurm/*.out "$tmp"/cluster/log/slurmctld.log; do
        [ -f "$f" ] && { echo "--- $f (end)"; tail -n 15 "$f"; }
    done
    exit 1
}

cluster_start "$tmp/cluster" || fail "the cluster did not start"
say "a one-node cluster: $(sinfo -h -o '%P %D node(s) %c cores %m MB') ($SLURM_CONF)"

# the same runs here, beside the cluster's, one thread each as its tasks
lab/lab ablation --preset smoke --out "$tmp/local" --jobs 2 --threads 1 > "$tmp/local.log" 2>&1 &
local_pid=$!

runs=$tmp/slurm
timeout 120 make --no-print-directory tutorial RUNNER=slurm PRESET=smoke RUNS="$runs" SLURM_THREADS=1 SLURM_MEM=1G \
    > "$tmp/submit.log" 2>&1 || { cat "$tmp/submit.log"; fail "make tutorial RUNNER=slurm"; }
cat "$tmp/submit.log"
array=$(sed -n 's/^\[slurm\] job \([0-9]*\): [0-9]* runs.*/\1/p' "$tmp/submit.log")
finish=$(sed -n 's/^\[slurm\] job \([0-9]*\): make .*/\1/p' "$tmp/submit.log")
[ -n "$array" ] && [ -n "$finish" ] || fail "no job ids in make's output"

# The requeue: as soon as a run's first checkpoint (step 20 of 60) is
# written, its task is requeued. A run that is past its last step by the
# time SIGTERM reaches it makes no test of a resume (on a busy machine the
# signal takes a while): the next run is tried then.
names=$(sed -n 's/.* train --name \([^ ]*\) .*/\1/p' "$runs/slurm/tutorial.sbatch")
task=-1 requeued=
for name in $names; do
    task=$((task + 1))
    while [ ! -e "$runs/$name/ckpt.safetensors" ]; do sleep 0.02; done
    [ ! -e "$runs/$name/metrics.json" ] || continue
    scontrol requeue "${array}_$task" || fail "scontrol requeue ${array}_$task"
    # the task's second start: the first has ended, and said where it stopped
    out=$runs/slurm/tutorial-${array}_$task.out
    while ! grep -q "(start 2)" "$out" 2>/dev/null; do sleep 0.2; done
    stopped=$(sed -n 's/.*stopped by signal 15 at step \([0-9]*\);.*/\1/p' "$runs/$name/train.log" | head -n 1)
    if [ -n "$stopped" ] && [ "$stopped" -lt 60 ]; then requeued=$name; break; fi
    say "$name: requeued past its training (${stopped:+step }${stopped:-in the scorecard}); the next run is tried"
done
[ -n "$requeued" ] || fail "no run was requeued in the middle of its steps"
say "$requeued (task ${array}_$task) requeued: SIGTERM at step $stopped, checkpoint saved"

# the job's end: every task, then the finish job
# The states of job $1's tasks, one a line, once slurmctld answers (a busy
# one may not: then the question is asked again).
states() {
    while ! out=$(scontrol -o show job "$1" 2>/dev/null); do sleep 1; done
    printf '%s\n' "$out" | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p'
}
# Waits until no task of job $1 is pending, running or being requeued.
wait_ended() {
    while states "$1" | grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)$'; do
        sleep 1
    done
}
wait_ended "$array"
say "every task of job $array has ended: $(states "$array" | sort | uniq -c | tr -s ' \n' ' ')"
wait_ended "$finish"
state=$(states "$finish")
[ "$state" = COMPLETED ] || fail "the finish job $finish ended $state"
[ -s "$runs/report.md" ] || fail "no $runs/report.md"
grep -q "resuming at step $stopped of 60" "$runs/$requeued/train.log" ||
    fail "$requeued did not resume at step $stopped: $runs/$requeued/train.log"
say "$requeued resumed at step $stopped; the finish job wrote report.md"

wait $local_pid || fail "lab ablation here: $(tail -n 5 "$tmp/local.log")"
local_pid=

# metrics.json without its per-machine fields: timings, the scorecard's
# timings, the record (machine, date, command)
portable() {
    awk '/^\t"(scorecard_seconds|record)":/ { skip = 1 } skip { if (/^\t}/) skip = 0; next }
         !/^\t"(it_per_s|ms_per_step|train_seconds|wall_seconds)":/' "$1"
}
# a checkpoint's header without its train.seconds (nor the checksum of the
# metadata it is in, nor the spaces that pad the header to 8 bytes), and its
# tensors' bytes
ckpt_header() {
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    tail -c +9 "$1" | head -c "$n" | sed 's/"train\.seconds":"[^"]*"//; s/"crc32\.__metadata__":"[^"]*"//; s/ *$//'
}
ckpt_tensors() { n=$(od -An -tu8 -N8 "$1" | tr -d ' '); tail -c +$((9 + n)) "$1"; }
count=0
for d in "$tmp"/local/*/; do
    name=$(basename "$d")
    s=$runs/$name
    [ "$(cd "$d" && ls -A | sort)" = "$(cd "$s" && ls -A | sort)" ] ||
        fail "$name: the folders differ: $(ls -A "$d" | tr '\n' ' ') / $(ls -A "$s" | tr '\n' ' ')"
    portable "$d/metrics.json" > "$tmp/a"; portable "$s/metrics.json" > "$tmp/b"
    diff "$tmp/a" "$tmp/b" > "$tmp/diff" || fail "$name: metrics.json differs: $(head -n 8 "$tmp/diff")"
    ckpt_header "$d/ckpt.safetensors" > "$tmp/a"; ckpt_header "$s/ckpt.safetensors" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "$name: the checkpoints' headers differ"
    ckpt_tensors "$d/ckpt.safetensors" > "$tmp/a"; ckpt_tensors "$s/ckpt.safetensors" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "$name: the checkpoints' tensors differ"
    for f in loss.tsv val.tsv samples.png; do
        [ ! -e "$d/$f" ] || cmp -s "$d/$f" "$s/$f" || fail "$name: $f differs"
    done
    say "$name: val MSE $(sed -n 's/^\t\t"val_mse":\t*//p' "$d/metrics.json" | head -n 1 | tr -d ,) here and on the cluster; checkpoint, loss.tsv, samples the same"
    count=$((count + 1))
done
[ $count -eq 9 ] || fail "$count runs here, not the tutorial's 9"
say "all $count runs equal the local ones bit for bit (metrics.json apart from it_per_s, ms_per_step, train_seconds, wall_seconds, scorecard_seconds, record)"
