"""Bar charts as inline SVG, generated in Python: no JavaScript library, no CDN (the
report must work offline and from disk).

One chart type covers every figure of the report: bars per category, grouped (seed 000
Figs. 2–5: requests, downloads and unique documents side by side for each method) or stacked
(states over time). Every text goes through :func:`html.escape`; each bar carries a
``<title>`` with its exact value, which browsers show as a tooltip without any script.
Colors and sizes are presentation attributes, not ``style``, so the page's Content Security
Policy can forbid inline styles on elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["PALETTE", "BarChart", "Series", "format_bytes", "nice_ticks", "render_bar_chart"]

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

# The page's content is about 1,040 px wide (report/_page.py): a chart is drawn at that
# size, so its 11 px text shows at 11 px, and fills the width.
_W = 1000
_PLOT_H = 230
_TOP = 50  # the title, and the legend under it
_RIGHT = 16
_CHAR_W = 6.6  # an 11 px digit or letter of the system sans-serif, a little generous


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class BarChart:
    """Bars per category; one value per category in each series.

    ``unit="bytes"`` writes the value axis in decimal units (kB, MB, GB) instead of long
    numbers; ``value_labels`` writes each bar's value above it, so that a count of 1 next
    to one of 10,000 is still read, not only a hairline.
    """

    title: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    stacked: bool = False
    y_label: str = ""
    x_label: str = ""
    unit: str = ""
    value_labels: bool = False

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


def format_bytes(v: float) -> str:
    """Bytes in decimal units for an axis: 0, 500 B, 2.5 kB, 12.5 MB, 1.2 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:,.3g} {unit}"
    return f"{v:,.0f} B" if v else "0"


def _attrs(**kw: object) -> str:
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in kw.items())


def _width(text: str, size: float = 11) -> float:
    return len(text) * _CHAR_W * size / 11


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where a chart's parts go, measured from what they hold."""

    ticks: tuple[float, ...]
    tick_labels: tuple[str, ...]
    y_max: float
    left: float  # the plot's left edge
    plot_w: float
    band: float  # a category's width
    turned: bool  # category labels turned by 35°
    label_every: int
    height: int
    plot_bottom: float

    def y(self, v: float) -> float:
        return self.plot_bottom - (v / self.y_max) * _PLOT_H


def _frame(chart: BarChart, fmt: Callable[[float], str]) -> _Frame:
    n_cat = max(len(chart.categories), 1)
    if chart.stacked:
        tops = [sum(s.values[i] for s in chart.series) for i in range(len(chart.categories))]
    else:
        tops = [v for s in chart.series for v in s.values]
    ticks = nice_ticks(max(tops, default=0.0))
    tick_labels = [fmt(t) for t in ticks]
    title_room = 20 if chart.y_label else 0
    left = title_room + 10 + max(_width(t) for t in tick_labels) + 6
    plot_w = _W - left - _RIGHT
    band = plot_w / n_cat
    longest = max((_width(c) for c in chart.categories), default=0.0)
    turned = longest > band * 0.95
    # Turned labels are parallel lines of 11 px text: their ends must be 11 / sin 35° apart.
    label_every = max(1, math.ceil(20 / band)) if turned else 1
    # A label turned by 35° takes about 0.57 of its length downwards.
    labels_h = (longest * 0.6 + 16) if turned else 18
    bottom = labels_h + (18 if chart.x_label else 4)
    return _Frame(
        tuple(ticks),
        tuple(tick_labels),
        ticks[-1] or 1.0,
        left,
        plot_w,
        band,
        turned,
        label_every,
        round(_TOP + _PLOT_H + bottom),
        _TOP + _PLOT_H,
    )


def render_bar_chart(chart: BarChart, chart_id: str) -> str:
    """The chart as an ``<svg>`` element (``class="chart"``), sized by its ``viewBox``.

    The margins are measured from what they hold: the left one from the longest tick label
    and the axis title beside it, the bottom one from the category labels (turned when
    they would not fit their bar), so no text is cut off or drawn over another.
    """
    fmt = format_bytes if chart.unit == "bytes" else _fmt
    f = _frame(chart, fmt)
    out: list[str] = [
        f"<svg {_attrs(id=chart_id, class_='chart', viewBox=f'0 0 {_W} {f.height}')} "
        f'role="img" aria-labelledby="{escape(chart_id)}-t" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{escape(chart_id)}-t">{escape(chart.title)}</title>',
        f"<text {_attrs(x=_W / 2, y=18, text_anchor='middle', font_size=14, font_weight='bold')}>"
        f"{escape(chart.title)}</text>",
        *_axes(chart, f),
        *_bars(chart, f, fmt),
    ]
    if chart.x_label:
        out.append(
            f"<text {_attrs(x=round(f.left + f.plot_w / 2, 2), y=f.height - 6)} "
            f"{_attrs(text_anchor='middle')} "
            f'font-size="11">{escape(chart.x_label)}</text>'
        )
    out += _legend(chart)
    out.append("</svg>")
    return "".join(out)


