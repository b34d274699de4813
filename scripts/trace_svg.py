#!/usr/bin/env python3
"""Draws a hitmap++ trace (--trace, trace-event JSON) as an SVG: a row per track of each process,
spans as bars coloured by category, instants as ticks, a time axis in milliseconds. For pictures
in documents; Perfetto (ui.perfetto.dev) or chrome://tracing open the JSON itself.

    python3 scripts/trace_svg.py TRACE.json OUT.svg [--title TEXT]
"""
import argparse
import html
import json

COLOURS = {"launch": "#4878cf", "task": "#4878cf", "wait": "#d0d0d0", "comm": "#6acc65",
           "message": "#2a7a2a", "copy": "#e6a23c", "package": "#956cb4", "eviction": "#d65f5f",
           "balance": "#c4ad66"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--title", default="")
    a = p.parse_args()
    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    timed = [e for e in events if e["ph"] in ("X", "i")]
    end_us = max([e["ts"] + e.get("dur", 0) for e in timed] + [1.0])
    rows = sorted(threads)
    label_w, width, row_h, top = 260, 1100, 22, 44
    scale = (width - label_w - 20) / end_us
    height = top + row_h * len(rows) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="14">{html.escape(a.title)}</text>']
    y_of = {}
    for n, key in enumerate(rows):
        y = top + n * row_h
        y_of[key] = y
        name = f"{processes.get(key[0], key[0])} / {threads[key]}"
        out.append(f'<text x="10" y="{y + 15}">{html.escape(name[:44])}</text>')
        out.append(f'<line x1="{label_w}" x2="{width - 20}" y1="{y + row_h}" y2="{y + row_h}" '
                   f'stroke="#eee"/>')
    for e in timed:
        y = y_of.get((e["pid"], e["tid"]))
        if y is None:
            continue
        x = label_w + e["ts"] * scale
        colour = COLOURS.get(e.get("cat", ""), "#999")
        tip = html.escape(f'{e["name"]} ({e.get("cat", "")})')
        if e["ph"] == "X":
            w = max(e["dur"] * scale, 0.5)
            out.append(f'<rect x="{x:.2f}" y="{y + 3}" width="{w:.2f}" height="{row_h - 6}" '
                       f'fill="{colour}"><title>{tip}</title></rect>')
        else:
            out.append(f'<line x1="{x:.2f}" x2="{x:.2f}" y1="{y + 2}" y2="{y + row_h - 2}" '
                       f'stroke="{colour}" stroke-width="1.5"><title>{tip}</title></line>')
    axis_y = top + row_h * len(rows) + 14
    for k in range(6):
        t = end_us * k / 5
        x = label_w + t * scale
        out.append(f'<text x="{x:.1f}" y="{axis_y}" text-anchor="middle">{t / 1000:.1f} ms</text>')
    legend_x = label_w
    for cat, colour in COLOURS.items():
        out.append(f'<rect x="{legend_x}" y="{axis_y + 8}" width="10" height="10" '
                   f'fill="{colour}"/><text x="{legend_x + 14}" y="{axis_y + 17}">{cat}</text>')
        legend_x += 80
    out.append("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
