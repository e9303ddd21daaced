"""Bar charts as inline SVG, generated in Python: no JavaScript library, no CDN (issue 5).

One chart type covers every figure of the report: bars per category, grouped (seed 000
Figs. 2–5: requests, downloads and unique documents side by side for each method) or stacked
(states over time). Every text goes through :func:`html.escape`; each bar carries a
``<title>`` with its exact value, which browsers show as a tooltip without any script.
Colors and sizes are presentation attributes, not ``style``, so the page's Content Security
Policy can forbid inline styles on elements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["PALETTE", "BarChart", "Series", "nice_ticks", "render_bar_chart"]

# Colour-blind-safe (Okabe–Ito), in the order series are drawn.
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
    "#999999",
)

_W, _H = 720, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 34, 64


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class BarChart:
    """Bars per category; one value per category in each series."""

    title: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    stacked: bool = False
    y_label: str = ""
    x_label: str = ""

    def __post_init__(self) -> None:
        for s in self.series:
            if len(s.values) != len(self.categories):
                raise ValueError(
                    f"chart {self.title!r}: series {s.name!r} has {len(s.values)} values "
                    f"for {len(self.categories)} categories"
                )

    @property
    def empty(self) -> bool:
        return not self.categories or not any(v > 0 for s in self.series for v in s.values)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 up to at least ``top`` (1, 2, 2.5, 5 × 10^k steps)."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / count
    exp = 10 ** math.floor(math.log10(raw))
    step = next(m * exp for m in (1, 2, 2.5, 5, 10) if m * exp >= raw)
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def _attrs(**kw: object) -> str:
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in kw.items())


def render_bar_chart(chart: BarChart, chart_id: str) -> str:
    """The chart as an ``<svg>`` element (``class="chart"``), sized by its ``viewBox``."""
    out: list[str] = [
        f"<svg {_attrs(id=chart_id, class_='chart', viewBox=f'0 0 {_W} {_H}')} "
        f'role="img" aria-labelledby="{escape(chart_id)}-t" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{escape(chart_id)}-t">{escape(chart.title)}</title>',
        f"<text {_attrs(x=_W / 2, y=18, text_anchor='middle', font_size=14, font_weight='bold')}>"
        f"{escape(chart.title)}</text>",
    ]
    plot_w = _W - _LEFT - _RIGHT
    plot_h = _H - _TOP - _BOTTOM
    n_cat = max(len(chart.categories), 1)
    n_ser = max(len(chart.series), 1)
    if chart.stacked:
        tops = [sum(s.values[i] for s in chart.series) for i in range(len(chart.categories))]
    else:
        tops = [v for s in chart.series for v in s.values]
    ticks = nice_ticks(max(tops, default=0.0))
    y_max = ticks[-1] or 1.0

    def y(v: float) -> float:
        return _TOP + plot_h - (v / y_max) * plot_h

    # Axes and grid.
    for t in ticks:
        yy = round(y(t), 2)
        out.append(
            f"<line {_attrs(x1=_LEFT, x2=_W - _RIGHT, y1=yy, y2=yy, stroke='#dddddd')}/>"
            f"<text {_attrs(x=_LEFT - 6, y=yy + 4, text_anchor='end', font_size=11)}>"
            f"{escape(_fmt(t))}</text>"
        )
    out.append(f"<line {_attrs(x1=_LEFT, x2=_LEFT, y1=_TOP, y2=_TOP + plot_h, stroke='#333')}/>")
    out.append(
        f"<line {_attrs(x1=_LEFT, x2=_W - _RIGHT, y1=_TOP + plot_h, y2=_TOP + plot_h)}"
        ' stroke="#333"/>'
    )
    if chart.y_label:
        out.append(
            f"<text {_attrs(x=14, y=_TOP + plot_h / 2, font_size=11, text_anchor='middle')} "
            f'transform="rotate(-90 14 {_TOP + plot_h / 2})">{escape(chart.y_label)}</text>'
        )
    if chart.empty:
        out.append(
            f"<text {_attrs(x=_LEFT + plot_w / 2, y=_TOP + plot_h / 2, text_anchor='middle')} "
            'fill="#666666">no data</text>'
        )
    # Bars.
    band = plot_w / n_cat
    inner = band * 0.8
    label_every = max(1, math.ceil(n_cat / 24))  # keep category labels readable
    for i, cat in enumerate(chart.categories):
        x0 = _LEFT + i * band + (band - inner) / 2
        base = 0.0
        for j, s in enumerate(chart.series):
            v = s.values[i]
            color = PALETTE[j % len(PALETTE)]
            if chart.stacked:
                bx, bw = x0, inner
                y_top, y_bottom = y(base + v), y(base)
                base += v
            else:
                bw = inner / n_ser
                bx = x0 + j * bw
                y_top, y_bottom = y(v), y(0)
            h = max(y_bottom - y_top, 0.0)
            if v > 0 and h < 1:
                h, y_top = 1.0, y_bottom - 1.0  # a non-zero value stays visible
            out.append(
                f"<rect {_attrs(x=round(bx, 2), y=round(y_top, 2), width=round(max(bw - 1, 1), 2))}"
                f" {_attrs(height=round(h, 2), fill=color)}>"
                f"<title>{escape(f'{cat} — {s.name}: {_fmt(v)}')}</title></rect>"
            )
        if i % label_every == 0:
            cx = _LEFT + i * band + band / 2
            ly = _TOP + plot_h + 14
            anchor = "middle" if n_cat <= 8 else "end"
            rotate = "" if n_cat <= 8 else f' transform="rotate(-35 {cx:.2f} {ly})"'
            out.append(
                f"<text {_attrs(x=round(cx, 2), y=ly, text_anchor=anchor, font_size=11)}{rotate}>"
                f"{escape(cat)}</text>"
            )
    if chart.x_label:
        out.append(
            f"<text {_attrs(x=_LEFT + plot_w / 2, y=_H - 4, text_anchor='middle', font_size=11)}>"
            f"{escape(chart.x_label)}</text>"
        )
    # Legend, top right.
    lx = _W - _RIGHT
    for j, s in reversed(list(enumerate(chart.series))):
        label = escape(s.name)
        lx -= 22 + 7 * len(s.name)
        out.append(
            f"<rect {_attrs(x=lx, y=24, width=10, height=10, fill=PALETTE[j % len(PALETTE)])}/>"
            f"<text {_attrs(x=lx + 13, y=33, font_size=11)}>{label}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def charts_are_valid(charts: Sequence[BarChart]) -> bool:
    """Every chart has at least one category (used by tests and the page builder)."""
    return all(c.categories for c in charts)
