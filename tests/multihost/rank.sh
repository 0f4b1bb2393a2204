#!/bin/bash
# Runs one rank for tests/multihost: `rank.sh DIR PROGRAM ARGS...` runs
# PROGRAM, its stderr kept in DIR/rank.R.err (R: the MPI rank; it reaches
# the harness even when this machine's link is down and mpirun's output
# forwarding with it), and writes "R STATUS SECONDS HOSTNAME" to
# DIR/rank.R.status when PROGRAM ends: its exit status (128 + N for a
# signal N) and the wall-clock time it ended.
dir=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-x}
# A SIGTERM from Open MPI (ending the job) reaches PROGRAM too, as it is in
# this process group; caught here, not ignored, so PROGRAM gets the default
# action back at exec, and bash records PROGRAM's status before it exits.
trap 'terminated=1' TERM
"$@" 2>>"$dir/rank.$rank.err"
status=$?
printf '%s %s %s %s\n' "$rank" "$status" "$(date +%s.%N)" "$(hostname)" \
  >"$dir/rank.$rank.status.tmp" && mv "$dir/rank.$rank.status.tmp" "$dir/rank.$rank.status"
if [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
  # Killed by a signal: end the same way, so mpirun reports the signal
  # ("process rank 1 ... exited on signal 9 (Killed)") as without rank.sh.
  trap - TERM
  kill -s "$((status - 128))" $$
fi
exit $status
