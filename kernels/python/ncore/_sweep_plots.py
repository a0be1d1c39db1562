"""ncore-sweep's plots: NAME.png (matplotlib: the latency against each swept grid name, every row a
point and the best latency at each value joined by a line) and NAME.html (a self-contained page
from the template sweep.html, made as the timeline page is: the template's title and data script
filled in; the same plots drawn in the browser, hover for a row, and the table of rows, sortable)."""
import html
import json
import os

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.html")


def points(rows, name):
    """(x values in order, [(x index, latency, row)]) for the rows that have a latency."""
    values = []
    for r in rows:
        v = r["config"][name]
        if v not in values:
            values.append(v)
    if all(isinstance(v, (int, float)) for v in values):
        values.sort()
    pts = [(values.index(r["config"][name]), r["latency_us"], r) for r in rows
           if r["latency_us"] is not None and not r["error"]]
    return values, pts


def write_png(path, title, rows, swept, best):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = swept or [None]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names) + 0.8, 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        if name is None:
            values, pts = ["run"], [(0, r["latency_us"], r) for r in rows if r["latency_us"] is not None]
        else:
            values, pts = points(rows, name)
        ok = [(x, y) for x, y, r in pts if r["correct"] is not False]
        bad = [(x, y) for x, y, r in pts if r["correct"] is False]
        if ok:
            ax.scatter(*zip(*ok), s=18, color="#3b6ea8", alpha=0.6, label="rows")
        if bad:
            ax.scatter(*zip(*bad), s=22, color="#c0392b", marker="x", label="wrong result")
        lows = {}
        for x, y in ok:
            lows[x] = min(y, lows.get(x, y))
        if lows:
            xs = sorted(lows)
            ax.plot(xs, [lows[x] for x in xs], color="#1f3d5c", lw=1.2, label="best at each value")
        if best is not None and name is not None and best["config"][name] in values:
            ax.scatter([values.index(best["config"][name])], [best["latency_us"]], s=90, facecolors="none",
                       edgecolors="#e67e22", linewidths=2, label="best")
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels([str(v) for v in values], rotation=30 if len(values) > 6 else 0)
        ax.set_xlabel(name or "")
        ax.set_ylabel("latency (us)")
        ax.grid(alpha=0.3)
    if axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{title}: latency against each swept parameter", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_html(path, title, rows, swept, best):
    with open(TEMPLATE) as f:
        page = f.read()
    data = {"title": title, "swept": swept, "names": list(rows[0]["config"]) if rows else [], "rows": rows,
            "best": rows.index(best) if best is not None else None}
    script = json.dumps(data).replace("</", "<\\/")
    page = page.replace("__NCORE_TITLE__", html.escape(title)).replace("__NCORE_DATA__", script)
    with open(path, "w") as f:
        f.write(page)


def write(out, title, rows, swept, best):
    """Writes out.png and out.html; returns their paths."""
    write_png(out + ".png", title, rows, swept, best)
    write_html(out + ".html", title, rows, swept, best)
    return [out + ".png", out + ".html"]
