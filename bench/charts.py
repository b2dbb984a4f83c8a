#!/usr/bin/env python3
"""Draws the budget's charts and rewrites bench/RESULTS.md's budget section from the runs
recorded in bench/history.jsonl (`bench/check.sh --full --record`).

    bench/charts.sh            # makes the matplotlib venv, then runs this

Charts (bench/charts/*.png): the headless ratios against Gemini CLI, the agent's search against
ripgrep / fd, the desktop app against a blank WebKitGTK window, and the history of every figure
as a fraction of its limit over the recorded runs.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check import BUDGET, HISTORY, ROOT, fmt, limit_of, load_budget  # noqa: E402

CHARTS = ROOT / "bench" / "charts"
RESULTS = ROOT / "bench" / "RESULTS.md"
START, END = "<!-- budget:start -->", "<!-- budget:end -->"


def bars(path, title, labels, values, line=1.0, xlabel="ratio (lower is better)", line_label="peer = 1", log=False):
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * len(labels)))
    colors = ["#2e7d32" if v <= line else "#c62828" for v in values]
    ax.barh(labels, values, color=colors)
    ax.axvline(line, color="#555", linestyle="--", linewidth=1, label=line_label)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3g}", va="center", fontsize=9)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(min(values) / 2, line * 2)
    else:
        ax.set_xlim(0, max([*values, line]) * 1.35)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def history_chart(path, runs, figures):
    fig, ax = plt.subplots(figsize=(9, 5))
    xs = list(range(len(runs)))
    for f in figures:
        limit = limit_of(f)
        ys = [r["figures"].get(f["id"]) for r in runs]
        pts = [(x, y / limit) for x, y in zip(xs, ys) if y is not None and limit]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f["id"])
    ax.axhline(1.0, color="#c62828", linestyle="--", linewidth=1, label="limit")
    ax.set_xticks(xs, [f"{r['date'][4:8]} {r['rev']}" for r in runs], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("figure ÷ its limit (≤ 1 passes)")
    ax.set_title("Every budget figure over the recorded full runs")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    _, figures = load_budget(BUDGET)
    runs = [json.loads(line) for line in HISTORY.read_text().splitlines() if line.strip()] if HISTORY.exists() else []
    runs = [r for r in runs if r["kind"] == "full"][-12:]
    if not runs:
        raise SystemExit("no full run recorded yet: bench/check.sh --full --record")
    last = runs[-1]
    got = last["figures"]
    CHARTS.mkdir(exist_ok=True)
    made = []

    scenarios = last["meta"].get("peer", {}).get("scenarios", {})
    if scenarios:
        labels, values = [], []
        for scen, m in scenarios.items():
            labels += [f"{scen}: wall time", f"{scen}: peak RSS"]
            values += [m["wall_s"][1] / m["wall_s"][0], m["rss_mb"][1] / m["rss_mb"][0]]
        bars(
            CHARTS / "headless.png",
            "Headless turn ÷ Gemini CLI 0.61 (same run, interleaved; log scale)",
            labels,
            values,
            line_label="Gemini CLI = 1",
            log=True,
        )
        made.append(("headless.png", "headless turns against Gemini CLI 0.61"))

    agent = [(k, v) for k, v in got.items() if k.startswith("agent.")]
    if agent:
        bars(CHARTS / "agent_search.png", "Search through the agent ÷ ripgrep / fd (same run)", [k[6:] for k, _ in agent], [v for _, v in agent], line_label="rg / fd = 1")
        made.append(("agent_search.png", "grep_search and glob through the agent against ripgrep and fd"))

    if "desktop.start_to_content_s" in got:
        start = [("app: start → content", got.get("desktop.start_to_content_s")), ("blank WebKit window", got.get("desktop.floor_start_s"))]
        mem = [(k, got.get(k)) for k in ("desktop.idle_over_floor_mb", "desktop.idle_pss_over_floor_mb", "desktop.web_process_200msg_over_blank_mb")]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.2))
        s = [(label, v) for label, v in start if v is not None]
        a1.barh([label for label, _ in s], [v for _, v in s], color=["#1565c0", "#9e9e9e"][: len(s)])
        for i, (_, v) in enumerate(s):
            a1.text(v, i, f" {v:.2f}", va="center", fontsize=9)
        a1.axvline(0.7, color="#c62828", linestyle="--", linewidth=1, label="target 0.7 s")
        a1.set_xlabel("seconds (release, median)")
        a1.legend(fontsize=8)
        a1.invert_yaxis()
        m = [(label.split(".")[1], v) for label, v in mem if v is not None]
        targets = {"idle_over_floor_mb": 30, "idle_pss_over_floor_mb": None, "web_process_200msg_over_blank_mb": 15}
        a2.barh([label for label, _ in m], [v for _, v in m], color="#1565c0")
        for i, (label, v) in enumerate(m):
            a2.text(v, i, f" {v:.1f}", va="center", fontsize=9)
            if targets.get(label):
                a2.plot([targets[label]] * 2, [i - 0.4, i + 0.4], color="#c62828", linestyle="--", linewidth=1.5)
        a2.plot([], [], color="#c62828", linestyle="--", label="issue's target")
        a2.legend(fontsize=8, loc="lower right")
        a2.set_xlabel("MB over a blank WebKitGTK window")
        a2.invert_yaxis()
        fig.suptitle("Desktop app against the WebKitGTK floor (same run)", fontsize=11)
        fig.tight_layout()
        fig.savefig(CHARTS / "desktop.png", dpi=110)
        plt.close(fig)
        made.append(("desktop.png", "the desktop app against a blank WebKitGTK window"))

    history_chart(CHARTS / "history.png", runs, figures)
    made.append(("history.png", "every figure over the recorded runs"))

    rows = ["| figure | measured | target | limit | status | what |", "|---|---|---|---|---|---|"]
    for f in figures:
        v = got.get(f["id"])
        limit = limit_of(f)
        status = "—" if v is None else ("ok" if v <= limit else "**OVER**")
        rows.append(f"| {f['id']} | {fmt(v)} {f.get('unit', '')} | {fmt(f['target'])} | {fmt(limit)} | {status} | {f['what']} |")
    section = "\n".join(
        [
            START,
            f"Latest full run: {last['date']}, commit {last['rev']}, load average {last['load_average']} "
            "(`bench/check.sh --full --record`; figures and targets in [budget.toml](budget.toml)).",
            "",
            *rows,
            "",
            *[f"![{alt}](charts/{name})" for name, alt in made],
            END,
        ]
    )
    text = RESULTS.read_text()
    if START in text and END in text:
        text = text[: text.index(START)] + section + text[text.index(END) + len(END) :]
    else:
        raise SystemExit(f"{RESULTS} has no {START} … {END} section to rewrite")
    RESULTS.write_text(text)
    print(f"wrote {len(made)} charts to {CHARTS} and the budget section of {RESULTS}")


if __name__ == "__main__":
    main()
