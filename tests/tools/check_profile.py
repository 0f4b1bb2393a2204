"""Runs `tandem train --profile` as a user would and reads the trace back:

- two devices: the file is Chrome trace JSON with a process per device
  (cpu:0, cpu:1, named by metadata), each replica's forward and its
  backward nodes on its own device's process, a track name per thread,
  and the busiest spans printed as a table at the end;
- a run stopped by SIGINT still writes a whole, valid trace;
- an unwritable --profile path is an error naming it before any training;
- under mpiexec -np 2 each process writes its own file (run.rank0.json,
  run.rank1.json) with processes named "rank N cpu:0".

Usage: check_profile.py --mpiexec MPIEXEC [--numproc-flag F] [--flags F] TANDEM"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in, expect  # noqa: E402
from check_train_distributed import launcher_from_command_line  # noqa: E402


def load_trace(path):
    with open(path) as f:
        trace = json.load(f)
    processes = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for s in spans:
        expect(s["dur"] >= 0 and s["ts"] >= 0 and s["pid"] in processes, s)
    return processes, spans


def spans_on(processes, spans, device, name=None, category=None):
    return [s for s in spans if processes[s["pid"]] == device
            and (name is None or s["name"] == name)
            and (category is None or s["cat"] == category)]


def check_two_devices(launch, data, work):
    trace = os.path.join(work, "two.json")
    result = launch.alone("train", "--data", data, "--epochs", "1", "--batch-size", "64",
                          "--devices", "cpu:0,cpu:1", "--profile", trace)
    processes, spans = load_trace(trace)
    expect(sorted(processes.values()) == ["cpu:0", "cpu:1"], processes)
    for device in ("cpu:0", "cpu:1"):
        expect(spans_on(processes, spans, device, name="replica forward"),
               f"no replica forward on {device}")
        expect(spans_on(processes, spans, device, category="autograd"),
               f"no backward node on {device}")
    forward0 = spans_on(processes, spans, "cpu:0", name="replica forward")
    forward1 = spans_on(processes, spans, "cpu:1", name="replica forward")
    expect(len(forward0) == len(forward1), (len(forward0), len(forward1)))
    expect({s["tid"] for s in forward0}.isdisjoint({s["tid"] for s in forward1}),
           "both replicas' forwards on one thread")
    expect("LinearBackward" in result.stdout and "Self ms" in result.stdout, result.stdout)
    expect(f"written to {trace}" in result.stdout, result.stdout)
    print(f"two devices: {len(spans)} spans on cpu:0 and cpu:1, table printed")


def check_interrupted(launch, data, work):
    trace = os.path.join(work, "interrupted.json")
    metrics = os.path.join(work, "interrupted.jsonl")
    process = subprocess.Popen(
        [launch.tandem, "train", "--data", data, "--epochs", "1000", "--batch-size", "16",
         "--devices", "cpu:0,cpu:1", "--profile", trace, "--metrics", metrics],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not os.path.exists(metrics) or os.path.getsize(metrics) == 0:
        expect(time.time() < deadline, "no epoch ended within 60 s")
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    expect(process.returncode == 128 + signal.SIGINT, (process.returncode, out, err))
    processes, spans = load_trace(trace)
    expect(spans and "cpu:1" in processes.values(), processes)
    print(f"SIGINT: exit 130 and a valid trace of {len(spans)} spans")


def check_bad_path(launch, data):
    bad = "/nonexistent/folder/trace.json"
    result = launch.alone_expecting(1, "train", "--data", data, "--epochs", "1",
                                    "--profile", bad)
    said = result.stdout + result.stderr
    expect(bad in said and "training" not in result.stdout, said)
    print("an unwritable --profile path is refused before training")


def check_two_processes(launch, data, work):
    trace = os.path.join(work, "run.json")
    launch.run(2, "train", "--data", data, "--epochs", "1", "--batch-size", "64",
               "--profile", trace)
    for rank in (0, 1):
        processes, spans = load_trace(os.path.join(work, f"run.rank{rank}.json"))
        expect(list(processes.values()) == [f"rank {rank} cpu:0"], processes)
        expect(all(pid // 1000 == rank for pid in processes), processes)
        expect(spans_on(processes, spans, f"rank {rank} cpu:0", category="autograd"),
               f"rank {rank}: no backward node")
    print("mpiexec -np 2: one trace per process, named by rank")


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        check_two_devices(launch, data, work)
        check_interrupted(launch, data, work)
        check_bad_path(launch, data)
        check_two_processes(launch, data, work)


if __name__ == "__main__":
    main()
