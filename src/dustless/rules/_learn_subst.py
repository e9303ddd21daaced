"""DustBuster's substring substitution rules, mined from one host's documents.

Bar-Yossef, Keidar & Schonfeld ("Do not crawl in the DUST", WWW 2007; ACM TWEB 2009):

1. **Candidates** (§4): two URLs ``p·α·s`` and ``p·β·s`` that share an *envelope* (prefix
   ``p``, suffix ``s``) and whose documents are the same suggest the rule ``α → β``. Like
   DustBuster we pair URLs only inside a *bucket* of the same content (here: the same
   payload SHA-1) and skip buckets larger than ``max_bucket`` — a page that a hundred URLs
   serve (a soft 404, an error page) says nothing about how the site spells its URLs.
   The difference of two URLs is cut at the longest common prefix and suffix, then widened
   to the nearest delimiter (``/ ? & = ;``) on each side so that a rule stays a whole
   component (``/index.html`` → ``/``, ``/FORUM/`` → ``/forum/``, never ``N`` → ``n``); when
   the paths have the same number of segments, each differing segment is a candidate too,
   which lets ``/Lab/`` → ``/lab/`` gather support from pages that also differ elsewhere.
2. **Support** (§4.2): the number of distinct URL pairs (envelopes) showing the rule.
3. **Ranking and elimination** (§5): candidates by support, largest first; a candidate that
   the rules already accepted produce by themselves (``/desk/index.html`` → ``/desk/`` once
   ``/index.html`` → ``/`` is in) is redundant and dropped.
4. **Validation** (§5): each remaining rule is applied to every document of the host and
   kept only if the pairs it merges differ in content at most ``max_fp`` of the time.

The direction of a rule goes to the *canonical* spelling of the two: fewer upper-case
letters, then the shorter, then the smaller string — so case variants fold to lower case
and ``/a/index.html`` to ``/a/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from dustless.errors import ScriptError
from dustless.url import split_lenient

from ._learn_evidence import Doc, Evidence, head_of, measure, rewrite_docs
from ._learn_params import _params
from ._learned import QueryToPath, StripPrefix, Substitute

__all__ = ["SubstFinding", "TemplateFinding", "learn_substitutions", "learn_templates"]

_DELIMS = frozenset("/?&=;")
# Validating a candidate costs a pass over the host's documents: bound the work per host.
_MAX_VALIDATED = 400


@dataclass(frozen=True, slots=True)
class SubstFinding:
    host: str
    rule: Substitute
    evidence: Evidence
    accepted: bool
    reason: str


def _canon_key(rest: str) -> tuple[int, int, str]:
    return (sum(c.isupper() for c in rest), len(rest), rest)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    i = 0
    while i < limit and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def diff_rule(variant: str, canon: str) -> tuple[str, str] | None:
    """``(α, β)``: the difference of two spellings, widened to whole components."""
    p = _common_prefix(variant, canon)
    s = _common_suffix(variant, canon, min(len(variant), len(canon)) - p)
    start = p
    while start > 0 and variant[start - 1] not in _DELIMS:
        start -= 1
    if start > 0:
        start -= 1  # the delimiter itself anchors the rule: "/index.html", not "index.html"
    t = 0
    while t < s and variant[len(variant) - s + t] not in _DELIMS:
        t += 1
    if t < s:
        t += 1
    find = variant[start : len(variant) - s + t]
    replace = canon[start : len(canon) - s + t]
    return (find, replace) if find != replace else None


def _segment_rules(variant: str, canon: str) -> list[tuple[str, str]]:
    """``/SEG/`` → ``/seg/`` for each differing path segment of equally deep paths."""
    vpath, vq, vquery = variant.partition("?")
    cpath, cq, cquery = canon.partition("?")
    if vquery != cquery or vq != cq:
        return []
    vs, cs = vpath.split("/"), cpath.split("/")
    if len(vs) != len(cs):
        return []
    diffs = [i for i in range(1, len(vs)) if vs[i] != cs[i]]
    if len(diffs) < 2:
        return []  # one differing segment: the whole difference already is that rule
    out = []
    for i in diffs:
        last = i == len(vs) - 1
        end = ("?" if vq else "") if last else "/"
        out.append((f"/{vs[i]}{end}", f"/{cs[i]}{end}"))
    return out


def candidates(docs: Sequence[Doc], max_bucket: int) -> dict[tuple[str, str], int]:
    """Candidate rules ``(α, β)`` → support (distinct URL pairs showing it)."""
    buckets: dict[str, set[str]] = {}
    for d in docs:
        head = head_of(d.url)
        if head:
            buckets.setdefault(d.sha1, set()).add(d.url[len(head) :])
    support: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for rests in buckets.values():
        if len(rests) > max_bucket:
            continue
        for a, b in combinations(sorted(rests, key=_canon_key), 2):
            # a is the canonical spelling: the variant b is rewritten to it.
            found = [diff_rule(b, a), *_segment_rules(b, a)]
            for rule in dict.fromkeys(r for r in found if r is not None):
                support.setdefault(rule, set()).add((b, a))
    return {rule: len(pairs) for rule, pairs in support.items()}


# A template prefix is one or two whole segments (/amp/, /print/, /m/en/): a longer one is a
# subtree of the site, not a variant of its pages.
_PREFIX_SEGMENTS = 2


def _prefix_candidates(
    path_a: str,
    params_a: list[tuple[str, str | None]],
    path_b: str,
    params_b: list[tuple[str, str | None]],
) -> list[StripPrefix | QueryToPath]:
    """``/amp/{rest}`` → ``/{rest}`` when one path is the other under a leading prefix."""
    if sorted(params_a, key=str) != sorted(params_b, key=str):
        return []
    short, long_ = sorted((path_a, path_b), key=len)
    if not short.startswith("/") or not long_.endswith(short) or len(long_) == len(short):
        return []
    prefix = long_[: len(long_) - len(short) + 1]
    if not prefix.endswith("/") or prefix.count("/") - 1 > _PREFIX_SEGMENTS:
        return []
    with contextlib.suppress(ScriptError):
        return [StripPrefix(prefix)]
    return []


def _query_form_candidates(query_url: str, path_url: str) -> list[StripPrefix | QueryToPath]:
    """``/index.php?page={x}`` → ``/{x}`` when a parameter's value is the other's path."""
    q, p = split_lenient(query_url), split_lenient(path_url)
    if not q.query or q.path == p.path:
        return []
    pieces = q.query.split("&")
    out: list[StripPrefix | QueryToPath] = []
    for i, piece in enumerate(pieces):
        name, eq, value = piece.partition("=")
        if not eq or len(value) < 2 or value.startswith("/") or value not in p.path:
            continue
        rest = pieces[:i] + pieces[i + 1 :]
        if sorted(rest) != sorted((p.query or "").split("&") if p.query else []):
            continue
        at = p.path.rfind(value)
        to = p.path[:at] + "{x}" + p.path[at + len(value) :]
        with contextlib.suppress(ScriptError):
            rule = QueryToPath(q.path, name, to)
            if rule.apply(query_url) == path_url:
                out.append(rule)
    return out


def template_candidates(a: str, b: str) -> list[StripPrefix | QueryToPath]:
    """The template rules that would make two spellings (one authority) one: a leading path
    prefix, or a query form of the path, either way round."""
    path_a, params_a = _params(a)
    path_b, params_b = _params(b)
    if path_a == path_b:
        return []
    out = _prefix_candidates(path_a, params_a, path_b, params_b)
    return out + _query_form_candidates(a, b) + _query_form_candidates(b, a)


@dataclass(frozen=True, slots=True)
class TemplateFinding:
    host: str
    rule: StripPrefix | QueryToPath
    evidence: Evidence
    accepted: bool
    reason: str


def learn_templates(
    host: str,
    docs: Sequence[Doc],
    *,
    max_fp: float,
    min_support: int,
    max_bucket: int = 64,
) -> list[TemplateFinding]:
    """Template rules (``/amp/{rest}`` → ``/{rest}``, ``/index.php?page={x}`` → ``/{x}``)
    from the pairs of URLs holding one payload, validated as substitutions are (§5): one
    rule for the whole site where substrings would be learned section by section."""
    buckets: dict[str, list[str]] = {}
    for d in docs:
        buckets.setdefault(d.sha1, []).append(d.url)
    support: dict[StripPrefix | QueryToPath, set[tuple[str, str]]] = {}
    for urls in buckets.values():
        if len(urls) > max_bucket:
            continue
        for a, b in combinations(sorted(urls), 2):
            for rule in template_candidates(a, b):
                support.setdefault(rule, set()).add((a, b))
    out: list[TemplateFinding] = []
    current = list(docs)
    ranked = sorted(support.items(), key=lambda kv: (-len(kv[1]), repr(kv[0])))
    for rule, pairs in ranked[:_MAX_VALIDATED]:
        if len(pairs) < min_support:
            break
        ev = measure(rule.apply, current)
        fp = ev.fp_rate
        if ev.equal < min_support:
            continue  # the rules accepted above merged its pairs already
        found = dataclasses.replace(rule, support=ev.equal, fp_rate=fp or 0.0)
        if fp is not None and fp > max_fp:
            out.append(TemplateFinding(host, found, ev, False, f"fp {fp:.2%} > {max_fp:.2%}"))
            continue
        out.append(TemplateFinding(host, found, ev, True, f"support {ev.equal}"))
        current = rewrite_docs(found.apply, current)
    return out


def _settled(text: str, accepted: Iterable[Substitute]) -> str:
    for _ in range(8):
        before = text
        for rule in accepted:
            text = text.replace(rule.find, rule.replace)
        if text == before:
            break
    return text


def _implied(find: str, replace: str, accepted: Sequence[Substitute]) -> bool:
    # Both spellings already end up the same under the accepted rules: /FORUM/ → /Forum/
    # adds nothing once /FORUM/ → /forum/ and /Forum/ → /forum/ are in.
    return _settled(find, accepted) == _settled(replace, accepted)


def _make(find: str, replace: str) -> Substitute | None:
    try:
        return Substitute(find, replace)
    except ScriptError:
        return None  # e.g. "to" contains "from": a rule that never settles


def learn_substitutions(
    host: str,
    docs: Sequence[Doc],
    *,
    max_fp: float,
    min_support: int,
    max_bucket: int = 64,
) -> list[SubstFinding]:
    """Mine, rank, eliminate, validate: the accepted and the rejected substitutions."""
    # Ties: the rule leading to the more canonical spelling first (/FORUM/ → /forum/ before
    # /FORUM/ → /Forum/), so chains of half-way rules are not needed.
    ranked = sorted(
        candidates(docs, max_bucket).items(),
        key=lambda kv: (-kv[1], _canon_key(kv[0][1]), kv[0]),
    )
    accepted: list[Substitute] = []
    out: list[SubstFinding] = []
    validated = 0
    for (find, replace), support in ranked:
        if support < min_support or validated >= _MAX_VALIDATED:
            break
        rule = _make(find, replace)
        if rule is None or _implied(find, replace, accepted):
            continue  # redundant: the rules above already merge these URLs
        validated += 1
        ev = measure(rule.apply, docs)
        fp = ev.fp_rate
        found = Substitute(find, replace, support=support, fp_rate=fp if fp is not None else 0.0)
        if fp is not None and fp > max_fp:
            out.append(SubstFinding(host, found, ev, False, f"fp {fp:.2%} > {max_fp:.2%}"))
            continue
        accepted.append(found)
        out.append(SubstFinding(host, found, ev, True, f"support {support}"))
    # A rule accepted early may be implied by rules accepted after it (/FORUM/ → /Forum/ by
    # /FORUM/ → /forum/ and /Forum/ → /forum/): drop those too, weakest first.
    for rule in reversed(list(accepted)):
        others = [r for r in accepted if r is not rule]
        if _implied(rule.find, rule.replace, others):
            accepted.remove(rule)
            out = [
                SubstFinding(f.host, f.rule, f.evidence, False, "redundant: implied by the others")
                if f.rule is rule
                else f
                for f in out
            ]
    return out
