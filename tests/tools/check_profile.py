"""Runs `tandem train --profile` as a user would and reads the trace back:

- two devices: the file is Chrome trace JSON with a process per device
  (cpu:0, cpu:1, named by metadata), each replica's forward and its
  backward nodes on its own device's process, a track name per thread,
  each step's copy of the batch to cpu:1 with an arrow (a flow) to
  cpu:1's replica forward, and the busiest spans printed as a table at
  the end;
- a run stopped by SIGINT still writes a whole, valid trace;
- --profile-shapes puts each op's input shapes and dtypes in the trace and
  a row per op and shapes in the table; without --profile it is refused;
- an unwritable --profile path is an error naming it before any training;
- under mpiexec -np 2 rank 0 writes one file for the job: processes named
  "rank 0 cpu:0" and "rank 1 cpu:0", each rank's backward nodes, its
  bucket allreduces on its communication thread with bytes and an arrow
  from the bucket's launch, and the waits for them.

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


def load_trace(path, with_flows=False):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    spans = [e for e in events if e["ph"] == "X"]
    for s in spans:
        expect(s["dur"] >= 0 and s["ts"] >= 0 and s["pid"] in processes, s)
    if not with_flows:
        return processes, spans
    return processes, spans, arrows(events, spans)


def arrows(events, spans):
    """(from span, to span) per flow: Chrome's "s" and "f" events bind to
    the span that starts where they are (same pid, tid and ts)."""
    at = {(s["pid"], s["tid"], s["ts"]): s for s in spans}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    pairs = []
    for end in (e for e in events if e["ph"] == "f"):
        expect(end.get("bp") == "e" and end["id"] in starts, end)
        start = starts[end["id"]]
        source = at.get((start["pid"], start["tid"], start["ts"]))
        target = at.get((end["pid"], end["tid"], end["ts"]))
        expect(source is not None and target is not None, (start, end))
        pairs.append((source, target))
    return pairs


def spans_on(processes, spans, device, name=None, category=None):
    return [s for s in spans if processes[s["pid"]] == device
            and (name is None or s["name"] == name)
            and (category is None or s["cat"] == category)]


def check_two_devices(launch, data, work):
    trace = os.path.join(work, "two.json")
    result = launch.alone("train", "--data", data, "--epochs", "1", "--batch-size", "64",
                          "--devices", "cpu:0,cpu:1", "--profile", trace)
    processes, spans, flows = load_trace(trace, with_flows=True)
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
    copies = [(a, b) for a, b in flows if a["name"] == "share"
              and processes[a["pid"]] == "cpu:1" and b["name"] == "replica forward"
              and processes[b["pid"]] == "cpu:1"]
    expect(len(copies) == len(forward1), (len(copies), len(forward1)))
    for copy, forward in copies:
        expect(copy["args"]["from"] == "cpu:0" and copy["args"]["bytes"] > 0, copy)
        expect(copy["ts"] + copy["dur"] <= forward["ts"] + 0.001, (copy, forward))
    # Self time: a backward node's ops (mm) are rows of their own.
    expect("Self ms" in result.stdout and "replicate" in result.stdout and
           "\nmm " in result.stdout, result.stdout)
    expect(f"written to {trace}" in result.stdout, result.stdout)
    print(f"two devices: {len(spans)} spans on cpu:0 and cpu:1, {len(copies)} arrows "
          "from a hand-off to its replica, table printed")


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


def check_shapes(launch, data, work):
    trace = os.path.join(work, "shapes.json")
    result = launch.alone("train", "--data", data, "--epochs", "1", "--batch-size", "64",
                          "--max-steps", "3", "--profile", trace, "--profile-shapes")
    processes, spans = load_trace(trace)
    products = [s for s in spans if s["cat"] == "op" and s["name"] == "mm"]
    expect(products, "no mm span")
    # The 64-row batch's products (forward [64, k] x [k, n]) carry their shapes.
    first = [s for s in products if s["args"]["shapes"].startswith("[[64, ")]
    expect(first and all(s["args"]["dtypes"] == "[float32, float32]" for s in first),
           sorted({s["args"]["shapes"] for s in products}))
    table = result.stdout[result.stdout.index("Self ms"):]
    expect("Input shapes" in table and "[[" in table, table)
    refused = launch.alone_expecting(2, "train", "--data", data, "--profile-shapes")
    said = refused.stdout + refused.stderr
    expect("--profile-shapes" in said and "--profile" in said, said)
    print(f"--profile-shapes: {len(products)} mm spans with shapes, a row per shapes, "
          "refused without --profile")


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
    expect(not os.path.exists(os.path.join(work, "run.rank1.json")), "a rank's own file")
    processes, spans, flows = load_trace(trace, with_flows=True)
    expect(sorted(processes.values()) == ["rank 0 cpu:0", "rank 1 cpu:0"], processes)
    expect(sorted(processes) == [1, 1001], processes)
    for rank in (0, 1):
        device = f"rank {rank} cpu:0"
        expect(spans_on(processes, spans, device, category="autograd"),
               f"rank {rank}: no backward node")
        buckets = [s for s in spans_on(processes, spans, device, category="comm")
                   if s["name"].startswith("allreduce bucket ")]
        expect(buckets and all(s["args"]["bytes"] > 0 for s in buckets), buckets[:2])
        launched = [b for a, b in flows if a["name"] == "DDP launch bucket"
                    and processes[a["pid"]] == device]
        expect(len(launched) == len(buckets) and all(b in buckets for b in launched),
               (len(launched), len(buckets)))
        expect(spans_on(processes, spans, device, name="DDP wait bucket"),
               f"rank {rank}: no wait")
    print("mpiexec -np 2: one trace for the job with both ranks' processes, "
          f"{len([1 for a, _ in flows if a['name'] == 'DDP launch bucket'])} bucket "
          "allreduces with arrows from their launches")


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        check_two_devices(launch, data, work)
        check_interrupted(launch, data, work)
        check_shapes(launch, data, work)
        check_bad_path(launch, data)
        check_two_processes(launch, data, work)


if __name__ == "__main__":
    main()
