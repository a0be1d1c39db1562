#!/usr/bin/env python3
"""ncore-sim --profile's timeline page in headless Chromium: the page draws one row per track of
NAME.trace.json, in the same order, and every instruction of each row (its script records
what it drew in data-* attributes, which --dump-dom shows, and counts the canvas pixels it
painted in each row); opened zoomed in (#view=, #zoomin=), it draws a part of them.

usage: check_timeline.py <ncore-sim> <chromium> <scratch dir>
"""
import html.parser
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402
from checklist import check, finish  # noqa: E402

SIM, CHROMIUM, DIR = sys.argv[1:4]
DIR = os.path.abspath(DIR)
os.makedirs(DIR, exist_ok=True)


class Dom(html.parser.HTMLParser):
    """The #timeline element's attributes and the row labels' (elements with data-row)."""

    def __init__(self):
        super().__init__()
        self.timeline, self.rows = None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "timeline":
            self.timeline = a
        elif "data-row" in a:
            self.rows.append(a)


def open_page(page, fragment=""):
    cmd = [CHROMIUM, "--headless", "--disable-gpu", "--no-first-run", "--window-size=1400,1000",
           f"--user-data-dir={os.path.join(DIR, 'chromium-profile')}", "--dump-dom", f"file://{page}{fragment}"]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    check(p.returncode == 0 and "<html" in p.stdout, f"chromium opens the page{fragment} ({p.returncode})"
          + ("" if p.returncode == 0 else " " + p.stderr[-500:]))
    d = Dom()
    d.feed(p.stdout)
    return d.timeline or {}, d.rows


prefix = os.path.join(DIR, "stream")
p = subprocess.run([SIM, "--kernel", "stream", "-n", "51200", "--free-dim", "100", "--profile", prefix],
                   capture_output=True, text=True)
check(p.returncode == 0, f"ncore-sim --profile runs ({p.returncode}) {p.stderr.strip()}")
errors, tracks = check_trace.check(prefix + ".trace.json")
check(not errors, f"the trace is valid {errors[:3]}")
names = [t["name"] for t in tracks.values()]
counts = [len(t["slices"]) for t in tracks.values()]
total = sum(counts)
page = prefix + ".timeline.html"

tl, rows = open_page(page)
check(tl.get("data-ready") == "1", "the page's script ran to the end")
check(tl.get("data-rows") == str(len(names)), f"{tl.get('data-rows')} rows drawn, one per trace track ({len(names)})")
check(tl.get("data-row-names") == "|".join(names), f"rows in the trace's order: {tl.get('data-row-names')}")
check(tl.get("data-slices") == str(total) and tl.get("data-drawn") == str(total),
      f"all {total} instructions drawn ({tl.get('data-drawn')} of {tl.get('data-slices')})")
slice_rows = [r for r in rows if r.get("data-kind") in ("startup", "engine", "dma")]
check(names[:1] == ["start-up"] and slice_rows[:1] and slice_rows[0].get("data-kind") == "startup",
      f"the start-up is the first row ({names[:1]})")
check([r["data-row"] for r in slice_rows] == names, "a label per row")
for r, n in zip(slice_rows, counts):
    painted = int(r.get("data-painted", "-1"))
    check(r.get("data-drawn") == str(n) and (painted > 0) == (n > 0),
          f"row {r['data-row']}: {r.get('data-drawn')} of {n} slices drawn, {painted} pixels painted")
counters = [r["data-row"] for r in rows if r.get("data-kind") == "counter"]
check(any(c.startswith("pending DMA transfers") for c in counters) and
      any(c.startswith("tensor engine utilisation") for c in counters), f"counter rows: {counters}")

cycles = int(tl.get("data-view", "0:0").split(":")[1])
tl2, _ = open_page(page, f"#view=0:{cycles // 10}")
drawn = int(tl2.get("data-drawn", "-1"))
check(tl2.get("data-view") == f"0:{cycles // 10}" and 0 < drawn < total,
      f"zoomed to the first tenth ({tl2.get('data-view')}): {drawn} of {total} instructions drawn")
tl3, _ = open_page(page, "#zoomin=3")
a, b = (int(x) for x in tl3.get("data-view", "0:0").split(":"))
check(abs((b - a) - cycles / 8) <= 1 and int(tl3.get("data-drawn", "-1")) < total,
      f"three zoom steps show an eighth of the run ({a}:{b}), {tl3.get('data-drawn')} instructions")
finish()
