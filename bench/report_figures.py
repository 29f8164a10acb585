"""bench/report's figures: TuNA's time against its radix (paper 000, Fig. 7) and the speedup
heatmaps (Fig. 9), each with the table and the comment read from the same rows."""
import math
import os

from report_rows import KB, best, best_peer, fmt_t, fmt_x, is_peer, peer_name, short, size_name, wins

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
except ImportError:  # the tables still come out
    plt = None


def fig7(data, img_dir, rel):
    """TuNA time against radix at P = 256 and 512 for small, medium and large S."""
    lines = []
    sizes = [16, KB, 16 * KB]
    plats = data.platforms()
    panels = []
    for plat in plats:
        for P in (256, 512):
            rows = [r for r in data.select(platform=plat, P=P, op="alltoallv", algorithm="tuna", dist="uniform")
                    if r["S"] in sizes and r["time"] is not None and r["params"].startswith("radix=")]
            if rows:
                panels.append((plat, P, rows))
    if not panels:
        return ["No TuNA radix sweep (P = 256 or 512, uniform) in this CSV.", ""], []
    trends = []
    for plat, P, rows in panels:
        for S in sizes:
            pts = sorted((int(r["params"].split("=")[1]), r["time"]) for r in rows if r["S"] == S)
            if len(pts) < 3:
                continue
            rbest, tbest = min(pts, key=lambda x: x[1])
            r_lo, r_hi = pts[0][0], pts[-1][0]
            if rbest == r_lo:
                shape = "increasing with the radix (best r = %d, the smallest)" % rbest
            elif rbest == r_hi:
                shape = "decreasing with the radix (best r = %d = P)" % rbest if r_hi == P else \
                    "decreasing with the radix (best r = %d, the largest run)" % rbest
            else:
                shape = "U-shaped (best r = %d)" % rbest
            worst = max(pts, key=lambda x: x[1])
            trends.append((plat, P, S, shape, rbest, tbest, worst))
    if plt:
        n = len(panels)
        cols = 2
        rows_n = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows_n, cols, figsize=(11, 3.6 * rows_n), squeeze=False)
        for i, (plat, P, rows) in enumerate(panels):
            ax = axes[i // cols][i % cols]
            for S, style in zip(sizes, ("o-", "s-", "^-")):
                pts = sorted((int(r["params"].split("=")[1]), r["time"] * 1e6) for r in rows if r["S"] == S)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label="S = " + size_name(S))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("radix r")
            ax.set_ylabel("time per call (µs, simulated)")
            ax.set_title("%s, P = %d, uniform" % (plat, P))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        for j in range(n, rows_n * cols):
            axes[j // cols][j % cols].axis("off")
        fig.tight_layout()
        name = "perf-fig7-tuna-radix.png"
        fig.savefig(os.path.join(img_dir, name), dpi=110)
        plt.close(fig)
        lines += ["![TuNA time against radix](%s/%s)" % (rel, name), ""]
    lines += ["| platform | P | S | trend | best radix | its time | slowest radix (time) |", "|---|---|---|---|---|---|---|"]
    for plat, P, S, shape, rbest, tbest, worst in trends:
        lines.append("| %s | %d | %s | %s | %d | %s | %d (%s) |" % (plat, P, size_name(S), shape, rbest, fmt_t(tbest),
                                                                  worst[0], fmt_t(worst[1])))
    lines.append("")
    return lines, trends


def fig7_comment(data, trends):
    if not trends:
        return []
    lines = ["Observed, per platform, P and S (from the table above; \"trend\" is where the best radix lies):", ""]
    expect = {16: "paper trend 1 (small S): best at small radix", KB: "paper trend 2 (medium S): U-shaped",
              16 * KB: "paper trend 3 (large S): best at large radix"}
    for plat, P, S, shape, rbest, tbest, worst in trends:
        if S == 16:
            agrees = rbest <= 4
        elif S == KB:
            agrees = 2 < rbest < P
        else:
            agrees = rbest >= max(8, int(math.sqrt(P)))
        lines.append("- %s, P = %d, S = %s: %s; %s: %s%s." % (
            plat, P, size_name(S), shape, expect.get(S, ""), "reproduced" if agrees else "**not reproduced**",
            "" if agrees else " (%s)" % radix_difference(data, plat, P, S, rbest)))
    return lines + [""]


def radix_difference(data, plat, P, S, rbest):
    """What the counters say about the best radix against radix 2 (for a trend not reproduced)."""
    rows = {r["params"]: r for r in data.select(platform=plat, P=P, op="alltoallv", algorithm="tuna",
                                                 dist="uniform", S=S) if r["time"] is not None}
    best, low = rows.get("radix=%d" % rbest), rows.get("radix=2")
    if not best or not low or best is low:
        return "no radix-2 row to compare"
    return "r = 2 sends %.2f× the bytes of r = %d in %s messages instead of %s; the bound is %s-dominated" % (
        int(low["payload_bytes"]) / max(1, int(best["payload_bytes"])), rbest, low["messages"], best["messages"],
        best["bound_kind"])


def heat_cells(data, plat, dist="uniform"):
    """{(P, S): (best mpix row, best peer row, mpich row)} for alltoallv."""
    cells = {}
    rows = data.select(platform=plat, op="alltoallv", dist=dist)
    keys = sorted(set((r["P"], r["S"]) for r in rows))
    for P, S in keys:
        here = [r for r in rows if r["P"] == P and r["S"] == S]
        mpix = best([r for r in here if not is_peer(r["algorithm"])])
        peer = best_peer(here)
        mpich = best([r for r in here if r["algorithm"] == "smpi:mpich"])
        cells[(P, S)] = (mpix, peer, mpich)
    return cells


def heatmaps(data, img_dir, rel):
    plats = data.platforms()
    lines = []
    all_cells = {p: heat_cells(data, p) for p in plats}
    if plt and any(all_cells.values()):
        fig, axes = plt.subplots(2, len(plats), figsize=(4.6 * len(plats), 8), squeeze=False)
        for col, plat in enumerate(plats):
            cells = all_cells[plat]
            Ps = sorted(set(k[0] for k in cells))
            Ss = sorted(set(k[1] for k in cells))
            for row_i, (title, pick) in enumerate((("best mpix / best peer", 1), ("best mpix / smpi:mpich", 2))):
                ax = axes[row_i][col]
                grid = [[float("nan")] * len(Ps) for _ in Ss]
                for (P, S), c in cells.items():
                    if c[0] and c[pick]:
                        grid[Ss.index(S)][Ps.index(P)] = math.log2(c[pick]["time"] / c[0]["time"])
                finite = [v for row in grid for v in row if not math.isnan(v)]
                lim = max([1.0] + [abs(v) for v in finite])
                im = ax.imshow(grid, origin="lower", cmap="RdBu_r", norm=TwoSlopeNorm(0, -lim, lim), aspect="auto")
                ax.set_xticks(range(len(Ps)))
                ax.set_xticklabels([str(p) for p in Ps])
                ax.set_yticks(range(len(Ss)))
                ax.set_yticklabels([size_name(s) for s in Ss])
                ax.set_xlabel("P")
                ax.set_ylabel("S (uniform in [0, S])")
                ax.set_title("%s: speedup of %s" % (plat, title), fontsize=9)
                for (P, S), c in cells.items():
                    if c[0] and c[pick]:
                        sp = c[pick]["time"] / c[0]["time"]
                        strong = abs(math.log2(sp)) > 0.6 * lim
                        ax.text(Ps.index(P), Ss.index(S), "%.2g" % sp, ha="center", va="center", fontsize=7,
                                color="white" if strong else "black")
                    else:
                        ax.text(Ps.index(P), Ss.index(S), "n/a", ha="center", va="center", fontsize=6, color="gray")
                fig.colorbar(im, ax=ax, label="log2 speedup (red: mpix faster)")
        fig.tight_layout()
        name = "perf-heatmap-speedup.png"
        fig.savefig(os.path.join(img_dir, name), dpi=110)
        plt.close(fig)
        lines += ["![Speedup heatmaps](%s/%s)" % (rel, name), ""]
    for plat in plats:
        cells = all_cells[plat]
        if not cells:
            continue
        Ps = sorted(set(k[0] for k in cells))
        Ss = sorted(set(k[1] for k in cells))
        lines += ["**%s** (uniform; cell: speedup over the best peer / over smpi:mpich, then the fastest mpix "
                  "algorithm and the fastest peer):" % plat, "",
                  "| S \\ P | " + " | ".join(str(P) for P in Ps) + " |", "|---" * (len(Ps) + 1) + "|"]
        for S in Ss:
            cells_txt = []
            for P in Ps:
                c = cells.get((P, S))
                if not c or not c[0]:
                    cells_txt.append("n/a")
                    continue
                m, pe, mp = c
                t = "%s / %s<br>%s<br>vs %s" % (
                    fmt_x(pe["time"] / m["time"]) if pe else "-", fmt_x(mp["time"] / m["time"]) if mp else "-",
                    short(m), peer_name(pe) if pe else "no peer run")
                cells_txt.append(t)
            lines.append("| %s | %s |" % (size_name(S), " | ".join(cells_txt)))
        lines.append("")
    return lines, all_cells


def heat_comment(data):
    ws = [x for x in wins(data) if x[0][2] == "alltoallv" and x[0][3] == "uniform"]
    if not ws:
        return []
    lines = []
    for plat in data.platforms():
        mine = [x for x in ws if x[0][0] == plat]
        if not mine:
            continue
        lo = min(mine, key=lambda x: x[3])
        hi = max(mine, key=lambda x: x[3])
        lost = [x for x in mine if x[3] < 1 and not x[2].get("floor")]
        under_floor = [x for x in mine if x[3] < 1 and x[2].get("floor")]
        lines.append("- %s: speedup of the best mpix algorithm over the best peer from %s (P = %d, S = %s: %s "
                     "against %s) to %s (P = %d, S = %s: %s against %s); the peer is faster in %d of %d cells%s." % (
                         plat, fmt_x(lo[3]), lo[0][1], size_name(lo[0][4]), short(lo[1]), peer_name(lo[2]),
                         fmt_x(hi[3]), hi[0][1], size_name(hi[0][4]), short(hi[1]), peer_name(hi[2]),
                         len(lost), len(mine), "" if not under_floor else " (and mpix is slower than a peer's "
                         "floor in %d more, which does not show that the peer is faster)" % len(under_floor)))
    return lines + [""]
