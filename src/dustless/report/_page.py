"""The report page: typed blocks in, one self-contained HTML document out.

A report is a list of :class:`Section`; a section is a list of blocks — :class:`Paragraph`,
:class:`Table`, :class:`Chart` — so other commands add their own sections (the change charts of
``dustless changes``) without writing HTML: they build blocks, and this module escapes every string.

The page works offline and from disk: inline CSS, inline SVG, no script, no external
resource. Its Content Security Policy (a ``<meta>`` tag, CSP Level 3) allows only the one
``<style>`` element, by its SHA-256 hash; everything else (scripts, images, fonts,
connections, forms) is refused, so even a hostile URL that ends up in a table cannot run
anything — it is escaped text, and there is nothing to run it with.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from dustless.analysis import Table  # the statistics' table model, rendered here as HTML
from dustless.report._svg import BarChart, render_bar_chart

__all__ = [
    "Block",
    "Chart",
    "Paragraph",
    "Section",
    "Table",
    "content_security_policy",
    "render_page",
]


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    note: bool = False  # rendered smaller and grey


@dataclass(frozen=True, slots=True)
class Chart:
    chart: BarChart
    caption: str = ""


Block = Paragraph | Table | Chart


@dataclass(frozen=True, slots=True)
class Section:
    """A titled part of the report; ``id`` is its anchor (letters, digits and ``-``)."""

    id: str
    title: str
    blocks: tuple[Block, ...]


_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1b1b1b; background: #fafafa; }
header { background: #12355b; color: #fff; padding: 18px 28px; }
header h1 { margin: 0; font-size: 22px; }
header p { margin: 4px 0 0; opacity: .85; }
nav { padding: 8px 28px; background: #e8eef5; }
nav a { margin-right: 14px; color: #12355b; }
main { padding: 8px 28px 40px; max-width: 1100px; }
section { margin-top: 28px; }
h2 { border-bottom: 2px solid #12355b; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #ccd; padding: 3px 8px; }
th { background: #eef1f6; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 10px 0 22px; background: #fff; border: 1px solid #dde; padding: 6px; }
figcaption { font-size: 12px; color: #555; }
svg.chart { width: 100%; height: auto; display: block; }
p.note { font-size: 12px; color: #555; }
"""


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy(css: str = _CSS) -> str:
    return (
        "default-src 'none'; "
        f"style-src 'sha256-{_hash(css)}'; "
        "img-src data:; script-src 'none'; object-src 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def _slug(text: str) -> str:
    s = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return s or "section"


def _table(t: Table) -> str:
    numeric = t.numeric or tuple(False for _ in t.columns)
    head = "".join(f"<th>{escape(h)}</th>" for h in t.columns)
    thead = f"<thead><tr>{head}</tr></thead>" if any(t.columns) else ""
    body = []
    for row in t.rows:
        cells = "".join(
            f'<td class="n">{escape(v)}</td>'
            if i < len(numeric) and numeric[i]
            else f"<td>{escape(v)}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return (
        f"<table><caption>{escape(t.title)}</caption>{thead}"
        f"<tbody>{''.join(body)}</tbody></table>"
        + "".join(f'<p class="note">{escape(n)}</p>' for n in t.notes)
    )


def render_page(
    title: str, subtitle: str, sections: Sequence[Section], *, generated: str = ""
) -> str:
    """The whole HTML document."""
    ids: set[str] = set()
    parts: list[str] = []
    nav: list[str] = []
    chart_no = 0
    for section in sections:
        sid = _slug(section.id)
        while sid in ids:
            sid += "-x"
        ids.add(sid)
        nav.append(f'<a href="#{escape(sid)}">{escape(section.title)}</a>')
        body: list[str] = []
        for block in section.blocks:
            if isinstance(block, Paragraph):
                cls = ' class="note"' if block.note else ""
                body.append(f"<p{cls}>{escape(block.text)}</p>")
            elif isinstance(block, Table):
                body.append(_table(block))
            else:
                chart_no += 1
                svg = render_bar_chart(block.chart, f"chart-{chart_no}")
                cap = f"<figcaption>{escape(block.caption)}</figcaption>" if block.caption else ""
                body.append(f"<figure>{svg}{cap}</figure>")
        parts.append(
            f'<section id="{escape(sid)}"><h2>{escape(section.title)}</h2>{"".join(body)}</section>'
        )
    footer = f'<p class="note">{escape(generated)}</p>' if generated else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(content_security_policy())}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>"
        f"<nav>{''.join(nav)}</nav><main>{''.join(parts)}{footer}</main></body></html>\n"
    )
