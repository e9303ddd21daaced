"""The memory bound of extraction: formatting elements the parser would clone without end.

HTML's tree builder clones every active formatting element closed by something else into
each later container (§13.2.4.3 "reconstruct the active formatting elements"), and distinct
attributes escape Noah's Ark: 250 ``<b id=N>`` left open then ``<div>x</div>`` repeated made
lexbor build 7 million elements (2.7 GB) from 0.36 MB. ``extract._formatting`` counts what
the parser may clone; a page past ``MAX_CLONES`` is read flat. The work is measured as
memory in a process of its own (its peak, VmHWM, not time: the CI machine is loaded) and as
the elements of the tree lexbor is given to build; the links are those of the page.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dustless.extract import extract_links
from dustless.extract._guard import MAX_CLONES, MAX_DEPTH, shape
from dustless.extract._prepare import prepare
from dustless.testweb._clones import CLONE_VARIANTS, clone_links, clone_page

DOC = "http://h.test/"
SIZE = 200_000
GROWTH_MB = 64  # what extraction of one page may add to the process's peak memory

# Run in a process of its own, with its address space capped (a parser building gigabytes
# fails there at once, not after the machine's memory): the peak memory extraction added,
# the elements of the tree built from what lexbor was given, and the links.
_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from selectolax.lexbor import LexborHTMLParser
from dustless.extract import extract_links
from dustless.extract._prepare import prepare
from dustless.testweb._clones import clone_page
body = clone_page(sys.argv[1], int(sys.argv[2]))
text = body.decode()
extract_links(b"<p>warm up</p>", "http://h.test/")
def peak_kb():  # VmHWM, not ru_maxrss: Linux keeps that across execve (the parent's peak)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
before = peak_kb()
e = extract_links(body, "http://h.test/")
grown = peak_kb() - before
root = LexborHTMLParser(prepare(text, None)[0]).root
elements = sum(1 for _ in root.traverse(include_text=False))
print(json.dumps({"grown_kb": grown, "elements": elements, "starts": text.count("<"),
                  "links": [link.url for link in e.links], "flattened": e.flattened}))
"""


def _measure(variant: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, variant, str(SIZE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("variant", CLONE_VARIANTS)
def test_a_page_of_cloned_formatting_elements_costs_its_size(variant):
    got = _measure(variant)
    assert got["grown_kb"] < GROWTH_MB * 1024, got["grown_kb"]
    # lexbor builds at most an element per "<" of what it is given, plus html/head/body
    assert got["elements"] <= got["starts"] + 3
    assert got["flattened"]
    # every link of the page is found, the ones among the repeated part too
    expected = [DOC.rstrip("/") + path for path in clone_links(variant)]
    assert list(dict.fromkeys(got["links"])) == expected


@pytest.mark.parametrize("variant", CLONE_VARIANTS)
def test_the_measure_counts_past_the_bound(variant):
    s = shape(clone_page(variant, SIZE).decode())
    assert s.clones > MAX_CLONES
    assert s.hostile


# Ordinary markup that leaves formatting elements open, as old pages do: each counts a
# few clones at most. (Some nest deeper than the depth measure can follow, which flattens
# them as before: an unclosed <font> in every cell is counted as open.)
_ORDINARY = {
    "font in every cell": "<table>"
    + "<tr><td><font face=arial size=2>cell <b>bold</b><td><font color=red>x" * 800
    + "</table>",
    "unclosed paragraphs with bold": "<p><b>lead</b> text <i>it</i>" * 2000,
    "one font around all": "<font size=2>"
    + "<div><p>para <a href=/x>x</a></p></div>" * 1500
    + "</font>",
    "definitions with italic": "<dl>" + "<dt><i>term</i><dd>def <u>u</u>" * 1500 + "</dl>",
    "links in a nav": "<nav>" + "".join(f"<a href=/p{i}><b>p{i}</b></a>" for i in range(1500)),
    "misnested bold and italic": "<p><b>x<i>y</b>z</i></p>" * 1500,
    "small with spans": "<div><small class=s><span>x</span></small></div>" * 2000,
}


@pytest.mark.parametrize("name", sorted(_ORDINARY))
def test_ordinary_pages_that_leave_formatting_open_count_few_clones(name):
    page = f"<!DOCTYPE html><html><body>{_ORDINARY[name]}<a href='/end'>end</a></body></html>"
    assert page.count("<") > 1024  # measured
    s = shape(page)
    assert s.clones < MAX_CLONES // 10, s.clones
    text, flattened, _ = prepare(page, None)
    assert flattened == (s.depth > MAX_DEPTH)
    assert (text == page) is not flattened
    e = extract_links(page.encode(), DOC)
    assert e.links[-1].url == "http://h.test/end"
