import pytest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{tmp}/x"], "no seeds"),
        (["ftp://a.test/", "--out", "{tmp}/x"], "only http and https"),
        (["http://a.test/", "--out", "{tmp}/x", "--resolve", "nocolon"], "NAME:IP"),
        (["http://a.test/", "--out", "{tmp}/x", "--policy", "nonesuch"], "nonesuch"),
        (["http://a.test/", "--out", "{tmp}/x", "--max-pages", "0"], "--max-pages"),
        (["--out", "{tmp}/empty", "--resume"], "no crawl to resume"),
        (["--seeds", "{tmp}/missing.txt", "--out", "{tmp}/x"], "--seeds"),
        (["http://a.test/", "--out", "{tmp}/x", "--allow-ip", "10.0.0.0/33"], "CIDR"),
        (["http://a.test/", "--out", "{tmp}/x", "--resolve", "a.test:999.1.1.1"], "999.1.1.1"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, message, tmp_path, ch):
    proc = ch.run_cli("crawl", *[a.format(tmp=tmp_path) for a in args])
    assert not (tmp_path / "x" / "crawl.db").exists()  # nothing written for bad settings
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_has_examples(ch):
    proc = ch.run_cli("crawl", "--help")
    assert proc.returncode == 0
    for option in ("--seeds", "--scope", "--max-depth", "--delay-factor", "--resume", "examples"):
        assert option in proc.stdout
