"""Runs tests/distributed/fault_program.cpp under mpiexec for one failure
case and checks what a user would: the errors each rank reports (type,
message naming the operation, its sequence number and the missing rank),
how fast they come (within the 2 s timeout + 2 s), that mpiexec exits
non-zero within a bounded time, and that no process of the job is left
behind. The job runs in a session of its own, so "left behind" means any
process still in that session after mpiexec has exited.

Usage: run_fault_test.py --mpiexec PATH [--numproc-flag -np]
                         [--flags "--allow-run-as-root;--oversubscribe"] PROGRAM CASE"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

TIMEOUT = 2.0           # the program's group timeout
RAISE_BOUND = TIMEOUT + 2.0
JOB_BOUND = 15.0        # mpiexec's whole run, start-up and tear-down included
DEADLINE = 45.0         # the harness kills the job after this

OP3 = re.escape("allreduce #3 (sum, 4 float32 elements)")


def fail(message, output=""):
    sys.exit(f"FAIL: {message}\n--- output ---\n{output}")


def session_processes(sid):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the ")": state, ppid, pgrp, session, ...; zombies are gone
        # already (only their exit status is left for their parent).
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def run(command, env=None):
    """Runs `command` in a new session; returns (exit status, output, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, env=env)
    try:
        output, _ = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        fail(f"the job did not end within {DEADLINE} s (killed)", output)
    seconds = time.monotonic() - start
    # What mpiexec left behind, given a moment to finish exiting.
    left = session_processes(proc.pid)
    for _ in range(30):
        if not left:
            break
        time.sleep(0.1)
        left = session_processes(proc.pid)
    if left:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        fail(f"processes left behind after mpiexec exited: {left}", output)
    return proc.returncode, output, seconds


def reports(output, event):
    """{rank: (type, elapsed, what)} for the REPORT lines of `event`."""
    found = {}
    # Not anchored at the line's start: mpiexec may glue another rank's
    # unterminated output in front.
    pattern = re.compile(r"REPORT rank=(\S+) event=" + re.escape(event) +
                         r"(?: type=(\S+))?(?: elapsed=(\S+))?(?: what=(.*))?$")
    for line in output.splitlines():
        m = pattern.search(line)
        if m:
            found[m.group(1)] = (m.group(2), float(m.group(3) or 0), m.group(4) or "")
    return found


def expect_lines(output, patterns):
    """Each pattern matches the end of a line of the output (mpiexec may glue
    another rank's unterminated output in front)."""
    lines = output.splitlines()
    for pattern in patterns:
        if not any(re.search(pattern + "$", line) for line in lines):
            fail(f"no line of the output matches {pattern!r}", output)


