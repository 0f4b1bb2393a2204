"""Draws a real run's trace with `tandem plot TRACE.json` and checks the
picture against the trace, as a user would look at it:

- the trace of a short `tandem train --devices cpu:0,cpu:1 --profile` run
  plots to SVG: every span of the file is one bar whose data-ts/data-dur are
  the file's numbers and whose left edge is where the time axis's ticks put
  its start; a bar per lane of each thread, the lanes named by the trace's
  process and thread names; one arrow per flow of the file, drawn from its
  hand-off's bar ("share": the batch's part given to cpu:1) to its replica's;
- the HTML page, screenshotted by headless Chromium, is not blank and shows
  each category's colour, and wide bars have their colour where the SVG
  puts them;
- bad input: a malformed trace names the file, line and column; a JSON
  object without "traceEvents" is not a trace; a trace with no spans is an
  error; a trace with a metrics file is refused.

Usage: check_trace_plot.py PATH_TO_TANDEM"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_plot import PAGE_PADDING, SVG, near, parse_svg, screenshot  # noqa: E402
from check_profile import arrows  # noqa: E402
from check_train import dataset_in, expect, run  # noqa: E402


def trace_of_a_run(tandem, work):
    data = dataset_in(work)
    trace = os.path.join(work, "run.json")
    run(tandem, "train", "--data", data, "--epochs", "1", "--batch-size", "64",
        "--max-steps", "3", "--devices", "cpu:0,cpu:1", "--profile", trace)
    return trace


def check_svg(tandem, work, trace):
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    flows = arrows(events, spans)
    svg_path = os.path.join(work, "trace.svg")
    result = run(tandem, "plot", trace, "--out", svg_path)
    expect(f"{len(spans)} spans" in result.stdout and f"{len(flows)} arrows" in result.stdout,
           result.stdout)
    with open(svg_path) as f:
        svg = f.read()
    root = parse_svg(svg)
    bars = [r for r in root.iter(SVG + "rect") if r.get("class") == "span"]
    expect(len(bars) == len(spans), (len(bars), len(spans)))
    drawn = sorted((float(b.get("data-ts")), float(b.get("data-dur")), b.get("data-name"))
                   for b in bars)
    wanted = sorted((float(s["ts"]), float(s["dur"]), s["name"]) for s in spans)
    expect(drawn == wanted, "the bars are not the trace's spans")
    # The time axis: ticks in ms on one line; each bar's left edge there.
    ticks = [(float(t.get("data-value")), float(t.get("x1")))
             for t in root.iter(SVG + "line") if t.get("class") == "tick"]
    expect(len(ticks) >= 3, ticks)
    (v0, x0), (v1, x1) = ticks[0], ticks[-1]
    scale = (x1 - x0) / (v1 - v0)
    for value, x in ticks:
        expect(abs(x0 + (value - v0) * scale - x) < 0.02, ("ticks off a line", ticks))
    origin = min(s["ts"] for s in spans)
    for b in bars:
        x = x0 + ((float(b.get("data-ts")) - origin) / 1e3 - v0) * scale
        expect(abs(float(b.get("x")) - x) < 0.02, ("bar off the axis", b.attrib, x))
    names = {t.text for t in root.iter(SVG + "text")}
    expect({"cpu:0", "cpu:1", "tandem cpu:1"} <= names, names)
    lines = [ln for ln in root.iter(SVG + "line") if ln.get("class") == "flow"]
    expect(len(lines) == len(flows) and flows, (len(lines), len(flows)))
    by_index = sorted(bars, key=lambda b: float(b.get("data-ts")))  # the drawing's order
    for ln in lines:
        source = by_index[int(ln.get("data-from"))]
        target = by_index[int(ln.get("data-to"))]
        expect(source.get("data-name") == "share" and target.get("data-name") ==
               "replica forward", (source.attrib, target.attrib))
        expect(abs(float(ln.get("x1")) - float(source.get("x"))) < 0.02, ln.attrib)
    print(f"svg: {len(bars)} bars where the axis puts them, {len(lines)} arrows from a "
          "hand-off to its replica, lanes named")
    return svg_path


def check_in_chromium(tandem, work, trace, svg_path):
    from PIL import Image  # python3-pil (scripts/install-deps.sh)
    page = os.path.join(work, "trace.html")
    run(tandem, "plot", trace, "--out", page)
    with open(page) as f:
        html = f.read()
    with open(svg_path) as f:
        svg = f.read()
    expect(html.startswith("<!DOCTYPE html>") and svg in html, "the page holds the SVG")
    root = parse_svg(svg)
    width, height = float(root.get("width")), float(root.get("height"))
    png = os.path.join(work, "trace.png")
    screenshot(page, png, int(width) + 2 * PAGE_PADDING, int(height) + 2 * PAGE_PADDING,
               work)
    image = Image.open(png).convert("RGB")
    pixels = list(image.getdata())
    inked = sum(1 for p in pixels if sum(p[:3]) < 3 * 235)
    expect(inked > len(pixels) // 100, f"only {inked} of {len(pixels)} pixels inked")
    bars = [r for r in root.iter(SVG + "rect") if r.get("class") == "span"]
    for colour in {b.get("fill") for b in bars}:
        count = sum(1 for p in pixels if near(p, colour))
        expect(count > 20, f"{count} pixels of the category colour {colour}")
    checked = 0
    for b in bars:
        x, y = float(b.get("x")), float(b.get("y"))
        w, h = float(b.get("width")), float(b.get("height"))
        if w < 12:
            continue
        # Left of any name drawn in the bar, at half height.
        pixel = image.getpixel((round(x + 1 + PAGE_PADDING), round(y + h / 2 + PAGE_PADDING)))
        if near(pixel, b.get("fill"), 60):
            checked += 1
    wide = sum(1 for b in bars if float(b.get("width")) >= 12)
    expect(wide >= 5 and checked >= wide * 0.8, (checked, wide))
    print(f"chromium: the timeline is drawn, {checked} of {wide} wide bars in their colour")


def check_bad_input(tandem, work):
    malformed = os.path.join(work, "malformed.json")
    with open(malformed, "w") as f:
        f.write('{"traceEvents":[\n{"ph":"X","name":"a","ts":1,\n]}\n')
    result = run(tandem, "plot", malformed, "--out", os.path.join(work, "m.svg"), expect=1)
    said = result.stdout + result.stderr
    expect(malformed in said and "line 3, column 1" in said, said)  # the "]" after ","
    empty = os.path.join(work, "empty.json")
    with open(empty, "w") as f:
        f.write('{"traceEvents":[{"ph":"M","name":"process_name","pid":1,'
                '"args":{"name":"cpu:0"}}]}\n')
    result = run(tandem, "plot", empty, "--out", os.path.join(work, "e.svg"), expect=1)
    expect("no spans" in result.stderr and empty in result.stderr, result.stderr)
    no_events = os.path.join(work, "object.json")
    with open(no_events, "w") as f:
        f.write('{"traceEvents": 3}\n')
    result = run(tandem, "plot", no_events, "--out", os.path.join(work, "o.svg"), expect=1)
    expect("traceEvents" in result.stderr, result.stderr)
    metrics = os.path.join(work, "m.jsonl")
    with open(metrics, "w") as f:
        f.write('{"epoch": 1, "train_loss": 1.0}\n')
    result = run(tandem, "plot", malformed, metrics, "--out", os.path.join(work, "x.svg"),
                 expect=2)
    expect("one trace" in result.stderr, result.stderr)
    print("errors: a malformed trace named with its line and column; no traceEvents, no "
          "spans and a trace with a metrics file refused")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        trace = trace_of_a_run(tandem, work)
        svg_path = check_svg(tandem, work, trace)
        check_in_chromium(tandem, work, trace, svg_path)
        check_bad_input(tandem, work)
    print("check_trace_plot: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
