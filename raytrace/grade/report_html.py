"""The HTML report of a regression run: ``OUT_DIR/index.html`` and its images in
``OUT_DIR/images/``.

One section per scene, failures first: the expected image, the actual one and the
difference heat map side by side, a fourth panel that switches between expected and
actual on click (or with the space bar when it has focus), the metrics with each
criterion marked, and the settings. The page is self-contained: no network, no external
script or style. When it has loaded, it checks that every image decoded and records
the count in ``<body data-images-loaded="ok/total">`` (a banner says so when one did
not)."""
import html
import pathlib
import re

from userio.outputs import write_bytes_atomic

from . import heatmap
from .images import from_array
from .metrics import NAMES, TITLES
from .regress import headline, ordered, summary

_DISPLAY = 256              # small images are shown enlarged by a whole factor, up to this width

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
.summary { margin: 0 0 1.2em; }
.banner { background: #b00020; color: #fff; padding: .5em 1em; display: none; }
section { background: #fff; border: 1px solid #ddd; border-left: 6px solid #999; margin: 0 0 1.2em;
          padding: .6em 1em 1em; }
section.failed, section.missing, section.error { border-left-color: #c62828; }
section.updated { border-left-color: #ef6c00; }
section.passed { border-left-color: #2e7d32; }
h2 { font-size: 1.1em; margin: .2em 0 .4em; }
.badge { display: inline-block; padding: 0 .5em; border-radius: 3px; color: #fff; font-size: .85em;
         margin-right: .4em; }
.badge.failed, .badge.missing, .badge.error { background: #c62828; }
.badge.updated { background: #ef6c00; }
.badge.passed { background: #2e7d32; }
.why { margin: 0 0 .6em; font-family: ui-monospace, monospace; }
.images { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; }
figure img { display: block; image-rendering: pixelated; border: 1px solid #ccc; background: #000; }
figure.toggle img { cursor: pointer; outline-offset: 2px; }
figcaption { font-size: .85em; color: #555; text-align: center; }
table { border-collapse: collapse; margin-top: .6em; }
td, th { padding: 1px 10px 1px 0; text-align: left; font-family: ui-monospace, monospace; font-size: .9em; }
td.bad { color: #c62828; font-weight: bold; }
td.good { color: #2e7d32; }
.settings { color: #555; font-size: .85em; margin: .5em 0 0; }
"""

_JS = """
document.querySelectorAll('figure.toggle img').forEach(function (img) {
  var cap = img.parentNode.querySelector('figcaption');
  function flip() {
    var showA = img.dataset.showing !== 'a';
    img.src = showA ? img.dataset.a : img.dataset.b;
    img.dataset.showing = showA ? 'a' : 'b';
    cap.textContent = (showA ? img.dataset.labelA : img.dataset.labelB) + ' (click to switch)';
  }
  img.addEventListener('click', flip);
  img.addEventListener('keydown', function (ev) {
    if (ev.key === ' ' || ev.key === 'Enter') { ev.preventDefault(); flip(); }
  });
});
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.dataset.imagesLoaded = ok + '/' + imgs.length;
  if (ok < imgs.length) {
    var b = document.getElementById('banner');
    b.textContent = (imgs.length - ok) + ' image(s) failed to load';
    b.style.display = 'block';
  }
});
"""


def _slug(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "scene"


def _img(src, label, w, h, extra=""):
    return (f'<img src="{html.escape(src)}" alt="{html.escape(label)}" width="{w}" height="{h}"{extra}>')


def _figure(src, label, caption, w, h):
    return f"<figure>{_img(src, label, w, h)}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _metrics_table(comparison):
    checks = {c.metric: (c, ok) for c, _, ok in comparison.checks}
    rows = []
    for name in NAMES:
        value = comparison.metrics.get(name)
        if value is None:
            continue
        text = "inf" if value == float("inf") else f"{value:.6g}"
        cls, limit = "", ""
        if name in checks:
            c, ok = checks[name]
            cls = ' class="good"' if ok else ' class="bad"'
            limit = f"{c.op} {c.limit:.6g}"
        rows.append(f"<tr><th>{html.escape(TITLES[name])}</th><td{cls}>{text}</td><td>{limit}</td></tr>")
    if comparison.ztest is not None:
        z = comparison.ztest
        cls = "good" if z.passed else "bad"
        rows.append(f'<tr><th>z-test rejected pixels</th><td class="{cls}">{100 * z.fraction:.3g} %</td>'
                    f"<td>&lt;= {100 * z.max_fraction:.3g} % (alpha {z.alpha:g})</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _section(case, files):
    slug = _slug(case.name)
    parts = [f'<section class="{case.status}" id="scene-{html.escape(slug)}">',
             f'<h2><span class="badge {case.status}">{case.status.upper()}</span>{html.escape(case.name)}</h2>']
    if case.message:
        parts.append(f'<p class="why">{html.escape(case.message)}</p>')
    actual = from_array(case.image, "actual") if case.image is not None else None
    comp = case.comparison
    if actual is not None:
        h, w = actual.height, actual.width
        k = max(1, _DISPLAY // w)
        dw, dh = w * k, h * k
        shown = {"actual": heatmap.preview(actual)}
        if comp is not None:
            shown["expected"] = heatmap.preview(comp.expected)
            diff, scale = heatmap.diff_heatmap(comp.diff)
            shown["diff"] = diff
        for kind, rgb in shown.items():
            files[f"images/{slug}.{kind}.png"] = heatmap.png_bytes(rgb)
        figs = []
        if comp is not None:
            figs.append(_figure(f"images/{slug}.expected.png", f"expected {case.name}", "expected", dw, dh))
        figs.append(_figure(f"images/{slug}.actual.png", f"actual {case.name}", "actual", dw, dh))
        if comp is not None:
            figs.append(_figure(f"images/{slug}.diff.png", f"difference {case.name}",
                                f"difference (black 0 .. yellow {scale:.3g})", dw, dh))
            toggle = (f' tabindex="0" data-a="images/{slug}.actual.png" data-b="images/{slug}.expected.png" '
                      f'data-label-a="actual" data-label-b="expected" data-showing="b"')
            figs.append('<figure class="toggle">'
                        + _img(f"images/{slug}.expected.png", f"compare {case.name}", dw, dh, toggle)
                        + "<figcaption>expected (click to switch)</figcaption></figure>")
        parts.append('<div class="images">' + "".join(figs) + "</div>")
    if comp is not None:
        parts.append(_metrics_table(comp))
    s = case.settings
    info = [f"scene {case.scene}"]
    if case.reference is not None:
        info.append(f"reference {case.reference}")
    if s:
        info.append(f"{s['width']} x {s['height']}, {s['integrator']}, {s['spp']} spp, seed {s['seed']}")
    if case.criteria:
        info.append(f"tolerance: {case.criteria}")
    info.append(f"{case.seconds:.2f} s")
    parts.append(f'<p class="settings">{html.escape("; ".join(info))}</p></section>')
    return "\n".join(parts)


def write_report(cases, out_dir, title="raytrace regress"):
    """Write the report of ``cases`` to ``out_dir`` -> path of ``index.html``."""
    out_dir = pathlib.Path(out_dir)
    files = {}
    sections = [_section(c, files) for c in ordered(cases)]
    head = f"{title}: {headline(cases)}"
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{html.escape(head)}</title><style>{_CSS}</style></head>\n<body>\n"
            "<div class=\"banner\" id=\"banner\"></div>\n"
            f"<h1>{html.escape(head)}</h1>\n<p class=\"summary\">{html.escape(summary(cases))}</p>\n"
            + "\n".join(sections) + f"\n<script>{_JS}</script>\n</body></html>\n")
    for rel, data in files.items():
        write_bytes_atomic(out_dir / rel, data)
    index = out_dir / "index.html"
    write_bytes_atomic(index, page.encode("utf-8"))
    return index
