"""Host-level rules: what the server said (redirects) and ``www`` aliases (content).

Seed 001 names the two rules a server states itself: ``/dir`` answered with ``301 /dir/``,
and a bare host answered with ``301`` to its ``www.`` host (or, as many servers do, the
other way round). Those are right by the server's own word: only permanent redirects
(``301``, ``308``) count, and a host that also serves documents of its own is no alias.

A ``www`` twin that serves the same bytes *without* redirecting (seed 000 §4.3) is found
from content, as DustBuster finds its rules: the pairs ``http://www.h/x`` and ``http://h/x``
that were both fetched must (nearly) always hold the same payload.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dustless.url import split_lenient

from ._learn_evidence import Doc, Evidence, Observation, measure
from ._learned import AddSlash, HostRedirect

__all__ = ["HostFinding", "directory_of", "in_part", "learn_aliases", "learn_redirects", "spot_of"]

PERMANENT = frozenset({301, 308})


@dataclass(frozen=True, slots=True)
class HostFinding:
    """A host-level rule for ``host``, with its evidence and the verdict."""

    host: str
    rule: AddSlash | HostRedirect
    evidence: Evidence
    accepted: bool
    reason: str


def _same_but_slash(src: str, dst: str) -> str | None:
    """The path ``/dir`` when ``dst`` is ``src`` with ``/`` added to its path, else None."""
    s, d = split_lenient(src), split_lenient(dst)
    if not (s.is_absolute and d.is_absolute):
        return None
    if (s.scheme or "").lower() != (d.scheme or "").lower() or s.host != d.host:
        return None
    if s.port != d.port or s.query != d.query or not s.path or s.path.endswith("/"):
        return None
    return s.path if d.path == s.path + "/" else None


def _host_moved(src: str, dst: str) -> tuple[str, str] | None:
    """(source host, target host) when ``dst`` is ``src`` on another host, path kept."""
    s, d = split_lenient(src), split_lenient(dst)
    if not (s.is_absolute and d.is_absolute) or s.host == d.host or not d.host:
        return None
    if s.port != d.port or (s.path or "/") != (d.path or "/") or s.query != d.query:
        return None
    return s.host, d.host


def learn_redirects(
    observations: Iterable[Observation], docs_by_host: Mapping[str, Sequence[Doc]]
) -> list[HostFinding]:
    """``AddSlash(path)`` and ``HostRedirect`` rules from the permanent redirects seen."""
    slashes: dict[tuple[str, str], set[str]] = {}
    moves: dict[tuple[str, str], set[str]] = {}
    redirects: Counter[str] = Counter()
    for o in observations:
        if o.status not in PERMANENT or not o.location:
            continue
        src_host = split_lenient(o.url).host
        redirects[src_host] += 1
        if (path := _same_but_slash(o.url, o.location)) is not None:
            slashes.setdefault((src_host, path), set()).add(o.url)
        elif (move := _host_moved(o.url, o.location)) is not None:
            moves.setdefault(move, set()).add(o.url)
    out: list[HostFinding] = []
    for (host, path), urls in sorted(slashes.items()):
        docs = docs_by_host.get(host, ())
        rule = AddSlash(path, support=len(urls))
        ev = measure(rule.apply, docs)
        ok = ev.differ == 0
        reason = "the server redirected it" if ok else "the path also served other content"
        out.append(HostFinding(host, _stats(rule, ev), ev, ok, reason))
    for (src, dst), urls in sorted(moves.items()):
        own = len(docs_by_host.get(src, ()))
        move_rule = HostRedirect(dst, support=len(urls))
        ev = Evidence(0, 0)
        # Every answer of the host must be this redirect: a host that serves pages of its
        # own, or redirects elsewhere too, is not an alias of ``dst``.
        ok = own == 0 and len(urls) == redirects[src]
        reason = "the server redirected the host" if ok else "the host also answers on its own"
        out.append(HostFinding(src, _stats(move_rule, ev), ev, ok, reason))
    return out


def _stats(rule: AddSlash | HostRedirect, ev: Evidence) -> AddSlash | HostRedirect:
    # By the server's word the rule holds: fp 0 unless fetched pairs say otherwise.
    fp = ev.fp_rate if ev.fp_rate is not None else 0.0
    if isinstance(rule, AddSlash):
        return AddSlash(rule.path, support=rule.support, fp_rate=fp)
    return HostRedirect(rule.to, support=rule.support, fp_rate=fp)


def learn_aliases(
    docs_by_host: Mapping[str, Sequence[Doc]],
    *,
    max_fp: float,
    min_support: int,
    skip: Iterable[str] = (),
) -> list[HostFinding]:
    """``HostRedirect`` between ``h`` and ``www.h`` when both serve the same documents.

    The target is the host with more documents (the spelling the site links most), the
    bare host on a tie. Evidence: the URL pairs that differ only in the host.
    """
    done = set(skip)
    out: list[HostFinding] = []
    for www in sorted(docs_by_host):
        if not www.startswith("www."):
            continue
        bare = www[4:]
        if bare not in docs_by_host or www in done or bare in done:
            continue
        n_www, n_bare = len(docs_by_host[www]), len(docs_by_host[bare])
        src, dst = (www, bare) if n_bare >= n_www else (bare, www)
        rule = HostRedirect(dst)
        sources = docs_by_host[src]
        moved = [Doc(rule.apply(d.url), d.sha1) for d in sources]
        targets = docs_by_host[dst]
        ev = measure(lambda u: u, [*moved, *targets])
        # Pairs inside one host are not this rule's doing: count only the cross-host ones.
        inner = measure(lambda u: u, moved)
        ev = Evidence(ev.pairs - inner.pairs, ev.equal - inner.equal)
        fp = ev.fp_rate
        found = HostRedirect(dst, support=ev.equal, fp_rate=fp if fp is not None else 0.0)
        if ev.pairs == 0:
            ok, reason = False, "no page fetched on both hosts"
        elif fp is not None and fp > max_fp:
            ok, reason = False, f"fp {fp:.2%} > {max_fp:.2%}: a different site"
        elif ev.equal < min_support:
            ok, reason = False, f"support {ev.equal} < {min_support}"
        else:
            ok, reason = True, "both hosts serve the same pages"
        out.append(HostFinding(src, found, ev, ok, reason))
    return out


# The parts of a site's URL space a host alias is checked and judged by (``_learn_live``,
# ``_Active.over_budget``), and the crawl fetches its checks by (``crawl/learn.py``).
def _path(url: str) -> str:
    rest = url.partition("://")[2]
    return "/" + rest.partition("/")[2].partition("?")[0].partition("#")[0]


def directory_of(url: str) -> str:
    """The directory a URL's path lies in (``/a/b/`` for ``/a/b/x.html`` and ``/a/b/``): the
    part of the site a check that found two documents distrusts, with its subdirectories."""
    return _path(url).rpartition("/")[0] + "/"


def in_part(directory: str, part: str) -> bool:
    """``directory`` is the distrusted ``part`` or below it — but for the top level, which
    stands for its own pages only (a difference in a site's top-level page must not cost a
    check of every page of the site)."""
    return directory == part or (part != "/" and directory.startswith(part))


def spot_of(url: str) -> str:
    """Where a merge lies, as narrowly as a check stands for it: its directory, and within it
    the leading word of its file name when the name has several (``/a/b/app-`` for
    ``/a/b/app-psql.html``). A mirror left out a directory, or a run of related pages that a
    flat site names by a shared prefix (the real web's documentation, whose subdirectories
    are flattened into ``dir-file.html`` names): each is its own spot, checked on its first
    merge, however deep it sits and however many pages share its first segment. A word and
    a number (``news-5.html``, ``item_12``) is one page of a series, not a run: its directory."""
    directory, _, name = _path(url).rpartition("/")
    stem = name.partition(".")[0]
    for i, c in enumerate(stem):
        if c in "-_":
            word, rest = stem[:i], stem[i + 1 :]
            if word.isalpha() and rest[:1].isalpha():
                return f"{directory}/{word}{c}"
            break
    return directory + "/"
