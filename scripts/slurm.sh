#!/bin/sh
# slurm.sh: a make target's runs as one Slurm job array (make TARGET
# RUNNER=slurm, mk/slurm.mk). PRINT is a command that prints the runs'
# commands, one a line (`lab ablation --print-commands --left --log`: the
# runs not ended yet, each one `train --resume`); task i of the array runs
# line i + 1. Then FINISH (the same make target without RUNNER: with every
# run ended it trains nothing and writes the table, the report, the plots)
# is one more job, started when every task has ended well
# (--dependency=afterok).
#
#   sh scripts/slurm.sh NAME RUNS THREADS MEM FINISH PRINT...
#
# NAME: the target (the jobs' names are tinydit-NAME); RUNS: the runs'
# folder, where the job scripts and their Slurm output go (RUNS/slurm/);
# THREADS: each task's cores (--cpus-per-task, as the commands' --threads);
# MEM: each task's memory (--mem); FINISH: a shell command, run in the
# project's folder. From the environment: TINYDIT_SBATCH_OPTS, more sbatch
# options for both jobs (partition, account, time limit, ...);
# TINYDIT_SLURM_GRACE, the seconds before its time limit at which a task is
# requeued (default 300).
#
# Why nothing is lost: Slurm sends SIGTERM to a task it stops (time limit,
# preemption, scontrol requeue, scancel) and waits KillWait seconds before
# SIGKILL; the trainer saves a checkpoint on SIGTERM between two steps
# (common/train/train_loop.c). --requeue puts a task stopped by preemption,
# requeue or a node's failure back in the queue, and `train --resume` goes on
# from its checkpoint. A time limit does not requeue by itself, so the task
# asks for it: --signal=B:USR1@GRACE wakes the task's shell GRACE seconds
# before the limit, and it calls `scontrol requeue` on itself. Two
# submissions of the same runs at once: the second's task of a run that the
# first is training finds the run's lock taken and fails (train refuses it);
# nothing is written twice.
set -eu
# --guidance-commands RUNS W: the PRINT of make guidance-sweeps, the sweep of
# every class-conditional run of RUNS that has none yet (mk/plots.mk's loop)
if [ "${1:-}" = --guidance-commands ] && [ $# -eq 3 ]; then
    step7=$(cd "$(dirname "$0")/.." && pwd)/step7_guidance/step7_guidance
    for c in "$2"/c10_*/ckpt.safetensors; do
        [ -e "$c" ] || continue
        d=${c%/*}
        [ -e "$d/guidance.tsv" ] || echo "$step7 sweep --model $c --w $3 --out $d/guidance.tsv >> $d/guidance.log 2>&1"
    done
    exit 0
fi
usage="usage: sh scripts/slurm.sh NAME RUNS THREADS MEM FINISH PRINT..."
[ $# -ge 6 ] || { echo "$usage" >&2; exit 2; }
name=$1 runs=$2 threads=$3 mem=$4 finish=$5
shift 5
grace=${TINYDIT_SLURM_GRACE:-300}
fail() { echo "slurm.sh: $*" >&2; exit 2; }
case $name in ''|*[!A-Za-z0-9_-]*) fail "NAME '$name': letters, digits, - and _ only";; esac
case $runs in /*) ;; *) fail "RUNS '$runs' is not an absolute path (the tasks start in another folder)";; esac
case $threads in ''|*[!0-9]*|0*) fail "SLURM_THREADS '$threads' is not a whole number >= 1";; esac
case $mem in ''|*[!0-9KMGT]*|[!0-9]*) fail "SLURM_MEM '$mem' is not a memory size such as 2G or 1500M";; esac
case $grace in ''|*[!0-9]*) fail "SLURM_GRACE '$grace' is not a number of seconds";; esac
command -v sbatch >/dev/null 2>&1 ||
    fail "no sbatch: RUNNER=slurm submits with Slurm's commands (Debian: apt-get install slurm-client)"
root=$(cd "$(dirname "$0")/.." && pwd)
# The tasks read CIFAR-10 where the trainer looks for it: checked here, not
# after a wait in the queue, and made absolute (the tasks start in $root).
data=${CIFAR_DIR:-$root/data/cifar-10-batches-bin}
[ -f "$data/test_batch.bin" ] || fail "no CIFAR-10 in $data: the tasks would fail (make data, or CIFAR_DIR)"
CIFAR_DIR=$(cd "$data" && pwd)
export CIFAR_DIR
mkdir -p "$runs/slurm"
jobs=$runs/slurm

# The commands, one a line.
commands=$("$@") || fail "the commands could not be listed: $* (exit $?)"
commands=$(printf '%s\n' "$commands" | grep -v '^[[:space:]]*$' || true)
n=0
[ -z "$commands" ] || n=$(printf '%s\n' "$commands" | wc -l)
case $commands in *TINYDIT_COMMANDS*) fail "a command holds the script's end marker TINYDIT_COMMANDS";; esac

# Writes stdin to $1 through a temporary file and a rename.
write_file() { cat > "$1.tmp" && mv "$1.tmp" "$1"; }

# Both jobs take the submitting shell's environment (CIFAR_DIR, ...), but
# not make's own variables: the finish job's make is a make of its own.
set --
[ -z "${TINYDIT_SBATCH_OPTS:-}" ] || set -- $TINYDIT_SBATCH_OPTS

array=
if [ "$n" -gt 0 ]; then
    script=$jobs/$name.sbatch
    write_file "$script" <<EOF
#!/bin/bash
#SBATCH --job-name=tinydit-$name
#SBATCH --array=0-$((n - 1))
#SBATCH --cpus-per-task=$threads
#SBATCH --mem=$mem
#SBATCH --requeue
#SBATCH --signal=B:USR1@$grace
#SBATCH --open-mode=append
#SBATCH --output=$jobs/$name-%A_%a.out
#SBATCH --chdir=$root
# Written by scripts/slurm.sh for \`make $name RUNNER=slurm\`: $n runs, one a
# task; each runs its line of the list below (task 0 the first), a train
# --resume whose output goes to its run's train.log.
unset MAKEFLAGS MFLAGS MAKELEVEL
export OMP_NUM_THREADS=\$SLURM_CPUS_PER_TASK
line=\$(sed -n "\$((SLURM_ARRAY_TASK_ID + 1))p" <<'TINYDIT_COMMANDS'
$commands
TINYDIT_COMMANDS
)
[ -n "\$line" ] || { echo "task \$SLURM_ARRAY_TASK_ID: no such line"; exit 2; }
echo "\$(date -u '+%F %T') task \$SLURM_ARRAY_TASK_ID (start \$((\${SLURM_RESTART_COUNT:-0} + 1))) on \$(hostname): \$line"
# near the time limit: back in the queue (Slurm then stops the run with SIGTERM)
trap 'echo "time limit near: requeued"; scontrol requeue "\${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID}"' USR1
# a SIGTERM reaches the run from Slurm too: this shell waits for its checkpoint
trap 'echo "SIGTERM: the run saves its checkpoint"' TERM
sh -c "\$line" &
pid=\$!
while :; do wait \$pid; rc=\$?; kill -0 \$pid 2>/dev/null || break; done
# exit 3: the run diverged, which is a result (its diverged.json), not a failure
case \$rc in 0|3) exit 0;; *) echo "exit \$rc: see the run's train.log"; exit \$rc;; esac
EOF
    out=$(sbatch --parsable "$@" "$script") || fail "sbatch refused $script (above: why)"
    array=${out%%;*}
    echo "[slurm] job $array: $n run$( [ "$n" = 1 ] || echo s), one task each, $threads thread$( [ "$threads" = 1 ] || echo s) and $mem ($script)"
fi

finish_script=$jobs/$name-finish.sbatch
write_file "$finish_script" <<EOF
#!/bin/sh
#SBATCH --job-name=tinydit-$name-finish
#SBATCH --cpus-per-task=$threads
#SBATCH --mem=$mem
#SBATCH --output=$jobs/$name-finish-%j.out
#SBATCH --chdir=$root
# Written by scripts/slurm.sh: once every run has ended, its table, report, plots.
unset MAKEFLAGS MFLAGS MAKELEVEL
$finish
EOF
if [ -n "$array" ]; then
    out=$(sbatch --parsable --dependency=afterok:$array --kill-on-invalid-dep=yes "$@" "$finish_script") ||
        fail "sbatch refused $finish_script; job $array runs without it (scancel $array, or run: $finish)"
else
    out=$(sbatch --parsable "$@" "$finish_script") || fail "sbatch refused $finish_script"
    echo "[slurm] every run has ended already: nothing to train"
fi
finish_id=${out%%;*}
echo "[slurm] job $finish_id: $finish${array:+ (once every task of $array has ended well)}"
echo "[slurm] watch: squeue -j ${array:+$array,}$finish_id; each run's progress: tail $runs/*/train.log"
echo "[slurm] the jobs' own output: $jobs/; a task that failed cancels job $finish_id; make $name RUNNER=slurm again resubmits the runs not ended"
