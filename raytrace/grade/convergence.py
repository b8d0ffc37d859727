"""How fast an integrator's error falls: RMSE and relative MSE against a reference, as
functions of samples per pixel and of wall time, with fitted log-log slopes.

For an unbiased Monte Carlo estimator with independent samples the RMSE falls as
spp^(-1/2) (relMSE, a squared error, as spp^-1); stratified or quasi-random samples can
do better where the integrand is smooth. A curve that flattens shows bias (or the
reference's own noise, or 8-bit quantisation when the reference is a PNG).

A series is measured with :func:`measure` from any ``render(spp, seed) -> image``
function, so the reference and the other curves may come from another renderer
(``scripts/convergence_mitsuba.py`` adds Mitsuba 3's). Errors at one spp are averaged
over ``seeds`` independent renders: RMSE = sqrt(mean of the MSEs)."""
import csv
import dataclasses
import io
import math
import time

import numpy as np

from .compare import _working
from .images import HDR, LDR, from_array
from .metrics import RELMSE_EPS


@dataclasses.dataclass
class Series:
    """One curve: errors at each spp (lists in the order of ``spp``)."""
    label: str
    integrator: str
    sampler: str
    spp: list
    seconds: list
    rmse: list
    relmse: list
    seeds: int

    def slope(self, y="rmse", x="spp"):
        return fit_slope(getattr(self, x), getattr(self, y))

    def to_json(self):
        d = dataclasses.asdict(self)
        d.update(slope_rmse_spp=self.slope("rmse", "spp"), slope_relmse_spp=self.slope("relmse", "spp"),
                 slope_rmse_seconds=self.slope("rmse", "seconds"))
        return d


def fit_slope(x, y):
    """Least-squares slope of log(y) against log(x) (points with x, y > 0; NaN with
    fewer than two)."""
    pts = [(math.log(a), math.log(b)) for a, b in zip(x, y) if a > 0 and b > 0]
    if len(pts) < 2:
        return float("nan")
    lx, ly = np.array(pts).T
    lx = lx - lx.mean()
    return float((lx * (ly - ly.mean())).sum() / (lx * lx).sum())


def errors(image, reference):
    """(MSE, relative MSE) of ``image`` against ``reference`` (a GradeImage): linear
    values for a float reference, sRGB-encoded 8/16-bit values for a PNG one."""
    actual = from_array(np.asarray(image), "render")
    domain = HDR if reference.kind == HDR else LDR
    _, we, d, _, _ = _working(actual, reference, domain)
    sq = d * d
    return float(sq.mean()), float((sq / np.square(np.abs(we) + RELMSE_EPS)).mean())


def measure(render, reference, spp_list, seeds=1, first_seed=0, label="", integrator="", sampler="",
            log=None):
    """Render at each spp of ``spp_list`` (``seeds`` times, seeds ``first_seed``...) with
    ``render(spp, seed)`` and measure the error against ``reference`` -> :class:`Series`."""
    out = Series(label, integrator, sampler, [], [], [], [], seeds)
    for spp in spp_list:
        mses, rels, secs = [], [], []
        for k in range(seeds):
            t0 = time.perf_counter()
            image = render(spp, first_seed + k)
            secs.append(time.perf_counter() - t0)
            mse, rel = errors(image, reference)
            mses.append(mse)
            rels.append(rel)
        out.spp.append(int(spp))
        out.seconds.append(float(np.mean(secs)))
        out.rmse.append(math.sqrt(float(np.mean(mses))))
        out.relmse.append(float(np.mean(rels)))
        if log is not None:
            log(f"{label}: {spp} spp, rmse {out.rmse[-1]:.5g}, relmse {out.relmse[-1]:.5g}, "
                f"{out.seconds[-1]:.3f} s")
    return out


def table_lines(series):
    """A text table of the numbers and slopes."""
    lines = [f"{'series':<28} {'spp':>7} {'seconds':>9} {'rmse':>11} {'relmse':>11}"]
    for s in series:
        for i, n in enumerate(s.spp):
            lines.append(f"{s.label:<28} {n:>7} {s.seconds[i]:>9.3f} {s.rmse[i]:>11.5g} {s.relmse[i]:>11.5g}")
        lines.append(f"{s.label:<28} slopes: rmse/spp {s.slope('rmse', 'spp'):+.3f}, "
                     f"relmse/spp {s.slope('relmse', 'spp'):+.3f}, rmse/time {s.slope('rmse', 'seconds'):+.3f}")
    return lines


def csv_text(series):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["label", "integrator", "sampler", "spp", "seconds", "rmse", "relmse", "seeds"])
    for s in series:
        for i, n in enumerate(s.spp):
            w.writerow([s.label, s.integrator, s.sampler, n, f"{s.seconds[i]:.6g}", f"{s.rmse[i]:.8g}",
                        f"{s.relmse[i]:.8g}", s.seeds])
    return buf.getvalue()


def plot_png(series, title="", time_axis=False):
    """PNG bytes of the log-log plots: RMSE and relMSE against spp (and against wall
    time with ``time_axis``), one line per series with its fitted slope in the legend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = 2 if time_axis else 1
    fig = Figure(figsize=(11, 4.2 * rows), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 2, squeeze=False)
    for r, xname in enumerate(["spp", "seconds"][:rows]):
        for c, (yname, ideal) in enumerate((("rmse", -0.5), ("relmse", -1.0))):
            ax = axes[r][c]
            for s in series:
                x, y = getattr(s, xname), getattr(s, yname)
                ax.loglog(x, y, "o-", label=f"{s.label}: slope {s.slope(yname, xname):+.2f}")
            if series and series[0].spp:
                x0, y0 = getattr(series[0], xname)[0], getattr(series[0], yname)[0]
                xs = np.array([min(min(getattr(s, xname)) for s in series),
                               max(max(getattr(s, xname)) for s in series)])
                ax.loglog(xs, y0 * (xs / x0) ** ideal, "--", color="0.6", label=f"slope {ideal:+g}")
            ax.set_xlabel("samples per pixel" if xname == "spp" else "wall time (s)")
            ax.set_ylabel("RMSE" if yname == "rmse" else "relative MSE")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