def _axes(chart: BarChart, f: _Frame) -> list[str]:
    """The grid with its tick labels, the axes, the y axis' title; "no data" when empty."""
    out: list[str] = []
    left, plot_bottom = f.left, f.plot_bottom
    for t, label in zip(f.ticks, f.tick_labels, strict=True):
        yy = round(f.y(t), 2)
        out.append(
            f"<line {_attrs(x1=round(left, 2), x2=_W - _RIGHT, y1=yy, y2=yy, stroke='#dddddd')}/>"
            f"<text {_attrs(x=round(left - 6, 2), y=yy + 4, text_anchor='end', font_size=11)}>"
            f"{escape(label)}</text>"
        )
    lx0 = round(left, 2)
    out.append(f"<line {_attrs(x1=lx0, x2=lx0, y1=_TOP, y2=plot_bottom, stroke='#333')}/>")
    out.append(
        f'<line {_attrs(x1=lx0, x2=_W - _RIGHT, y1=plot_bottom, y2=plot_bottom)} stroke="#333"/>'
    )
    if chart.y_label:
        cy = _TOP + _PLOT_H / 2
        out.append(
            f"<text {_attrs(x=14, y=cy, font_size=11, text_anchor='middle')} "
            f'transform="rotate(-90 14 {cy})">{escape(chart.y_label)}</text>'
        )
    if chart.empty:
        out.append(
            f"<text {_attrs(x=round(left + f.plot_w / 2, 2), y=_TOP + _PLOT_H / 2)} "
            'text-anchor="middle" fill="#666666">no data</text>'
        )
    return out


def _bars(chart: BarChart, f: _Frame, fmt: Callable[[float], str]) -> list[str]:
    """Each category's bars (side by side, or stacked) and its label."""
    out: list[str] = []
    n_ser = max(len(chart.series), 1)
    inner = f.band * 0.8
    for i, cat in enumerate(chart.categories):
        x0 = f.left + i * f.band + (f.band - inner) / 2
        base = 0.0
        for j, s in enumerate(chart.series):
            v = s.values[i]
            color = PALETTE[j % len(PALETTE)]
            if chart.stacked:
                bx, bw = x0, inner
                y_top, y_bottom = f.y(base + v), f.y(base)
                base += v
            else:
                bw = inner / n_ser
                bx = x0 + j * bw
                y_top, y_bottom = f.y(v), f.y(0)
            h = max(y_bottom - y_top, 0.0)
            if v > 0 and h < 1:
                h, y_top = 1.0, y_bottom - 1.0  # a non-zero value stays visible
            out.append(
                f"<rect {_attrs(x=round(bx, 2), y=round(y_top, 2), width=round(max(bw - 1, 1), 2))}"
                f" {_attrs(height=round(h, 2), fill=color)}>"
                f"<title>{escape(f'{cat} — {s.name}: {fmt(v)}')}</title></rect>"
            )
            if chart.value_labels and not chart.stacked and v > 0:
                out.append(
                    f"<text {_attrs(x=round(bx + bw / 2, 2), y=round(y_top - 4, 2))} "
                    f"{_attrs(text_anchor='middle', font_size=10, fill='#333')}>"
                    f"{escape(fmt(v))}</text>"
                )
        if i % f.label_every == 0:
            out.append(_category_label(f, i, cat))
    return out


def _category_label(f: _Frame, i: int, cat: str) -> str:
    cx = f.left + i * f.band + f.band / 2
    ly = f.plot_bottom + 14
    anchor = "end" if f.turned else "middle"
    rotate = f' transform="rotate(-35 {cx:.2f} {ly})"' if f.turned else ""
    return (
        f"<text {_attrs(x=round(cx, 2), y=ly, text_anchor=anchor, font_size=11)}{rotate}>"
        f"{escape(cat)}</text>"
    )


def _legend(chart: BarChart) -> list[str]:
    """Right-aligned under the title (a single series is named by the title)."""
    out: list[str] = []
    if len(chart.series) > 1:
        lx: float = _W - _RIGHT
        for j, s in reversed(list(enumerate(chart.series))):
            label = escape(s.name)
            lx -= 22 + _width(s.name)
            out.append(
                f"<rect {_attrs(x=round(lx, 2), y=28, width=10, height=10)} "
                f"{_attrs(fill=PALETTE[j % len(PALETTE)])}/>"
                f"<text {_attrs(x=round(lx + 13, 2), y=37, font_size=11)}>{label}</text>"
            )
    return out


def charts_are_valid(charts: Sequence[BarChart]) -> bool:
    """Every chart has at least one category (used by tests and the page builder)."""
    return all(c.categories for c in charts)
