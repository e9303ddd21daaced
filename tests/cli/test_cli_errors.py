"""One error convention: the user's mistake is ``dustless CMD: error: …``, one line, exit 2,
in every command — a ``--db`` that cannot be reached, a ``--truth`` path that cannot be."""

from __future__ import annotations

import pytest

# A socket directory that does not exist: the connection fails at once and surely (no port
# that something else might listen on); the password must never be printed.
SECRET = "s3cret-pw"


def _bad_db(tmp_path):
    return f"postgresql://crawler:{SECRET}@/crawl?host={tmp_path / 'no-socket-dir'}"


@pytest.mark.parametrize(
    "argv",
    [
        ["crawl", "{tmp}/w1", "http://a.test/"],
        ["crawl", "--status"],
        ["stats"],
        ["evaluate"],
        ["report", "-o", "{tmp}/r.html"],
        ["export", "--format", "wacz", "-o", "{tmp}/c.wacz"],
        ["changes"],
        ["recrawl", "{tmp}/w1"],
        ["rules", "learn", "-o", "{tmp}/rules.xml"],
    ],
    ids=lambda argv: " ".join(a for a in argv if "{" not in a),
)
def test_a_db_that_cannot_be_reached_is_a_usage_error_in_every_command(cli, tmp_path, argv):
    args = [a.format(tmp=tmp_path) for a in argv]
    proc = cli(*args, "--db", _bad_db(tmp_path), cwd=tmp_path)
    command = " ".join(argv[:2] if argv[0] == "rules" else argv[:1])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"dustless {command}: error: cannot open the crawl DB on ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert SECRET not in proc.stderr
    assert not (tmp_path / "w1").exists()  # nothing started


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("no-dir/truth.tsv", "--truth {tmp}/no-dir/truth.tsv: {tmp}/no-dir: no such directory"),
        ("a-file/truth.tsv", "--truth {tmp}/a-file/truth.tsv: {tmp}/a-file: is not a directory"),
        (".", "--truth {tmp}: is a directory; give a file name (truth.tsv)"),
    ],
)
def test_testweb_truth_where_it_cannot_be_written_is_a_usage_error(cli, tmp_path, where, message):
    (tmp_path / "a-file").write_text("x")
    truth = tmp_path / where
    proc = cli("testweb", "--port", "0", "--truth", str(truth))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"dustless testweb: error: {message.format(tmp=tmp_path)}\n"
    assert proc.stdout == b""  # never started serving
