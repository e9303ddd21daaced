"""Pages aimed at the guard's measure (extract/_guard.py), shared by its tests."""

from __future__ import annotations

from dustless.extract._guard import MAX_CLONES, MAX_DEPTH, MAX_OPTIONS

# Pages that pass any count of pairs but are hostile, and their measure's limit passed.
B_OPEN = "".join(f"<b id={i}>" for i in range(260))
HOSTILE = {
    # nesting under pairs: every level holds a pair, the pairs pop nothing
    "nested-with-pairs": "<div><code>x</code>" * (MAX_DEPTH + 10),
    # end tags that match nothing: a pair's end tag never pops what is under it
    "mismatched-ends": ("<div><code>x</em></code>" * (MAX_DEPTH + 10)),
    # upper case: read as two tags, the same measure
    "upper-case-pairs": "<DIV><CODE>x</CODE><Code>y</code>" * (MAX_DEPTH + 10),
    # 260 distinct <b> left open: every pair's end tag may pop, the next text clones them
    "clones-through-b": B_OPEN + "<i>x</i>y" * (MAX_CLONES // 200),
    # the same through <a> pairs (each adopts nothing: no <a> alive) and <code> pairs
    "clones-through-a": B_OPEN + "<a href=x>x</a>y<code>z</code>w" * (MAX_CLONES // 400),
    # Noah's Ark: four identical <b> evict one, whose ghost takes each pair's end tag
    "ark-ghosts": "<b><b><b><b>" + "<b>x</b>t" * 200 + B_OPEN + "<i>x</i>y" * 400,
    # options in a datalist, with pairs between them
    "datalist-options": "<datalist>" + "<option><code>v</code>" * (MAX_OPTIONS + 5),
    # end tags in raw text match nothing: the divs stay open
    "ends-in-raw-text": "<div><title></div><code>x</code></title>" * (MAX_DEPTH + 10),
    "ends-in-script": "<div><script>'</div>'<code>x</code></script>" * (MAX_DEPTH + 10),
    "ends-in-comment": "<div><!-- </div><code>x</code> -->" * (MAX_DEPTH + 10),
    # foreign content: in <svg> a <style>'s content is markup, pairs included
    "svg-style": "<svg><style>" + "<g><code>x</code>" * (MAX_DEPTH + 10),
    # a pair's start tag with too many attributes
    "attributes-on-a-pair": "<p>" * 600 + f"<code {' '.join(f'a{i}' for i in range(300))}>x</code>",
}


# Pages near the pairs' edges, hostile or not: each is measured the same both ways.
EDGES = [
    "<code>x</code >y<code/>z</code/>w<code\tclass='a'>v</code\n>",
    "<codex>x</codex><bx>y</bx><b=1>z</b><a href='<'>x</a><a title=\"a>b\">y</a>",
    "<a href=1>x</a><a href=2>" + "<a href=3>y</a>" * 50 + "</a>" + "<p>t" * 600,
    "<table><td><b>x</b><b id=1>" + "<i>x</i>" * 600 + "</td></table>" + "<p>t" * 600,
    "<nobr>x</nobr><nobr>" + "<nobr>y</nobr>" * 400 + "<p>t" * 300,
    "<script><!--<script>" + "<code>x</code>" * 300 + "</script>--></script>" + "<i>" * 600,
    "<math><![CDATA[" + "<code>x</code>" * 300 + "]]></math>" + "<p>z" * 300,
    "<plaintext>" + "<code>x</code>" * 600,
    # a tag across the end of raw text: read again from that end
    '<title><a title="</title>"><code>x</code>' * 300,
    "<script><b id='</script>'>y<code>x</code>" * 300 + "<i>" * 300,
    "<b>" * 3 + "<b>x</b>" * 100 + "</b>" * 3 + "<div>t</div>" * 300,
]


FRAGMENTS = [
    "<code>", "</code>", "<code class=l>", "<CODE>", "</CODE>", "<b>", "</b>", "<b id=1>",
    "<b id=2>", "<i>", "</i>", "<a href=x>", "</a>", "<nobr>", "</nobr>", "<span>",
    "</span>", "<em>", "</em>", "<div>", "</div>", "<p>", "</p>", "<li>", "<td>", "</td>",
    "<tr>", "<table>", "</table>", "<select>", "<option>", "<datalist>", "<svg>", "<math>",
    "<style>", "</style>", "<title>", "</title>", "<script>", "</script>", "<!--", "-->",
    "<![CDATA[", "]]>", "<object>", "</object>", "<caption>", "x", " ", "y z", "<br>",
    "<code>x</code>", "<b>y</b>", "<a href=q>z</a>", "<i> </i>", "<span class=s>t</span>",
    "<em>e</em >", "<b id=3>u</b>", "<code/>", "'", '"', "=", "<",
]  # fmt: skip