def expect_report(output, event, rank, types, what, max_elapsed=None):
    got = reports(output, event).get(str(rank))
    if got is None:
        fail(f"rank {rank} reported no '{event}'", output)
    kind, elapsed, message = got
    if types and kind not in types:
        fail(f"rank {rank} '{event}': {kind}, expected one of {types}", output)
    if not re.fullmatch(what, message):
        fail(f"rank {rank} '{event}' message does not match\n  got:      {message}\n"
             f"  expected: {what}", output)
    if max_elapsed is not None and elapsed > max_elapsed:
        fail(f"rank {rank} '{event}' after {elapsed:.2f} s, expected within {max_elapsed} s",
             output)
    print(f"rank {rank} {event} after {elapsed:.3f} s: {kind}: {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--numproc-flag", default="-np")
    parser.add_argument("--flags", default="")
    parser.add_argument("program")
    parser.add_argument("case")
    args = parser.parse_args()
    flags = [f for f in re.split(r"[;\s]+", args.flags) if f]

    def mpiexec(np, env=None):
        return run([args.mpiexec, args.numproc_flag, str(np), *flags, args.program, args.case],
                   env)

    def expect_failed_job(rc, output, seconds):
        if rc == 0:
            fail("the job exited with status 0 after a failure", output)
        if seconds > JOB_BOUND:
            fail(f"the job took {seconds:.1f} s to end (bound {JOB_BOUND} s)", output)
        print(f"job: exit status {rc} after {seconds:.1f} s, nothing left behind")

    case = args.case
    if case == "clean":
        rc, output, seconds = mpiexec(3)
        if rc != 0:
            fail(f"a clean run exited with status {rc}", output)
        for rank in range(3):
            expect_report(output, "reinit_error", rank, None,
                          re.escape("init_process_group: MPI was finalized by "
                                    "destroy_process_group() and cannot be initialized again "
                                    "in this process"))
            expect_report(output, "after_destroy", rank, None,
                          re.escape("allreduce: the process group was destroyed"))
        print(f"job: exit status 0 after {seconds:.1f} s, nothing left behind")
    elif case in ("timeout", "wait_timeout"):
        rc, output, seconds = mpiexec(2)
        after = "500 ms" if case == "wait_timeout" else "2 s"
        root = (OP3 + re.escape(f" timed out after {after} on rank 0 of 2: rank 1 has not "
                                "called it yet (its last collective is #2)"))
        bound = 0.5 + 2.0 if case == "wait_timeout" else RAISE_BOUND
        expect_report(output, "caught", 0, ["CollectiveTimeoutError"], root, bound)
        expect_report(output, "next_call", 0, ["CollectiveTimeoutError"],
                      re.escape("allreduce: the process group failed earlier: ") + root, 0.5)
        expect_report(output, "destroyed", 0, None, "", None)
        if reports(output, "destroyed")["0"][1] > 0.5:
            fail("destroy_process_group() after the failure took more than 0.5 s", output)
        if "tandem: the process group failed, so this process exits with status 1" not in output:
            fail("rank 0 did not say why it exits with status 1", output)
        # The hang report: both ranks print their last collectives.
        expect_lines(output, [
            r"tandem: hang report of rank 0 of 2: the process group failed: " + root,
            r"tandem: the last collectives of rank 0 of 2, oldest first:",
            r"  allreduce #1 \(sum, 4 float32 elements\): completed in [0-9.]+ m?s",
            r"  allreduce #3 \(sum, 4 float32 elements\): started [0-9.]+ m?s ago, not completed",
            r"tandem: hang report of rank 1 of 2: the process group failed: rank 0 of 2 "
            r"reported: " + root,
            r"tandem: the last collectives of rank 1 of 2, oldest first:",
            r"  allreduce #2 \(sum, 4 float32 elements\): completed in [0-9.]+ m?s",
        ])
        expect_failed_job(rc, output, seconds)
    elif case in ("exit", "early_exit"):
        rc, output, seconds = mpiexec(3)
        # Ranks 0 and 2 hear rank 1's exit notice, or the other one's failure
        # notice first. Neither waits for the timeout (2 s; 60 s in
        # early_exit). Once one has failed and exited, mpiexec may end the
        # other before it reports.
        caught = reports(output, "caught")
        if not caught:
            fail("neither rank 0 nor rank 2 reported the failure", output)
        for rank in sorted(caught):
            expect_report(output, "caught", rank, ["PeerFailureError"],
                          r"(allreduce: the process group failed earlier: |" + OP3 +
                          r" failed on rank [02] of 3 because the process group failed: )?"
                          r"(rank [02] of 3 reported: )?" + OP3 +
                          r" failed on rank [02] of 3: rank 1 is exiting instead "
                          r"\(its last collective is #2\)", 2.0)
        expect_failed_job(rc, output, seconds)
        if seconds > 10:
            fail(f"the job took {seconds:.1f} s to end after rank 1 left", output)
    elif case == "detail_mismatch":
        env = dict(os.environ, TANDEM_DISTRIBUTED_DEBUG="detail")
        rc, output, seconds = mpiexec(2, env)
        for rank, size in ((0, 10), (1, 20)):
            expect_report(output, "caught", rank, ["CollectiveMismatchError"],
                          re.escape(f"allreduce #3 (sum, {size} float32 elements) on rank "
                                    f"{rank} of 2: the ranks call different collectives as #3 "
                                    "(found by TANDEM_DISTRIBUTED_DEBUG=detail): rank 0 calls "
                                    "allreduce (sum, 10 float32 elements); rank 1 calls "
                                    "allreduce (sum, 20 float32 elements)"), 1.0)
        expect_failed_job(rc, output, seconds)
    elif case in ("kill", "throw"):
        # mpiexec sees rank 1 die and ends the job, usually before the
        # others' deadline; whatever they report must name the collective.
        rc, output, seconds = mpiexec(3 if case == "kill" else 2)
        for rank, (kind, elapsed, what) in reports(output, "caught").items():
            if not what.startswith("allreduce #3") or elapsed > RAISE_BOUND:
                fail(f"rank {rank} reported {kind} after {elapsed} s: {what}", output)
        expect_failed_job(rc, output, seconds)
    elif case == "mismatch":
        rc, output, seconds = mpiexec(2)
        expect_report(output, "caught", 0,
                      ["DistributedError", "CollectiveTimeoutError", "PeerFailureError"],
                      re.escape("allreduce #3 (sum, 10 float32 elements) ") +
                      r".*(MPI|timed out).*", RAISE_BOUND)
        expect_failed_job(rc, output, seconds)
    elif case == "ddp_timeout":
        rc, output, seconds = mpiexec(2)
        for rank in (0, 1):
            expect_report(output, "shared", rank, None, "yes")
        expect_report(output, "caught", 0, ["CollectiveTimeoutError"],
                      r"allreduce #\d+ \(sum, \d+ float32 elements, bucket 0 of 1, in shared "
                      r"memory\) timed out after 2 s on rank 0 of 2: rank 1 has not called it "
                      r"yet \(its last collective is #\d+\)", RAISE_BOUND)
        expect_failed_job(rc, output, seconds)
    elif case == "abort":
        rc, output, seconds = mpiexec(3)
        if rc != 7:
            fail(f"ProcessGroup::abort(7): the job exited with status {rc}, expected 7", output)
        expect_failed_job(rc, output, seconds)
    elif case == "bad_env":
        message = ('init_process_group: TANDEM_DISTRIBUTED_TIMEOUT must be a number of seconds '
                   'between 0.001 and 604800, got "{}"')
        for value in ("abc", "-1", "0", "1e300", "2.5x", ""):
            env = dict(os.environ, TANDEM_DISTRIBUTED_TIMEOUT=value)
            rc, output, _ = run([args.program, "env"], env)
            if rc != 2:
                fail(f"TANDEM_DISTRIBUTED_TIMEOUT={value!r}: exit status {rc}, expected 2", output)
            expect_report(output, "init_error", "?", None, re.escape(message.format(value)))
        env = dict(os.environ, TANDEM_DISTRIBUTED_TIMEOUT="2.5")
        rc, output, _ = run([args.program, "env"], env)
        if rc != 0:
            fail(f"TANDEM_DISTRIBUTED_TIMEOUT=2.5: exit status {rc}, expected 0", output)
        expect_report(output, "timeout", 0, None, "2500 ms")
        env = dict(os.environ, TANDEM_DISTRIBUTED_DEBUG="verbose")
        rc, output, _ = run([args.program, "env"], env)
        if rc != 2:
            fail(f"TANDEM_DISTRIBUTED_DEBUG=verbose: exit status {rc}, expected 2", output)
        expect_report(output, "init_error", "?", None, re.escape(
            'init_process_group: TANDEM_DISTRIBUTED_DEBUG must be "off" or "detail" (check '
            'every collective across the ranks before running it), got "verbose"'))
    else:
        fail(f"unknown case {case!r}")
    print(f"PASS: {case}")


if __name__ == "__main__":
    main()
