"""Real documents for the ``real`` test web: Debian's documentation packages (I/O at the edge).

Sites that only serve text we wrote model only what we thought of. The ``real`` profile
serves prose no one here wrote: the HTML manuals of a few Debian documentation packages,
each page reduced to its *main content* — title, text blocks and the links it makes to other
pages of the same package — so that every site can render it again in its own templates.

Where a package's pages come from, first found first:

1. the installed package (``/usr/share/doc/…``: CI installs ``libxml2-doc``);
2. the cache (``$DUSTLESS_REALWEB_CACHE``, default ``~/.cache/dustless/realweb``), where
3. ``apt-get download PKG`` and ``dpkg-deb -x`` put it when it is missing (no root needed,
   but the package lists and the network: CI runs ``apt-get update`` in ``.ci/run``).

A package that cannot be had is left out; :func:`load_corpus` says which. The parse of each
package is cached as JSON beside it (parsing PostgreSQL's 1,169 pages takes seconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

__all__ = [
    "PACKAGES",
    "Block",
    "Corpus",
    "DocPackage",
    "Document",
    "cache_dir",
    "load_corpus",
    "parse_document",
]

#: bump when the parse changes: cached parses of another version are parsed again
_PARSE_VERSION = 3


@dataclass(frozen=True, slots=True)
class DocPackage:
    """A Debian package of HTML documentation: its name and where its pages lie in it."""

    name: str
    html_dir: str  # inside the package's file tree (and under / when installed)


#: (name, html dir) of the packages used: a few hundred pages each with real internal links,
#: 0.7–2.2 MB downloads (``apt-cache show``: Size)
PACKAGES: tuple[DocPackage, ...] = (
    DocPackage("postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html"),  # 1,169 pages
    DocPackage("git-doc", "usr/share/doc/git-doc"),  # 242 pages
    DocPackage("libxml2-doc", "usr/share/doc/libxml2/html"),  # 46 pages
)

#: a segment of a block: text, or a link ``(anchor text, target document id)``
Segment = str | tuple[str, str]


@dataclass(frozen=True, slots=True)
class Block:
    """One block of main content: ``tag`` is ``h2``, ``h3``, ``p``, ``pre`` or ``li``."""

    tag: str
    segments: tuple[Segment, ...]

    def text(self) -> str:
        return "".join(s if isinstance(s, str) else s[0] for s in self.segments)


@dataclass(frozen=True, slots=True)
class Document:
    """A page's main content; ``id`` is ``package/relative/path.html``."""

    id: str
    title: str
    blocks: tuple[Block, ...]

    @property
    def package(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def path(self) -> str:
        """The page's path inside its package's HTML directory."""
        return self.id.split("/", 1)[1]

    def links(self) -> tuple[str, ...]:
        """The documents it links to, in order, each once."""
        out: dict[str, None] = {}
        for block in self.blocks:
            for seg in block.segments:
                if not isinstance(seg, str) and seg[1] != self.id:
                    out[seg[1]] = None
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Corpus:
    """Every document of the packages found, by package; ``missing``: the others."""

    packages: dict[str, tuple[Document, ...]]
    missing: tuple[str, ...]
    #: package -> its HTML directory on this machine (raw files, for autoindex hosts)
    roots: dict[str, Path]

    def documents(self, package: str) -> tuple[Document, ...]:
        return self.packages.get(package, ())


def cache_dir() -> Path:
    env = os.environ.get("DUSTLESS_REALWEB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "dustless" / "realweb"


# -- obtaining the packages -------------------------------------------------------------------


def _package_root(pkg: DocPackage, cache: Path, fetch: bool) -> Path | None:
    installed = Path("/") / pkg.html_dir
    if installed.is_dir() and any(installed.glob("*.html")):
        return installed
    unpacked = cache / pkg.name / "root" / pkg.html_dir
    if unpacked.is_dir() and any(unpacked.glob("*.html")):
        return unpacked
    if not fetch or shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return None
    where = cache / pkg.name
    # Two processes may fetch the same package at once (the test suite's two workers each
    # start a real test web): each downloads and unpacks into a directory of its own, then
    # renames its tree into place in one step. A rename onto the other's finished tree fails
    # and the loser uses the winner's, so no process ever reads a half-unpacked tree.
    try:
        where.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=where))
    except OSError:
        return None
    try:
        subprocess.run(
            ["apt-get", "download", "-qq", pkg.name],
            cwd=work,
            check=True,
            capture_output=True,
            timeout=300,
        )
        debs = sorted(work.glob(f"{pkg.name}_*.deb"))
        if not debs:
            return None
        subprocess.run(
            ["dpkg-deb", "-x", str(debs[-1]), str(work / "root")],
            check=True,
            capture_output=True,
            timeout=300,
        )
        with contextlib.suppress(OSError):  # another process's tree is there: use it
            (work / "root").rename(where / "root")
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return unpacked if unpacked.is_dir() and any(unpacked.glob("*.html")) else None


