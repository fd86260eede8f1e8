# shellcheck shell=bash disable=SC2034  # sourced; the variables are used by start and stop
# Shared by .ci/slurm/start and .ci/slurm/stop (sourced, not run).
#
# Everything the test cluster owns lives in one state directory, so that `stop` can remove it whole
# and the next `start` begins with an empty queue. The only file outside it is /etc/slurm/slurm.conf,
# because every SLURM client (sinfo, srun, sbatch, and the ones Snakemake's plugin calls) reads that
# path without being told; `start` writes it (and installs missing packages) only when
# EVALBARS_SLURM_INSTALL=1 asks for it, marks it as ours, and `stop` removes it (ours only).

STATE="${EVALBARS_SLURM_STATE:-/tmp/evalbars-slurm}"
SLURM_CONF_PATH=/etc/slurm/slurm.conf
CONF_MARK="# evalbars-test-cluster: written by .ci/slurm/start; removed by .ci/slurm/stop"
PIDS_FILE="$STATE/pids"            # one line per daemon we started: NAME PID STARTTIME
LOCK_FILE="${STATE%/}.lock"         # beside the state dir, which `stop` deletes
MUNGE_SOCKET="$STATE/munge/munge.socket.2"
# `stop` deletes the state directory only if it carries this file, which `start` puts there: a
# mistyped EVALBARS_SLURM_STATE must never make it remove someone else's directory.
STATE_MARK="$STATE/.evalbars-slurm-state"
case "$STATE" in
/?*) ;;
*) echo "evalbars-slurm: EVALBARS_SLURM_STATE must be an absolute path, not '$STATE'" >&2; exit 1 ;;
esac

say() { printf 'evalbars-slurm: %s\n' "$*"; }

# Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat). Together with the
# PID it names one process for good: after a reboot or PID reuse the pair no longer matches, so
# `stop` can never signal a stranger that happens to have inherited a recorded PID.
pid_starttime() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }                    # drop "PID (comm) ", comm may contain spaces
    # shellcheck disable=SC2086
    set -- $stat                         # now $1 is field 3 (state), so field 22 is ${20}
    printf '%s\n' "${20}"
}

# True when PID is alive and is the very process recorded with STARTTIME.
pid_matches() {
    local now
    now=$(pid_starttime "$1") || return 1
    [ "$now" = "$2" ]
}

# True when every process in the pids file is still the one we started.
recorded_all_alive() {
    [ -s "$PIDS_FILE" ] || return 1
    local name pid start
    while read -r name pid start; do
        pid_matches "$pid" "$start" || return 1
    done <"$PIDS_FILE"
}

# Wait up to $1 tenths of a second until no recorded process is alive.
wait_recorded_gone() {
    local name pid start alive
    for _ in $(seq "$1"); do
        alive=0
        while read -r name pid start; do
            pid_matches "$pid" "$start" && alive=1
        done <"$PIDS_FILE"
        [ "$alive" = 0 ] && return 0
        sleep 0.1
    done
    return 1
}

controller_alive() {
    local name pid start
    [ -s "$PIDS_FILE" ] || return 1
    while read -r name pid start; do
        [ "$name" = slurmctld ] && pid_matches "$pid" "$start" && return 0
    done <"$PIDS_FILE"
    return 1
}

# Cancel the cluster's jobs, then stop exactly the recorded daemons: SIGTERM, up to 10 s of grace,
# SIGKILL for what remains. Never by name: other SLURM or munge daemons on the machine are not ours.
# Jobs go first, through SLURM itself, so that no slurmstepd (which detaches from slurmd) outlives
# the daemons. Prints "TERMED KILLED" counts. $1: "all" removes the whole state directory,
# "keep-logs" leaves $STATE/log (after a failed start).
stop_cluster() {
    local what=$1 name pid start ids termed=0 killed=0
    # Only ask a live controller: squeue against a dead one retries for 10 s.
    if controller_alive && command -v squeue >/dev/null 2>&1 && [ -f "$SLURM_CONF_PATH" ]; then
        ids=$(timeout 10 squeue -h -o %A -t PENDING,RUNNING,SUSPENDED,CONFIGURING,COMPLETING \
            2>/dev/null | tr '\n' ' ') || ids=""
        if [ -n "${ids// /}" ]; then
            # shellcheck disable=SC2086
            timeout 10 scancel $ids >/dev/null 2>&1 || true
            for _ in $(seq 30); do
                ids=$(timeout 5 squeue -h -o %A -t RUNNING,CONFIGURING,COMPLETING 2>/dev/null) || break
                [ -z "$ids" ] && break
                sleep 0.5
            done
        fi
    fi
    if [ -s "$PIDS_FILE" ]; then
        # All at once, not one by one: slurmd, slurmctld and munged each take 1-2 s to exit, and in
        # parallel the whole cluster is down in about 1.5 s. (slurmd alone takes ~10 s when its
        # controller is already dead; that only happens after a crash.)
        while read -r name pid start; do
            pid_matches "$pid" "$start" && kill -TERM "$pid" 2>/dev/null && termed=$((termed + 1))
        done < <(tac "$PIDS_FILE")
        wait_recorded_gone 100
        while read -r name pid start; do
            pid_matches "$pid" "$start" && kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
        done <"$PIDS_FILE"
        wait_recorded_gone 50
    fi
    if [ -f "$SLURM_CONF_PATH" ] && grep -qxF "$CONF_MARK" "$SLURM_CONF_PATH"; then
        rm -f "$SLURM_CONF_PATH"
    fi
    if [ -f "$STATE_MARK" ]; then
        if [ "$what" = keep-logs ]; then
            find "$STATE" -mindepth 1 -maxdepth 1 ! -name log ! -name "${STATE_MARK##*/}" \
                -exec rm -rf {} +
        else
            rm -rf "$STATE"
        fi
    fi
    echo "$termed $killed"
}
