"""The network-state table (seed 004 Fig. 3): declared once, transitions enforced."""

import pytest

from dustless.errors import InternalError, UsageError
from dustless.fetch import STATE_TABLE, FetchResult, NetState, Stage, advance

PAPER = [
    "NULL",
    "noIP",
    "cErr",
    "cTim",
    "Conn",
    "hSht",
    "hNpr",
    "hTim",
    "hErr",
    "code",
    "dTim",
    "dErr",
    "OK",
]
OURS = ["robots", "tooBig", "filtered", "pBig", "pFlat", "soft404", "iErr"]


def test_every_state_of_the_paper_and_ours_with_its_spelling():
    assert {s.value for s in NetState} == set(PAPER + OURS)
    for name in PAPER + OURS:
        assert NetState(name).value == name
        assert getattr(NetState, name).value == name


def test_table_covers_every_state_with_a_description():
    assert set(STATE_TABLE) == set(NetState)
    for state, info in STATE_TABLE.items():
        assert info.state is state
        assert info.description
        assert "\n" not in info.description
        assert state.description == info.description
        assert isinstance(state.stage, Stage)


def test_the_happy_path_and_the_error_paths():
    assert advance(NetState.NULL, NetState.Conn) is NetState.Conn
    assert advance(NetState.Conn, NetState.OK) is NetState.OK
    assert advance(NetState.OK, NetState.tooBig) is NetState.tooBig
    for gate in (NetState.robots, NetState.filtered, NetState.noIP, NetState.cErr, NetState.cTim):
        assert advance(NetState.NULL, gate) is gate
    for header in ("hSht", "hNpr", "hTim", "hErr", "code", "OK"):
        assert advance(NetState.Conn, NetState(header)).value == header
    for document in ("dTim", "dErr", "tooBig"):
        assert advance(NetState.code, NetState(document)).value == document


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (NetState.OK, NetState.Conn),
        (NetState.NULL, NetState.OK),
        (NetState.cErr, NetState.Conn),
        (NetState.robots, NetState.Conn),
        (NetState.Conn, NetState.dTim),
        (NetState.hTim, NetState.OK),
    ],
)
def test_illegal_transitions_raise_naming_the_states(current, new):
    with pytest.raises(InternalError) as exc:
        advance(current, new)
    assert not isinstance(exc.value, UsageError)
    assert current.value in str(exc.value)
    assert new.value in str(exc.value)


def test_final_states():
    assert not NetState.NULL.final
    assert not NetState.Conn.final
    assert all(s.final for s in NetState if s not in (NetState.NULL, NetState.Conn))
    # Every state other than NULL is reachable from NULL.
    reachable, frontier = {NetState.NULL}, [NetState.NULL]
    while frontier:
        for nxt in STATE_TABLE[frontier.pop()].successors:
            if nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    assert reachable == set(NetState)


def test_unfetched_result():
    result = FetchResult.unfetched("http://h.test/x", NetState.robots, error="disallowed")
    assert result.state is NetState.robots
    assert result.status is None
    assert result.body == b""
    assert not result.ok
    assert not result.truncated
    assert not result.state.fetched