def load_corpus(packages: tuple[DocPackage, ...] = PACKAGES, fetch: bool = True) -> Corpus:
    """The documents of ``packages``: installed, cached, or downloaded into the cache."""
    cache = cache_dir()
    found: dict[str, tuple[Document, ...]] = {}
    roots: dict[str, Path] = {}
    missing: list[str] = []
    for pkg in packages:
        root = _package_root(pkg, cache, fetch)
        if root is None:
            missing.append(pkg.name)
            continue
        docs = _load_parsed(pkg, root, cache)
        if docs:
            found[pkg.name] = docs
            roots[pkg.name] = root
        else:
            missing.append(pkg.name)
    return Corpus(found, tuple(missing), roots)


def _load_parsed(pkg: DocPackage, root: Path, cache: Path) -> tuple[Document, ...]:
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    stamp = f"{_PARSE_VERSION}:{len(files)}:{sum((root / f).stat().st_size for f in files)}"
    parsed = cache / f"{pkg.name}.parsed.json"
    try:
        data = json.loads(parsed.read_text(encoding="utf-8"))
        if data.get("stamp") == stamp:
            return tuple(_doc_from_json(d) for d in data["documents"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    known = {f"{pkg.name}/{f}" for f in files}
    docs = []
    for f in files:
        text = (root / f).read_bytes().decode("utf-8", errors="replace")
        doc = parse_document(f"{pkg.name}/{f}", text, known)
        if doc.blocks:
            docs.append(doc)
    try:
        parsed.parent.mkdir(parents=True, exist_ok=True)
        tmp = parsed.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps({"stamp": stamp, "documents": [_doc_to_json(d) for d in docs]}),
            encoding="utf-8",
        )
        tmp.replace(parsed)
    except OSError:
        pass  # a read-only cache: parse again next time
    return tuple(docs)


def _doc_to_json(doc: Document) -> object:
    return [
        doc.id,
        doc.title,
        [[b.tag, [s if isinstance(s, str) else list(s) for s in b.segments]] for b in doc.blocks],
    ]


def _doc_from_json(data: list[object]) -> Document:
    doc_id, title, blocks = data
    assert isinstance(doc_id, str)
    assert isinstance(title, str)
    assert isinstance(blocks, list)
    return Document(
        doc_id,
        title,
        tuple(
            Block(tag, tuple(s if isinstance(s, str) else (s[0], s[1]) for s in segs))
            for tag, segs in blocks
        ),
    )


# -- main content -----------------------------------------------------------------------------

_BLOCKS = {"h1": "h2", "h2": "h2", "h3": "h3", "h4": "h3", "p": "p", "pre": "pre", "li": "li"}
_BLOCKS |= {"dt": "p", "dd": "p", "td": "p", "th": "p", "blockquote": "p"}
_SKIP_TAGS = {"head", "script", "style", "title", "noscript"}
#: boilerplate of the packages' own templates: DocBook's navigation, asciidoc's header/footer
_SKIP_CLASSES = ("navheader", "navfooter", "toc", "footer", "header", "navigation")
_VOID = {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "wbr"}
_MAX_BLOCK = 4000  # characters: a block past this is cut (giant tables and listings)


class _MainContent(HTMLParser):
    def __init__(self, doc_id: str, known: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.doc_id = doc_id
        self.known = known
        self.base = posixpath.dirname(doc_id)
        self.title = ""
        self.in_title = False
        self.stack: list[tuple[str, bool]] = []  # (tag, skips its content)
        self.skip = 0
        self.blocks: list[Block] = []
        self.tag = ""
        self.segments: list[Segment] = []
        self.link: str | None = None
        self.anchor: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "title":
            self.in_title = True
        if tag in _VOID:
            if tag == "br" and self.tag == "pre":
                self._text("\n")
            return
        cls = f"{a.get('class') or ''} {a.get('id') or ''}".lower()
        skips = tag in _SKIP_TAGS or any(c in cls.split() for c in _SKIP_CLASSES)
        self.stack.append((tag, skips))
        self.skip += skips
        if self.skip:
            return
        if tag in _BLOCKS:
            self._close()
            self.tag = _BLOCKS[tag]
        elif tag == "a" and a.get("href"):
            self.link = self._target(a["href"] or "")
            self.anchor = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if not any(t == tag for t, _ in self.stack):
            return  # a stray end tag
        while self.stack:
            t, skips = self.stack.pop()
            self.skip -= skips
            if not self.skip and (t == "a" and self.link is not None):
                text = "".join(self.anchor)
                self.segments.append((text, self.link) if text.strip() else text)
                self.link = None
            if not self.skip and t in _BLOCKS:
                self._close()
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if not self.skip:
            self._text(data)

    def _text(self, data: str) -> None:
        if not self.tag:
            if not data.strip():
                return
            self.tag = "p"  # text outside any block: a paragraph of its own
        if self.link is not None:
            self.anchor.append(data)
        else:
            self.segments.append(data)

    def _target(self, href: str) -> str | None:
        if ":" in href.split("/", 1)[0] or href.startswith(("/", "#")):
            return None  # absolute, another scheme, or a fragment of this page
        path = href.split("#", 1)[0].split("?", 1)[0]
        target = posixpath.normpath(posixpath.join(self.base, path))
        return target if target in self.known else None

    def _close(self) -> None:
        if self.link is not None:
            self.segments.append("".join(self.anchor))
            self.link = None
        if self.tag and self.segments:
            block = _tidy(self.tag, self.segments)
            if block is not None:
                self.blocks.append(block)
        self.tag = ""
        self.segments = []


def _tidy(tag: str, segments: list[Segment]) -> Block | None:
    """Whitespace collapsed (except in ``pre``), adjacent texts joined, cut at _MAX_BLOCK."""
    out: list[Segment] = []
    size = 0
    for seg in segments:
        if isinstance(seg, str):
            if out and isinstance(out[-1], str):
                out[-1] += seg
            else:
                out.append(seg)
            size += len(seg)
        else:
            out.append((" ".join(seg[0].split()), seg[1]))
            size += len(seg[0])
        if size > _MAX_BLOCK:
            break
    if tag != "pre":
        out = [" ".join(s.split()) if isinstance(s, str) else s for s in out]
        # one space between texts and anchors, as the browser would show them
        spaced: list[Segment] = []
        for seg in out:
            if seg == "":
                continue
            if spaced:
                spaced.append(" ")
            spaced.append(seg)
        out = spaced
    text = "".join(s if isinstance(s, str) else s[0] for s in out)
    if not text.strip():
        return None
    return Block(tag, tuple(out))


def parse_document(doc_id: str, html_text: str, known: set[str]) -> Document:
    """The main content of one page; links kept only to pages in ``known``."""
    parser = _MainContent(doc_id, known)
    parser.feed(html_text)
    parser.close()
    parser._close()
    title = " ".join(parser.title.split()) or posixpath.basename(doc_id)
    return Document(doc_id, title, tuple(parser.blocks))


if __name__ == "__main__":  # python -m dustless.testweb._corpus: fetch and report
    corpus = load_corpus()
    for name, docs in corpus.packages.items():
        links = sum(len(d.links()) for d in docs)
        print(f"{name}\t{len(docs)} documents\t{links} links\t{corpus.roots[name]}")
    for name in corpus.missing:
        print(f"{name}\tmissing")
