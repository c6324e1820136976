#!/bin/sh
# slurm_cluster.sh DIR: a one-node Slurm cluster on this machine, from
# Debian's packages (munge, slurm-wlm), everything of it inside DIR: munge
# with a fresh key, slurmctld and slurmd with a minimal slurm.conf (one node,
# this machine's cores), on ports nobody listens on. Sourced by
# scripts/slurm_check.sh, which calls cluster_start, then cluster_stop in its
# trap; after cluster_start, SLURM_CONF names DIR/slurm.conf, so sbatch,
# squeue and scontrol talk to this cluster and no other.

# Why it cannot start, as one line, or nothing when it can.
cluster_cannot_start() {
    [ "$(id -u)" = 0 ] || { echo "not root (slurmd runs jobs as their users: it needs root)"; return; }
    for p in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
        command -v $p >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v $p >/dev/null 2>&1 ||
            { echo "no $p (make cluster-deps installs slurm-wlm and munge)"; return; }
    done
}

# A TCP port nothing listens on, from a range away from Slurm's defaults.
free_port() {
    port=$1
    while [ $port -lt $(($1 + 200)) ]; do
        if ! (ss -ltn 2>/dev/null || netstat -ltn 2>/dev/null) | grep -q ":$port "; then echo $port; return; fi
        port=$((port + 1))
    done
    return 1
}

# Waits up to $2 seconds for command $1 to succeed. 0, or 1 on time out.
wait_for() {
    t=0
    while ! sh -c "$1" >/dev/null 2>&1; do
        t=$((t + 1)); [ $t -le $(($2 * 2)) ] || return 1
        sleep 0.5
    done
}

cluster_start() {
    CLUSTER=$1
    PATH=$PATH:/usr/sbin
    mkdir -p "$CLUSTER/munge" "$CLUSTER/ctld" "$CLUSTER/spool" "$CLUSTER/log"
    chmod 755 "$CLUSTER/munge"
    mungekey --create --keyfile="$CLUSTER/munge/munge.key" || return 1
    # each daemon in a session of its own: a signal to the caller's process
    # group (timeout, Ctrl-C) leaves them to cluster_stop, which needs them
    setsid munged --foreground --force --socket="$CLUSTER/munge/socket" --key-file="$CLUSTER/munge/munge.key" \
        --pid-file="$CLUSTER/munge/pid" --seed-file="$CLUSTER/munge/seed" --log-file="$CLUSTER/log/munged.log" \
        >> "$CLUSTER/log/munged.log" 2>&1 &
    MUNGED_PID=$!
    wait_for "munge --socket='$CLUSTER/munge/socket' -n </dev/null | unmunge --socket='$CLUSTER/munge/socket'" 20 ||
        { echo "munged did not start: $CLUSTER/log/munged.log"; return 1; }
    ctld_port=$(free_port 16817) && slurmd_port=$(free_port $((ctld_port + 1))) || { echo "no free port"; return 1; }
    mem_mb=$(awk '/^MemTotal/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
    cat > "$CLUSTER/slurm.conf" <<EOF
ClusterName=tinydit
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$CLUSTER/munge/socket,cred_expire=10
CredType=cred/munge
StateSaveLocation=$CLUSTER/ctld
SlurmdSpoolDir=$CLUSTER/spool
SlurmctldPidFile=$CLUSTER/slurmctld.pid
SlurmdPidFile=$CLUSTER/slurmd.pid
SlurmctldLogFile=$CLUSTER/log/slurmctld.log
SlurmdLogFile=$CLUSTER/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=20
# the jobs' records stay while the check reads their states
MinJobAge=3600
# cred_expire above is also how long a requeued job waits before it starts again
SchedulerParameters=sched_interval=2
NodeName=tinydit-node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=tinydit Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    SLURM_CONF=$CLUSTER/slurm.conf
    export SLURM_CONF
    setsid slurmctld -D -i -f "$SLURM_CONF" > "$CLUSTER/log/slurmctld.out" 2>&1 &
    SLURMCTLD_PID=$!
    setsid slurmd -D -N tinydit-node -f "$SLURM_CONF" > "$CLUSTER/log/slurmd.out" 2>&1 &
    SLURMD_PID=$!
    wait_for "sinfo -h -n tinydit-node -o %T | grep -qx idle" 40 ||
        { echo "the node did not come up: $CLUSTER/log/slurmctld.log, slurmd.log"; sinfo 2>&1; return 1; }
}

# Cancels every job, waits for them to end (each run saves its checkpoint),
# then stops the daemons and what a job may have left. The daemons are this
# shell's children, or found by their pid files (another shell's cleanup,
# after this one was killed), each only if it is still this cluster's.
cluster_stop() {
    [ -n "${CLUSTER:-}" ] || return 0
    pids=
    for v in "${SLURMD_PID:-}:slurmd.pid" "${SLURMCTLD_PID:-}:slurmctld.pid" "${MUNGED_PID:-}:munge/pid"; do
        pid=${v%%:*}
        [ -n "$pid" ] || pid=$(cat "$CLUSTER/${v#*:}" 2>/dev/null)
        [ -n "$pid" ] && tr '\0' ' ' 2>/dev/null < /proc/$pid/cmdline | grep -qF "$CLUSTER" && pids="$pids $pid"
    done
    if [ -n "$pids" ] && timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null; then
        wait_for "[ -z \"\$(timeout 5 squeue -h -o %i)\" ]" 30 || echo "slurm_cluster: jobs still running; stopping anyway"
    fi
    [ -z "$pids" ] || kill $pids 2>/dev/null
    for t in $(seq 1 20); do
        alive=
        for pid in $pids; do kill -0 $pid 2>/dev/null && alive="$alive $pid"; done
        pids=$alive
        [ -n "$pids" ] || break
        sleep 0.5
    done
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    # a job's processes and its slurmstepd, had cancelling failed: this
    # cluster's SLURM_CONF in their environment, and a job id there or
    # slurmstepd's name (the shells that started the cluster have only the first)
    for sig in TERM KILL; do
        for f in $(grep -lsxzF "SLURM_CONF=$CLUSTER/slurm.conf" /proc/[0-9]*/environ); do
            p=${f%/environ}
            grep -qsz '^SLURM_JOB_ID=' $f || grep -qs '^slurmstepd' $p/cmdline || continue
            kill -$sig ${p#/proc/} 2>/dev/null
        done
        sleep 1
    done
    SLURMD_PID= SLURMCTLD_PID= MUNGED_PID=
}
