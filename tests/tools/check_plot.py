"""Runs `tandem plot` as a user would and checks the pictures it draws:

- the metrics files of two real short `tandem train` runs (the tiny
  synthetic dataset of check_train.py) plot to SVG, one file and both
  overlaid: panels loss, accuracy and samples/s against epoch; every value
  in a file is drawn by exactly one marker, whose data-x/data-y are the
  file's numbers at its data-line, and whose position is where the panel's
  tick marks put those numbers (the axis transform, read off the drawing);
  tick values are nice; each run has its own colour and legend entry;
- per-step records (written here, as a later `--metrics-every` will) plot
  against step, with the end-of-epoch test values at their "steps"; a null
  breaks the line and draws no marker; unknown fields are ignored;
- the HTML page, screenshotted by headless Chromium, is not blank, shows
  both runs' colours, and the filled markers' centres have their run's
  colour where the SVG puts them; the page holds the same SVG;
- PNG through rsvg-convert; without it on PATH, an error naming librsvg2-bin;
- bad input is a clear error: a malformed line names the file, line and
  column (exit 1); a missing file, a folder, an empty file, a file with
  nothing to plot, an unwritable --out, no file (exit 2) and an unknown
  extension (exit 2); a failed plot leaves an existing picture as it was.

Usage: check_plot.py PATH_TO_TANDEM"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in, expect, fail, run  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
EPOCH_FIELDS = ("train_loss", "test_loss", "test_accuracy", "samples_per_second")
PANELS = ["loss", "accuracy", "samples/s"]
CHROMIUM_NAMES = ("chromium", "chromium-headless-shell", "chromium-browser",
                  "google-chrome")
PAGE_PADDING = 12  # plot.cpp's html_page: body padding


def records_of(path):
    with open(path) as f:
        return {n: json.loads(line) for n, line in enumerate(f, 1) if line.strip()}


def parse_svg(text):
    try:
        return ET.fromstring(text)
    except ET.ParseError as e:
        fail(f"the SVG does not parse: {e}")


def linear_map(ticks, attribute):
    """(value -> pixel) from a panel's tick marks, after checking that all
    of them lie on one line and that their values are nice."""
    points = [(float(t.get("data-value")), float(t.get(attribute))) for t in ticks]
    expect(len(points) >= 2, f"an axis with {len(points)} ticks")
    (v0, p0), (v1, p1) = points[0], points[-1]
    scale = (p1 - p0) / (v1 - v0)
    for v, p in points:
        expect(abs(p0 + (v - v0) * scale - p) < 0.02, f"tick {v} at {p} is off the axis")
    step = points[1][0] - points[0][0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    expect(any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5, 10)),
           f"tick step {step} is not 1, 2 or 5 times a power of ten")
    for (a, _), (b, _) in zip(points, points[1:]):
        expect(abs(b - a - step) < 1e-9 * max(1, abs(b)), f"ticks unevenly spaced: {points}")
    return lambda value: p0 + (value - v0) * scale, (v0, v1)


def check_svg(text, files, x_field):
    """Checks the drawing against the metrics files; returns the markers as
    (run, series, cx, cy, filled)."""
    root = parse_svg(text)
    legend = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend-run"]
    names = ["".join(g.find(f"{SVG}text").itertext()) for g in legend]
    expect(names == files, f"legend {names}, expected {files}")
    colours = [g.get("data-colour") for g in legend]
    expect(len(set(colours)) == len(files), f"runs share colours: {colours}")
    panels = [g for g in root.iter(f"{SVG}g") if g.get("class") == "panel"]
    titles = [p.get("data-panel") for p in panels]
    expect(titles == PANELS, f"panels {titles}, expected {PANELS}")

    records = [records_of(path) for path in files]
    drawn, markers = {}, []
    for panel in panels:
        lines = list(panel.iter(f"{SVG}line"))
        def ticks(kind):
            return [t for t in lines if kind in t.get("class", "").split()]
        to_x, (x_lo, x_hi) = linear_map(ticks("x-tick"), "x1")
        to_y, (y_lo, y_hi) = linear_map(ticks("y-tick"), "y1")
        for c in panel.iter(f"{SVG}circle"):
            run_index, series = int(c.get("data-run")), c.get("data-series")
            line = int(c.get("data-line"))
            record = records[run_index].get(line)
            if record is None:
                fail(f"a marker from line {line} of {files[run_index]}, which has no record")
            x, y = float(c.get("data-x")), float(c.get("data-y"))
            want_x = record.get(x_field)
            if want_x is None and x_field == "step":
                want_x = record.get("steps")
            expect(series in record and y == record[series] and x == want_x,
                   f"marker ({x}, {y}) for {series} is not line {line} of "
                   f"{files[run_index]}: {record}")
            expect(abs(float(c.get("cx")) - to_x(x)) < 0.011 and
                   abs(float(c.get("cy")) - to_y(y)) < 0.011,
                   f"marker {series}=({x}, {y}) at ({c.get('cx')}, {c.get('cy')}), "
                   f"the axes put it at ({to_x(x):.2f}, {to_y(y):.2f})")
            expect(x_lo <= x <= x_hi and y_lo <= y <= y_hi, f"({x}, {y}) off the axes")
            expect(files[run_index] in c.find(f"{SVG}title").text, "a marker's title")
            expect(c.get("stroke") == colours[run_index], f"a marker of run {run_index} "
                   f"in {c.get('stroke')}, its legend says {colours[run_index]}")
            key = (run_index, series, line)
            expect(key not in drawn, f"{key} drawn twice")
            drawn[key] = panel.get("data-panel")
            markers.append((run_index, series, float(c.get("cx")), float(c.get("cy")),
                            c.get("fill") != "#ffffff"))
    return root, drawn, markers, colours


def check_epoch_runs(tandem, work, files):
    for chosen in ([files[0]], files):
        out = os.path.join(work, f"runs{len(chosen)}.svg")
        result = run(tandem, "plot", *chosen, "--out", out)
        expect(f"wrote {out}: loss, accuracy, samples/s against epoch" in result.stdout,
               result.stdout)
        with open(out) as f:
            _, drawn, _, _ = check_svg(f.read(), chosen, "epoch")
        expected = {(i, field, line)
                    for i, path in enumerate(chosen)
                    for line, record in records_of(path).items()
                    for field in EPOCH_FIELDS if record.get(field) is not None}
        expect(set(drawn) == expected,
               f"drawn {sorted(set(drawn) ^ expected)} differ from the files' values")
        expect(f"{len(expected)} points" in result.stdout, result.stdout)
    print(f"svg: {len(expected)} markers hold the files' values where the axes put them")


def step_records():
    """Per-step records with an end-of-epoch record after every 5 steps."""
    lines = []
    for step in range(1, 11):
        loss = None if step == 4 else round(2.0 / step, 6)
        lines.append({"step": step, "epoch": (step - 1) // 5 + 1, "train_loss": loss,
                      "samples_per_second": 1000 + 10 * step, "lr": 0.05,
                      "note": "ignored", "extra": [1, {"a": None}, True]})
        if step % 5 == 0:
            epoch = {"epoch": step // 5, "train_loss": 1.0, "test_loss": 1.5 / step,
                     "test_accuracy": 0.5 + step / 100, "samples_per_second": 1050,
                     "steps": step}
            if step == 5:
                del epoch["test_accuracy"]  # a missing field: no point there
            lines.append(epoch)
    return lines


def check_step_run(tandem, work):
    path = os.path.join(work, "steps.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in step_records())
    out = os.path.join(work, "steps.svg")
    result = run(tandem, "plot", path, "--out", out)
    expect("against step" in result.stdout, result.stdout)
    with open(out) as f:
        root, drawn, _, _ = check_svg(f.read(), [path], "step")
    records = records_of(path)
    kinds = {}
    for (_, series, line) in drawn:
        kinds.setdefault(series, set()).add("step" if "step" in records[line] else "epoch")
    # train_loss and samples/s from the step records only; test values from
    # the epoch records; the null and the missing field give no marker.
    expect(kinds == {"train_loss": {"step"}, "samples_per_second": {"step"},
                     "test_loss": {"epoch"}, "test_accuracy": {"epoch"}}, kinds)
    expect(sum(s == "train_loss" for _, s, _ in drawn) == 9, "9 finite step losses")
    expect(sum(s == "test_accuracy" for _, s, _ in drawn) == 1, "one test accuracy")
    losses = [p for p in root.iter(f"{SVG}polyline") if p.get("data-series") == "train_loss"]
    expect(len(losses) == 2, f"the null splits the loss line in two, got {len(losses)}")
    print("steps: per-step records plot against step; epoch test values at their steps")


def find_chromium():
    for name in CHROMIUM_NAMES:
        if shutil.which(name):
            return shutil.which(name)
    fail("no headless Chromium on PATH (tried " + ", ".join(CHROMIUM_NAMES) +
         "); scripts/install-deps.sh installs Debian's chromium")


def screenshot(page, png, width, height, work):
    args = [find_chromium(), "--headless", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--no-default-browser-check", "--force-device-scale-factor=1",
            f"--user-data-dir={os.path.join(work, 'chromium-profile')}",
            f"--window-size={width},{height}", f"--screenshot={png}", "file://" + page]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # Chromium refuses root without it
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        fail("chromium --screenshot still running after 180 s")
    if result.returncode != 0 or not os.path.exists(png):
        fail(f"chromium --screenshot: exit {result.returncode}", result)


def near(pixel, colour, tolerance=40):
    rgb = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return sum(abs(a - b) for a, b in zip(pixel[:3], rgb)) <= tolerance


def check_picture(image, colours, what):
    """Not blank, and each run's colour covers a fair number of pixels."""
    pixels = list(image.getdata())
    inked = sum(1 for p in pixels if sum(p[:3]) < 3 * 235)
    expect(inked > len(pixels) // 100, f"{what}: only {inked} of {len(pixels)} pixels inked")
    expect(len(set(pixels)) > 20, f"{what}: {len(set(pixels))} distinct colours")
    for colour in colours:
        count = sum(1 for p in pixels if near(p, colour))
        expect(count > 300, f"{what}: {count} pixels of the run colour {colour}")


def check_html_in_chromium(tandem, work, files):
    from PIL import Image  # python3-pil (scripts/install-deps.sh)
    page = os.path.join(work, "runs.html")
    run(tandem, "plot", *files, "--out", page)
    svg_path = os.path.join(work, "same.svg")
    run(tandem, "plot", *files, "--out", svg_path)
    with open(page) as f:
        html = f.read()
    with open(svg_path) as f:
        svg = f.read()
    expect(html.startswith("<!DOCTYPE html>") and svg in html, "the page holds the SVG")
    root, _, markers, colours = check_svg(svg, files, "epoch")
    width, height = float(root.get("width")), float(root.get("height"))
    png = os.path.join(work, "page.png")
    screenshot(page, png, int(width) + 2 * PAGE_PADDING, int(height) + 2 * PAGE_PADDING,
               work)
    image = Image.open(png).convert("RGB")
    check_picture(image, colours, "chromium's screenshot")
    # A filled marker's centre shows its run's colour, unless another marker
    # lies close enough to cover it.
    checked = 0
    for i, (run_index, series, cx, cy, filled) in enumerate(markers):
        crowded = any(math.hypot(cx - x, cy - y) < 9
                      for j, (_, _, x, y, _) in enumerate(markers) if j != i)
        if not filled or crowded:
            continue
        pixel = image.getpixel((round(cx + PAGE_PADDING), round(cy + PAGE_PADDING)))
        expect(near(pixel, colours[run_index], 60),
               f"the {series} marker of run {run_index} at ({cx}, {cy}) shows {pixel}, "
               f"not {colours[run_index]}")
        checked += 1
    expect(checked >= 4, f"only {checked} markers could be checked in the screenshot")
    print(f"chromium: the page is drawn, {checked} markers where the SVG puts them")


def check_png(tandem, work, files):
    from PIL import Image
    out = os.path.join(work, "runs.png")
    if shutil.which("rsvg-convert"):
        run(tandem, "plot", *files, "--out", out)
        with open(os.path.join(work, "same.svg")) as f:
            root = parse_svg(f.read())
        image = Image.open(out).convert("RGB")
        size = (round(float(root.get("width"))), round(float(root.get("height"))))
        expect(image.size == size, f"PNG size {image.size}, the SVG's {size}")
        colours = [g.get("data-colour") for g in root.iter(f"{SVG}g")
                   if g.get("class") == "legend-run"]
        check_picture(image, colours, "the PNG")
        print("png: rsvg-convert draws the chart")
    else:
        print("png: rsvg-convert is not on PATH; only its absence is checked")
    result = subprocess.run([tandem, "plot", files[0], "--out", out],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": "/nonexistent"})
    expect(result.returncode == 1 and "rsvg-convert" in result.stderr and
           "librsvg2-bin" in result.stderr, f"without rsvg-convert: {result.stderr!r}")


def check_bad_input(tandem, work, good):
    out = os.path.join(work, "kept.svg")
    run(tandem, "plot", good, "--out", out)
    with open(out) as f:
        kept = f.read()
    first = open(good).readline()
    malformed = [('{"epoch": 3, "train_loss": 0.5,}', 32),  # trailing comma
                 ('{"epoch": 3, "train_loss": NaN}', 28),  # Python's json.dumps
                 ('{"epoch": 3} trailing', 14), ('[1, 2]', 1), ('{"epoch": 3', 12),
                 ('{"epoch": 03}', 11), ('{"epoch": 1, "epoch": 2}', 14)]
    for text, column in malformed:
        path = os.path.join(work, "malformed.jsonl")
        with open(path, "w") as f:
            f.write(first + "\n" + text + "\n")  # a blank line still counts
        err = run(tandem, "plot", good, path, "--out", out, expect=1).stderr
        where = f"'{path}' line 3, column {column}:"
        expect(err.startswith("error: plot: ") and where in err, f"{text!r}: {err!r}")
    cases = [(os.path.join(work, "missing.jsonl"), "No such file or directory"),
             (work, "is a folder"), ("empty", "holds no records"),
             ("nothing", "has nothing to plot")]
    for path, wanted in cases:
        if path in ("empty", "nothing"):
            name = os.path.join(work, path + ".jsonl")
            with open(name, "w") as f:
                f.write("\n" if path == "empty" else '{"epoch": 1, "lr": 0.1}\n')
            path = name
        err = run(tandem, "plot", path, "--out", out, expect=1).stderr
        expect(err.startswith("error: plot: ") and f"'{path}'" in err and wanted in err,
               f"{path}: {err!r}")
    missing_folder = os.path.join(work, "no", "x.svg")
    err = run(tandem, "plot", good, "--out", missing_folder, expect=1).stderr
    expect("cannot write the plot" in err and "No such file or directory" in err, err)
    err = run(tandem, "plot", good, "--out", os.path.join(work, "run.jpg"), expect=2).stderr
    expect(re.search(r"^error: plot: --out: .*\.svg, \.html or \.png", err), err)
    err = run(tandem, "plot", expect=2).stderr
    expect(err.startswith("error: plot: ") and "METRICS.jsonl" in err, err)
    with open(out) as f:
        expect(f.read() == kept, "a failed plot changed the picture already there")
    run(tandem, "plot", "--help")
    print(f"errors: {len(malformed)} malformed lines named with file, line and column; "
          f"{len(cases) + 3} other bad inputs refused")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        files = []
        for name, flags in (("sgd", []), ("adam", ["--optimizer", "adam", "--seed", "1"])):
            files.append(os.path.join(work, f"{name}.jsonl"))
            run(tandem, "train", "--data", data, "--epochs", "3", "--batch-size", "64",
                "--metrics", files[-1], *flags)
        check_epoch_runs(tandem, work, files)
        check_step_run(tandem, work)
        check_html_in_chromium(tandem, work, files)
        check_png(tandem, work, files)
        check_bad_input(tandem, work, files[0])
    print("check_plot: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
