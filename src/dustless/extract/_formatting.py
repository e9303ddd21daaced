"""What the tree builder will clone: an upper bound on reconstructed formatting elements.

HTML §13.2.4.3 keeps a "list of active formatting elements" (``a b big code em font i nobr
s small strike strong tt u``). Whenever text or most start tags arrive, "reconstruct the
active formatting elements" clones every entry whose element is no longer on the stack of
open elements. An entry leaves the list only by its own end tag (the adoption agency,
§13.2.6.4.7 "any other end tag"), a Noah's Ark eviction (at most 3 entries of the same tag
name and attributes after the last marker) or the end of the cell, caption, object …
that pushed a marker. So 250 ``<b id=N>`` left open, then ``<div>x</div>`` repeated,
clone all 250 into every ``div``: distinct attributes defeat Noah's Ark, and a 0.36 MB
page built 7 million elements (2.7 GB, 6.7 s in lexbor) while nested 252 deep only.

:class:`Formatting` follows the list as :func:`dustless.extract._guard.shape` reads the
tokens and counts, at each point where the tree builder may reconstruct, every entry it
may clone. It errs one way only, towards counting more:

* an entry is dropped only where the tree builder certainly drops it: its end tag when no
  element of the "special" category opened after it may still be open (then the adoption
  agency has no "furthest block" and no scope boundary, and removes it: §13.2.6.4.7 steps
  4.4–4.7), when no evicted entry of its name (still on the stack, outside the list) may
  take that end tag instead (step 2); a later ``<a>`` under the same condition (the "in
  body" rule for ``a`` removes the earlier one); Noah's Ark on byte-identical attributes;
  and the end of a marker element that ``shape`` certainly closes (it pops that element
  only when nothing but implied-end elements are above it, so the marker is the last);
* every alive entry counts at a reconstruction, markers or not (one the tree builder
  did not honour, like a ``<td>`` outside a table, hides nothing);
* an entry counts again after anything that may pop elements (any end tag, a start tag
  that is not plain phrasing), at the next text or reconstructing start tag;
* an end tag whose entry stays (its adoption agency may take the long way) counts the
  agency's own clones: at most 8 outer × (3 inner + 1) new elements.
"""

from __future__ import annotations

__all__ = ["ADOPTION_CLONES", "FORMATTING", "MARKERS", "Formatting"]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")
# Elements that push a marker on the list (§13.2.4.3): entries before it are not cloned
# inside them, and their end (closing the cell …) clears the list back to it.
MARKERS = _names("applet caption marquee object td template th")
ADOPTION_CLONES = 8 * (3 + 1)  # §13.2.6.4.7: outer loop 8 times, inner clones at most 3


class _Entry:
    __slots__ = ("alive", "name", "serial")

    def __init__(self, name: str, serial: int) -> None:
        self.name = name
        self.serial = serial
        self.alive = True


class _Section:
    """The entries after one marker (the first section: after none)."""

    __slots__ = ("ark", "by_name", "entries", "serial")

    def __init__(self, serial: int) -> None:
        self.serial = serial  # the marker element's, -1 for the first section
        self.entries: list[_Entry] = []
        self.by_name: dict[str, list[_Entry]] = {}
        self.ark: dict[tuple[str, str], list[_Entry]] = {}


class Formatting:
    """The list of active formatting elements, as an upper bound (see the module doc).

    ``serial`` numbers are the tag counter of :func:`shape`; ``special`` is the serial of
    the last special element that may still be open (-1: none)."""

    __slots__ = ("_ghosts", "_sections", "clones", "live")

    def __init__(self) -> None:
        self._sections = [_Section(-1)]
        self._ghosts: dict[str, int] = {}  # evicted entries whose element may be open
        self.live = 0  # alive entries: what one reconstruction may clone
        self.clones = 0  # elements the tree builder may have made by cloning, so far

    def _last(self, name: str) -> _Entry | None:
        entries = self._sections[-1].by_name.get(name)
        while entries:
            if entries[-1].alive:
                return entries[-1]
            entries.pop()
        return None

    def _drop(self, entry: _Entry) -> None:
        entry.alive = False
        self.live -= 1

    def open(self, name: str, attrs: str, serial: int, special: int) -> None:
        """A start tag of a formatting element (after its reconstruction was counted)."""
        section = self._sections[-1]
        if name == "a" or name == "nobr":
            # A start tag of either runs the adoption agency for an earlier one (§13.2.6.4.7
            # "in body", "a" and "nobr"); only "a" then removes it from the list for sure.
            earlier = self._last(name)
            if earlier is not None:
                if name == "a" and earlier.serial > special:
                    self._drop(earlier)
                else:
                    self.clones += ADOPTION_CLONES
        entry = _Entry(name, serial)
        if name != "a":  # an "a" evicts the earlier one itself: the Ark would change nothing
            # Noah's Ark (§13.2.4.3 "push onto the list"): a fourth entry of the same name
            # and attributes evicts the earliest. Byte-identical attributes only (the tree
            # builder also evicts equal ones written otherwise: it keeps fewer than counted).
            key = (name, attrs.strip("\t\n\f\r /"))
            same = [e for e in section.ark.get(key, ()) if e.alive]
            if len(same) >= 3:
                self._drop(same.pop(0))
                self._ghosts[name] = self._ghosts.get(name, 0) + 1
            same.append(entry)
            section.ark[key] = same
        section.entries.append(entry)
        section.by_name.setdefault(name, []).append(entry)
        self.live += 1

    def pair(self, name: str, attrs: str, serial: int, special: int) -> None:
        """A start tag of a formatting element, text and its end tag (no tag between)."""
        if self.live or self._ghosts.get(name):
            self.open(name, attrs, serial, special)
            self.close(name, special)
        # Else nothing changes: with no entry alive, the start tag has no earlier "a" or
        # "nobr" to adopt and no Noah's Ark to evict, its entry is the last of its name
        # and opened after every special element (none opened between), and with no
        # evicted element of its name to take the end tag, that end tag drops it.

    def close(self, name: str, special: int) -> None:
        """An end tag of a formatting element."""
        ghosts = self._ghosts.get(name, 0)
        if ghosts:
            # An evicted element of this name may be the current node: it takes the end
            # tag (§13.2.6.4.7 step 2) and every entry stays.
            self._ghosts[name] = ghosts - 1
            return
        entry = self._last(name)
        if entry is None:
            return
        if entry.serial > special:
            self._drop(entry)
        else:
            self.clones += ADOPTION_CLONES

    def marker(self, serial: int) -> None:
        """A marker element opened."""
        self._sections.append(_Section(serial))

    def marker_closed(self, serial: int) -> None:
        """The marker element opened at ``serial`` certainly closed: clear to its marker."""
        sections = self._sections
        while len(sections) > 1 and sections[-1].serial >= serial:
            for entry in sections.pop().entries:
                if entry.alive:
                    self._drop(entry)
