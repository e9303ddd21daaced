import subprocess
import sys

import pytest

from dustless.cli.main import COMMANDS, main


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_unknown_command_is_one_error_line_and_nonzero():
    proc = subprocess.run(
        [sys.executable, "-m", "dustless", "no-such-command"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "invalid choice" in proc.stderr


def test_every_registered_command_module_imports_and_has_the_interface():
    import importlib

    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        assert callable(module.configure), name
        assert callable(module.run), name
        assert module.HELP
        assert help_text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["crawl", "http://a.test/", "--out", "{file}/sub"], "Not a directory"),
        (["crawl", "http://a.test/", "--out", "{file}"], "File exists"),
    ],
)
def test_a_path_that_cannot_be_made_is_one_line_not_a_traceback(tmp_path, capsys, argv, message):
    a_file = tmp_path / "plain-file"
    a_file.write_text("x")
    code = main([a.format(file=a_file) for a in argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("dustless crawl: ")
    assert str(a_file) in err
    assert message in err


def test_export_into_a_path_under_a_file_is_one_line(tmp_path, capsys):
    from stats.crawl_builder import Page, build_crawl

    crawl = build_crawl(tmp_path / "c", [Page("http://a.test/", doc="A")])
    a_file = tmp_path / "plain-file"
    a_file.write_text("x")
    code = main(["export", str(crawl), "--format", "files", "-o", str(a_file / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert "Not a directory" in err
