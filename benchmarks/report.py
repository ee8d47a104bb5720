"""Turn the runner's data into RESULTS.md and scaling.png.

Input: the dict the runner also dumps as results.json.
Output: markdown text (``markdown``), a log-log PNG (``plot``), and a one-line
summary per size for the console (``one_line``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import adversarial, limits

# end to end, dict in, Result out, proven optimal (issue 5)
GOALS = {100: 0.005, 1000: 0.030, 10_000: 0.300, 100_000: 5.0}
PEER_NAMES = {"cpsat": "CP-SAT alone", "highs": "HiGHS MILP"}


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 0.001:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 1.0:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def _in_unit(seconds: float, like: float) -> str:
    if like < 1.0:
        return f"{seconds * 1000:.3g}"
    return f"{seconds:.3g}"


def fmt_spread(s: dict[str, Any] | None) -> str:
    if not s:
        return "—"
    median = s["median"]
    if s["n"] < 2:
        return fmt_s(median)
    return f"{fmt_s(median)} [{_in_unit(s['min'], median)}, {_in_unit(s['max'], median)}]"


def fmt_med(s: dict[str, Any] | None) -> str:
    return fmt_s(s["median"]) if s else "—"


def fmt_pct(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0%"
    return f"{100 * x:.3g}%"


def fmt_mb(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f} MiB"


def fmt_ratio(peer: dict[str, Any], key: str) -> str:
    ratio = peer.get(key)
    if ratio is None:
        return "—"
    prefix = "≥ " if peer.get("speedup_is_lower_bound") else ""
    return f"{prefix}{ratio:.3g}x"


def peer_notes(peer: dict[str, Any]) -> str:
    """What stopped a peer early, e.g. '2/5 stopped: value gap <= 0.02%, 1 no solution'."""
    if not peer["unproven"]:
        return ""
    notes = []
    gap = peer["max_gap"]
    if gap is not None and gap > 0:
        notes.append(f"value gap ≤ {fmt_pct(gap)}")
    if peer["value_proven"]:
        notes.append(f"{peer['value_proven']} with value proven, cost/tie-break not")
    if peer["no_solution"]:
        notes.append(f"{peer['no_solution']} with no solution")
    if peer["overrun_s"] > 1.0:
        notes.append(f"overran the limit by up to {peer['overrun_s']:.3g} s")
    return f"{peer['unproven']}/{peer['runs']} stopped by the limit: " + ", ".join(notes)


def fmt_peer(peer: dict[str, Any] | None) -> str:
    if peer is None:
        return "—"
    cell = fmt_spread(peer["e2e"])
    if peer["unproven"]:
        cell += f"; {peer['unproven']}/{peer['runs']} stopped"
        if peer["max_gap"]:
            cell += f", gap ≤ {fmt_pct(peer['max_gap'])}"
        if peer["no_solution"]:
            cell += f", {peer['no_solution']} without a solution"
    return cell


def _gap_note(gap: float | None) -> str:
    if gap is None:
        return "no bound"
    if gap == 0:
        return "value proven, the rest of the order not"
    return f"value gap ≤ {fmt_pct(gap)}"


def _label(size: int) -> str:
    return f"{size:,}"


def one_line(summary: dict[str, Any]) -> str:
    ours = summary.get("ours")
    if ours is None:
        return "ours: error"
    parts = [
        f"ours {fmt_spread(ours['total'])}",
        f"optimal {ours['optimal']}/{ours['runs']}",
        f"core {ours['core']['median']:.0f}" if ours["core"] else "core —",
    ]
    for name, peer in summary["peers"].items():
        parts.append(f"{name} {fmt_peer(peer)} ({fmt_ratio(peer, 'speedup_e2e')})")
    return "; ".join(parts)


# ---------------------------------------------------------------------------
# markdown


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def markdown(data: dict[str, Any], plot: Path | None) -> str:
    m = data["machine"]
    s = data["settings"]
    v = m["versions"]
    commit = m["commit"] or "?"
    if m.get("dirty"):
        commit += " + uncommitted changes"
    out = [
        "# Benchmark results",
        "",
        f"Measured {m['date']} on commit {commit} by `python -m benchmarks` "
        f"({data['elapsed_s'] / 60:.1f} min).",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores; RAM {m['ram_gib']} GiB; {m['os']}",
        f"- Python {m['python']}; ortools {v.get('ortools')}; highspy {v.get('highspy')}; "
        f"numpy {v.get('numpy')}; scipy {v.get('scipy')}",
        "",
        "## Settings",
        "",
        f"- sizes: {', '.join(_label(n) for n in s['sizes'])} forms; instances per size: "
        + ", ".join(f"{_label(int(n))}: {r}" for n, r in s["repeats"].items())
        + f"; base seed {s['seed']}",
        f"- time limit: {s['time_limit']:g} s for our exact path and for each peer; "
        "one worker everywhere",
        "- 1-minute load average before each size: "
        + ", ".join(
            f"{_label(size['size'])}: {size['load_before']:.2f}"
            for size in data["sizes"]
            if size.get("load_before") is not None
        )
        + " (well above 0 means something else was running on the cores)",
        "",
    ]
    out += _headline(data)
    out += limits.markdown(limits.summarise(data.get("limits", [])))
    out += adversarial.markdown(
        data.get("adversarial", []), "adversarial.png" if plot is not None else None
    )
    out += _stages(data)
    out += _peers(data)
    out += _noise(data)
    out += _import(data)
    if plot is not None:
        out += ["## Scaling", "", f"![time against size]({plot.name})", ""]
    out += _method(data)
    return "\n".join(out) + "\n"


def _headline(data: dict[str, Any]) -> list[str]:
    peers_on = data["settings"]["peers"]
    header = [
        "forms",
        "ours end to end, median [min, max]",
        "goal",
        "met",
        "proven optimal",
        "overrun past the limit (slowest)",
        "CPU, median",
        "load during",
    ]
    if peers_on:
        header += ["CP-SAT alone", "HiGHS MILP", "speed-up vs CP-SAT", "speed-up vs HiGHS"]
    header += [
        "greedy",
        "greedy value loss, median [max]",
        "core after reduction",
        "peak RSS (one solve)",
    ]
    rows = []
    for size in data["sizes"]:
        ours = size.get("ours")
        if ours is None:
            rows.append([_label(size["size"]), "error", *["—"] * (len(header) - 2)])
            continue
        goal = size["goal_s"]
        proven = f"{ours['optimal']}/{ours['runs']}"
        if ours["optimal"] < ours["runs"] and ours["max_gap"] is not None:
            proven += f" ({_gap_note(ours['max_gap'])})"
        overrun = ours.get("overrun")
        loads = ours.get("loads") or []
        row = [
            _label(size["size"]),
            fmt_spread(ours["total"]),
            "—" if goal is None else f"< {fmt_s(goal)}",
            size["goal_met"] or "—",
            proven,
            "—" if overrun is None else ("none" if overrun <= 0 else fmt_s(overrun)),
            fmt_med(ours.get("cpu")),
            f"{min(loads):.1f}-{max(loads):.1f}" if loads else "—",
        ]
        if peers_on:
            cpsat = size["peers"].get("cpsat")
            highs = size["peers"].get("highs")
            row += [
                fmt_peer(cpsat),
                fmt_peer(highs),
                fmt_ratio(cpsat, "speedup_e2e") if cpsat else "—",
                fmt_ratio(highs, "speedup_e2e") if highs else "—",
            ]
        loss = ours["greedy_loss"]
        loss_cell = "—" if loss is None else f"{fmt_pct(loss['median'])} [{fmt_pct(loss['max'])}]"
        if loss is not None and not ours["greedy_vs_proven"]:
            loss_cell += " vs best found"
        core = ours["core"]
        core_cell = "—"
        if core is not None and ours["eligible"]:
            core_cell = f"{core['median']:.0f} of {ours['eligible']:.0f}"
        rss = fmt_mb(ours["rss_one_solve_mb"])
        if ours["rss_one_solve_mb"] is not None and ours["rss_baseline_mb"] is not None:
            rss += f" (+{ours['rss_one_solve_mb'] - ours['rss_baseline_mb']:.0f})"
        row += [fmt_med(ours["greedy_total"]), loss_cell, core_cell, rss]
        rows.append(row)
    lines = ["## Results", "", *_table(header, rows), ""]
    lines += [
        'End to end is `assembler.assemble(dict, strategy="exact")`: dict in, Result out '
        "(its `total` timing; the overrun past the limit reads the caller's clock around "
        "the call). Peers are timed the same way: parse, gates and closure, "
        "then their model build and solve on the unreduced problem; a speed-up is the "
        'peer\'s median over ours, and "≥" marks a peer stopped by the time limit. '
        'Greedy is `strategy="greedy"`; its loss is (optimum − greedy value) / optimum. '
        "Peak RSS is the process high-water mark after the first end-to-end solve of "
        "the size (interpreter, OR-Tools and HiGHS included), in brackets its growth over "
        "the warmed-up process before any instance of the size was generated.",
        "",
    ]
    for size in data["sizes"]:
        for error in size["errors"]:
            lines += [f"**Error at {_label(size['size'])} forms:**", "", "```", error, "```", ""]
    return lines


def _stages(data: dict[str, Any]) -> list[str]:
    header = [
        "forms",
        "parse+validate",
        "gates",
        "closure",
        "solve (backend)",
        "trace",
        "total",
        "reduce (presolve+LP)*",
        "core build+solve*",
        "verify*",
        "presolve out / LP out / LP in",
        "core / eligible",
    ]
    rows = []
    for size in data["sizes"]:
        ours = size.get("ours")
        if ours is None:
            continue
        st = ours["stages"]
        red = ours["reduce_stats"]
        fixed = "—"
        if red:
            fixed = " / ".join(f"{red.get(k, 0):.0f}" for k in ("presolve_out", "lp_out", "lp_in"))
        core = "—"
        if ours["core"] and ours["eligible"]:
            core = f"{ours['core']['median']:.0f} / {ours['eligible']:.0f}"
        rows.append(
            [
                _label(size["size"]),
                *(
                    fmt_med(st[k])
                    for k in (
                        "parse",
                        "gates",
                        "closure",
                        "solve",
                        "trace",
                        "total",
                        "reduce",
                        "core_solve",
                        "verify",
                    )
                ),
                fixed,
                core,
            ]
        )
    return [
        "## Where the time goes (medians)",
        "",
        *_table(header, rows),
        "",
        "The first six columns are `Result.timings` of the end-to-end call (solve = "
        "everything the exact backend does from the closed problem to its selection). "
        "Starred columns are separate calls on the same instance through the stage APIs: "
        "`fixings.reduce_problem(problem)`, then `cpsat.CpSat().solve(core, Ask(deadline))` on "
        "the core it leaves (model build + lexicographic solve + uniqueness proof), and "
        "`verify(request, result)`, which callers need not run. Fix counts and core sizes "
        "are `Reduction.stats` medians.",
        "",
    ]


def _peers(data: dict[str, Any]) -> list[str]:
    if not data["settings"]["peers"]:
        return []
    header = [
        "forms",
        "peer",
        "end to end",
        "model build",
        "build + solve",
        "proven",
        "stopped by the limit",
        "speed-up (solve only)",
        "same optimum as ours",
        "peak RSS (warm-up baseline)",
    ]
    rows = []
    for size in data["sizes"]:
        for name, peer in size["peers"].items():
            rows.append(
                [
                    _label(size["size"]),
                    PEER_NAMES[name],
                    fmt_spread(peer["e2e"]),
                    fmt_med(peer["build"]),
                    fmt_med(peer["solve"]),
                    f"{peer['optimal']}/{peer['runs']}",
                    peer_notes(peer) or "—",
                    fmt_ratio(peer, "speedup_solve"),
                    _agreement(peer),
                    fmt_mb(peer["rss_peak_mb"]),
                ]
            )
        ours = size.get("ours")
        if ours is not None:
            rows.append(
                [
                    _label(size["size"]),
                    "ours (for reference)",
                    fmt_spread(ours["total"]),
                    "",
                    fmt_med(ours["stages"]["solve"]),
                    f"{ours['optimal']}/{ours['runs']}",
                    (
                        f"{ours['runs'] - ours['optimal']}/{ours['runs']} stopped by the limit: "
                        f"{_gap_note(ours['max_gap'])}"
                    )
                    if ours["optimal"] < ours["runs"]
                    else "—",
                    "",
                    "",
                    f"{fmt_mb(ours['rss_peak_mb'])} ({fmt_mb(ours['rss_baseline_mb'])})",
                ]
            )
    return [
        "## Peers",
        "",
        *_table(header, rows),
        "",
        '"Speed-up (solve only)" compares the peer\'s model build + solve with our '
        "backend's `solve` timing, leaving out the parse, gate and closure stages all "
        'three share. "Same optimum" compares (value, cost) on every instance both '
        "proved optimal, and otherwise checks that each side's value is within the "
        "other's proven bound. Ours' peak RSS here is over the whole measurement process "
        "(every instance, greedy and the stage-by-stage calls).",
        "",
    ]


def _agreement(peer: dict[str, Any]) -> str:
    if peer["disagreements"]:
        return "NO: " + "; ".join(f"seed {d['seed']}: {d['why']}" for d in peer["disagreements"])
    if peer["compared"]:
        return f"yes ({peer['compared']} compared)"
    return "none both proven; bounds consistent"


def _noise(data: dict[str, Any]) -> list[str]:
    rows = []
    for size in data["sizes"]:
        ours = size.get("ours")
        if ours is None or ours["noise"] is None:
            continue
        noise = ours["noise"]
        rel = (noise["max"] - noise["min"]) / noise["median"] if noise["median"] else 0.0
        seed = size["raw"]["ours"].get("noise_seed")
        rows.append(
            [
                _label(size["size"]),
                str(seed),
                str(noise["n"]),
                fmt_s(noise["median"]),
                fmt_s(noise["min"]),
                fmt_s(noise["max"]),
                fmt_pct(rel),
            ]
        )
    if not rows:
        return []
    header = ["forms", "instance seed", "runs", "median", "min", "max", "(max − min) / median"]
    return [
        "## Noise: the same instance re-run",
        "",
        *_table(header, rows),
        "",
        "The spread in the results table is over different instances; this is the "
        "spread of ours end to end on one instance in one process.",
        "",
    ]


def _import(data: dict[str, Any]) -> list[str]:
    probe = data["import"]
    if "error" in probe:
        return ["## Import", "", "```", probe["error"], "```", ""]
    loaded = [name for name, present in probe["loaded_by_import"].items() if present]
    ok = probe["import_s"] < 0.150
    return [
        "## Import and cold start",
        "",
        f"- `import assembler`: {fmt_s(probe['import_s'])} median of {probe['repeats']} "
        f"fresh interpreters (goal < 150 ms: {'met' if ok else 'not met'}); samples "
        + ", ".join(fmt_s(x) for x in probe["import_samples_s"]),
        "- heavy modules loaded by the import: "
        + (", ".join(loaded) if loaded else "none")
        + f" (ortools {'IS' if probe['loaded_by_import']['ortools'] else 'not'} imported)",
        f"- first `assemble` in a fresh process (100 forms, loads OR-Tools and HiGHS): "
        f"{fmt_s(probe['first_call_100_s'])}; the second call: "
        f"{fmt_s(probe['second_call_100_s'])}",
        "",
    ]


def _method(data: dict[str, Any]) -> list[str]:
    s = data["settings"]
    return [
        "## Method",
        "",
        "- Instances: `assembler.hunt.generate.generate(random.Random(seed * 1_000_000 + r), "
        "Shape.scale(n))` for repeat r: shaped like real requests (1-4 forms per "
        "identity, ~10% references to shared resolvers, ~5% coupled pairs, ~5% required, "
        "budget 30% of total cost, rare gate traps). Each repeat is a different instance; "
        "ours and both peers run on exactly the same instances.",
        "- Each (size, solver) runs in a fresh process, one after another, so peak memory "
        "is per size and no two measurements share the cores. Each process first runs "
        "its whole path once on a 200-form warm-up instance (imports and first-call costs "
        "are in the cold-start line above, not in the tables).",
        "- CP-SAT alone (`benchmarks/solvers.py`, independent of `assembler/cpsat.py`): "
        "`linearization_level=2`, 1 worker, seed 0, on the unreduced problem; one solve "
        "of max V·K − C (value, then cost), then min tie-break weight H with that fixed "
        "and hinted. It skips the last level of the order (canonical form order among "
        "equal V, C, H) and the uniqueness proof our backend runs.",
        "- HiGHS MILP (`benchmarks/solvers.py`, highspy, 1 thread): max V, then min C with "
        "V ≥ V* added and the first answer as a start; `mip_abs_gap=0.999` "
        "(integer objectives, so this is a proof), `mip_rel_gap=0`. The tie-break level "
        "H is skipped for this peer (weights up to 2^32 per form do not fit a float "
        "objective).",
        f"- Both peers share one {s['time_limit']:g} s deadline over their phases, like "
        "ours; a peer stopped by it is reported as a timeout with its proven gap, and its "
        "speed-up is then a lower bound.",
        "- Goals (issue 5) are on the median end-to-end time with every instance proven "
        "optimal; at 100,000 forms the best bundle with its proven gap at the limit also "
        "counts. No timing is asserted in the test suite.",
        "",
    ]


# ---------------------------------------------------------------------------
# plot


def plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [s for s in data["sizes"] if s.get("ours")]
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    xs = [s["size"] for s in sizes]
    if xs:
        med = [s["ours"]["total"]["median"] for s in sizes]
        low = [m - s["ours"]["total"]["min"] for m, s in zip(med, sizes, strict=True)]
        high = [s["ours"]["total"]["max"] - m for m, s in zip(med, sizes, strict=True)]
        ax.errorbar(
            xs,
            med,
            yerr=[low, high],
            fmt="o-",
            color="tab:blue",
            lw=2.2,
            capsize=4,
            label="ours, end to end (exact)",
            zorder=5,
        )
        greedy = [s["ours"]["greedy_total"]["median"] for s in sizes]
        ax.plot(xs, greedy, "s:", color="tab:gray", label="greedy (no proof)")
    styles = {"cpsat": ("tab:orange", "^--"), "highs": ("tab:green", "D--")}
    hollow_used = False
    for s in sizes:
        if s["ours"]["optimal"] < s["ours"]["runs"]:
            hollow_used = True
            ax.plot(
                [s["size"]],
                [s["ours"]["total"]["median"]],
                "o",
                color="tab:blue",
                ms=15,
                markerfacecolor="none",
                markeredgewidth=1.5,
                zorder=6,
            )
    for name, (color, fmt) in styles.items():
        points = [(s["size"], s["peers"][name]) for s in sizes if name in s["peers"]]
        points = [(n, p) for n, p in points if p["e2e"]]
        if not points:
            continue
        px = [n for n, _ in points]
        py = [p["e2e"]["median"] for _, p in points]
        ax.plot(px, py, fmt, color=color, label=PEER_NAMES[name])
        for n, p in points:
            if p["unproven"]:
                hollow_used = True
                ax.plot(
                    [n],
                    [p["e2e"]["median"]],
                    fmt[0],
                    color=color,
                    ms=13,
                    markerfacecolor="none",
                    markeredgewidth=1.5,
                )
    goals = sorted(GOALS.items())
    ax.plot(
        [n for n, _ in goals],
        [g for _, g in goals],
        "k--",
        marker="_",
        ms=14,
        lw=1.2,
        label="goal (issue 5)",
    )
    for n, g in goals:
        ax.annotate(fmt_s(g), (n, g), textcoords="offset points", xytext=(6, -12), fontsize=8)
    limit = data["settings"]["time_limit"]
    ax.axhline(limit, color="tab:red", lw=0.8, ls=":", label=f"time limit {limit:g} s")
    if hollow_used:
        ax.plot(
            [],
            [],
            "o",
            color="black",
            markerfacecolor="none",
            ms=10,
            label="ringed: not all proven (stopped by the limit)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("forms (candidates) per request")
    ax.set_ylabel("seconds, median over instances (dict in, answer out)")
    m = data["machine"]
    ax.set_title(
        f"assembler: time against size\n{m['cpu']}, {m['cores']} cores, {m['date']}", fontsize=10
    )
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.12)
    handles, labels = ax.get_legend_handles_labels()
    # ours first
    order = sorted(range(len(labels)), key=lambda i: not labels[i].startswith("ours"))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
