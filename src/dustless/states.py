"""The network states of one fetch, declared once (seed 004 §2, Fig. 3).

A top-level module (not inside ``fetch``) because every layer speaks of them: the fetcher
reaches them, the engine records them, the store keeps them, the statistics count them.

004 records for every document the state its last download reached: NULL before any request;
at "문서 접속" (connect) cErr, cTim or Conn; at "헤더 다운로드" (header) hSht, hNpr, hTim,
hErr, or the server's code, which is OK when it is 200 and the MIME type is text/html; at
"문서 다운로드" (document) dTim and dErr. We add the states our gates produce before any
request (robots, filtered, noIP), the size limit (tooBig), extraction's budget (pBig: a page
whose markup is too big to read all its links, a hostile page of docs/testweb.md),
extraction's guard (pFlat: a page whose markup would cost the HTML parser far more than its
size — nested too deep, or cloning its formatting elements without end — read without its
structure, every link found at a cost in proportion to the page), the soft 404 (soft404: a
200 page that says the URL is missing — like the host's answer to a random missing path, or
a short "Page not found" page — no document, ``crawl/soft404.py``), and one
for our failures (iErr: a bug of dustless met while crawling a URL — recorded and counted,
never blamed on the server).

Like h11's ``_state.py``, the table below is the only place the states and their legal
successors are written down; ``advance`` refuses anything else, naming both states.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dustless.errors import InternalError

__all__ = ["STATE_TABLE", "NetState", "Stage", "StateInfo", "advance"]


class NetState(enum.Enum):
    """A fetch's network state.

    Values are the paper's spellings: ``NetState.cErr.value == "cErr"``.
    """

    NULL = "NULL"
    robots = "robots"
    filtered = "filtered"
    noIP = "noIP"
    cErr = "cErr"
    cTim = "cTim"
    Conn = "Conn"
    hSht = "hSht"
    hNpr = "hNpr"
    hTim = "hTim"
    hErr = "hErr"
    code = "code"
    OK = "OK"
    dTim = "dTim"
    dErr = "dErr"
    tooBig = "tooBig"
    pBig = "pBig"
    pFlat = "pFlat"
    soft404 = "soft404"
    iErr = "iErr"

    @property
    def info(self) -> StateInfo:
        return STATE_TABLE[self]

    @property
    def description(self) -> str:
        return STATE_TABLE[self].description

    @property
    def stage(self) -> Stage:
        return STATE_TABLE[self].stage

    @property
    def final(self) -> bool:
        """Can a fetch end here? (Everything but NULL and Conn.)"""
        return STATE_TABLE[self].final

    @property
    def fetched(self) -> bool:
        """Did a response head arrive (so there is a status and a response record)?"""
        return self in _RESPONDED


class Stage(enum.Enum):
    """Where in 004 Fig. 2's flow a state is reached."""

    GATE = "gate"  # before any request: robots, URL filter, DNS ("Get IP", "시드 수행 결정")
    CONNECT = "connect"  # 문서 접속
    HEADER = "header"  # 헤더 다운로드
    DOCUMENT = "document"  # 문서 다운로드


@dataclass(frozen=True, slots=True)
class StateInfo:
    state: NetState
    stage: Stage
    description: str
    successors: frozenset[NetState]
    final: bool


_S = NetState
# state, stage, can end a fetch, description, legal next states
_ROWS: tuple[tuple[NetState, Stage, bool, str, tuple[NetState, ...]], ...] = (
    (_S.NULL, Stage.GATE, False, "not requested yet",
     (_S.robots, _S.filtered, _S.noIP, _S.cErr, _S.cTim, _S.Conn, _S.iErr)),
    (_S.robots, Stage.GATE, True, "robots.txt disallows the URL; not requested", ()),
    (_S.filtered, Stage.GATE, True,
     "the URL filter or the address policy refused it; not requested", ()),
    (_S.noIP, Stage.GATE, True, "the host name did not resolve to an address", ()),
    (_S.cErr, Stage.CONNECT, True, "connecting failed (refused, unreachable, TLS error)", ()),
    (_S.cTim, Stage.CONNECT, True, "connecting timed out", ()),
    (_S.Conn, Stage.CONNECT, False, "connected; request sent, waiting for the header",
     (_S.hSht, _S.hNpr, _S.hTim, _S.hErr, _S.code, _S.OK)),
    (_S.hSht, Stage.HEADER, True,
     "the header was too short: the server closed before a complete response head", ()),
    (_S.hNpr, Stage.HEADER, True, "the reply is not HTTP (no HTTP status line)", ()),
    (_S.hTim, Stage.HEADER, True, "no header within the time limit", ()),
    (_S.hErr, Stage.HEADER, True, "error while reading the header (reset, malformed head)", ()),
    (_S.code, Stage.HEADER, True,
     "a response other than 200 text/html: its status code is recorded",
     (_S.dTim, _S.dErr, _S.tooBig)),
    (_S.OK, Stage.HEADER, True, "status 200 with MIME type text/html",
     (_S.dTim, _S.dErr, _S.tooBig, _S.pBig, _S.pFlat, _S.soft404)),
    (_S.dTim, Stage.DOCUMENT, True,
     "the body stalled (no data for the stall limit) or exceeded the total time", ()),
    (_S.dErr, Stage.DOCUMENT, True,
     "error while reading the body (reset, bad chunking, short body, bad compression)", ()),
    (_S.tooBig, Stage.DOCUMENT, True,
     "the body exceeded the size limit or the decompression guard; truncated", ()),
    (_S.pBig, Stage.DOCUMENT, True,
     "stored whole, but its markup passed link extraction's budget: links from its first "
     "part only", ()),
    (_S.pFlat, Stage.DOCUMENT, True,
     "stored whole, but its markup would cost the parser far more than its size (too deep, "
     "or cloning formatting elements): links read without its structure", ()),
    (_S.soft404, Stage.DOCUMENT, True,
     "a soft 404: status 200, but the page says the URL is missing (like the host's answer "
     "to a random missing path, or a short 'not found' page): no document; links followed",
     ()),
    (_S.iErr, Stage.GATE, True,
     "internal error: a bug of dustless while handling the URL (not the server's fault)", ()),
)  # fmt: skip

STATE_TABLE: Mapping[NetState, StateInfo] = MappingProxyType(
    {
        state: StateInfo(state, stage, description, frozenset(successors), final)
        for state, stage, final, description, successors in _ROWS
    }
)
_RESPONDED = frozenset({_S.code, _S.OK, _S.dTim, _S.dErr, _S.tooBig, _S.pBig, _S.pFlat, _S.soft404})


def advance(current: NetState, new: NetState) -> NetState:
    """Return ``new`` if the table allows ``current`` → ``new``; raise ``InternalError``
    otherwise (only our own code drives the table: a wrong move is a bug of ours)."""
    if new not in STATE_TABLE[current].successors:
        allowed = ", ".join(sorted(s.value for s in STATE_TABLE[current].successors)) or "none"
        raise InternalError(
            f"illegal network-state transition {current.value} -> {new.value} "
            f"(from {current.value} only: {allowed})"
        )
    return new
