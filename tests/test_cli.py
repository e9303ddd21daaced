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
    ("argv", "message", "status"),
    [
        (["crawl", "http://a.test/", "--out", "{file}/sub"], "Not a directory", 1),
        # Not "File exists": say what is wrong with the argument.
        (["crawl", "http://a.test/", "--out", "{file}"], "is a file: the crawl directory", 2),
    ],
)
def test_a_path_that_cannot_be_made_is_one_line_not_a_traceback(
    tmp_path, capsys, argv, message, status
):
    a_file = tmp_path / "plain-file"
    a_file.write_text("x")
    code = main([a.format(file=a_file) for a in argv])
    err = capsys.readouterr().err
    assert code == status
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


# -- every command's --help ------------------------------------------------------------------


# The shortener's sub-command texts are written in src/dustless/shortener/cli.py, by its own
# change; until that lands its sub-commands are only checked to print their help.
def _walk(parser, path):
    """(command path, parser) for a parser and all its sub-command parsers."""
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))


def _every_parser():
    from dustless.cli.main import build_parser

    for name in COMMANDS:
        parser, _module = build_parser(name)
        yield from _walk(parser, (name,))


def test_every_command_and_sub_command_has_help_with_examples(capsys):
    import argparse

    walked = list(_every_parser())
    assert len(walked) > len(COMMANDS)  # the sub-commands of rules and shortener too
    texts = {}
    for path, parser in walked:
        with pytest.raises(SystemExit) as exc:
            main([*path, "--help"])
        assert exc.value.code == 0, path
        out, err = capsys.readouterr()
        assert err == ""
        assert out.startswith("usage: dustless " + " ".join(path)), path
        texts[path] = out
        assert parser.description, f"{path}: no description"
        assert "examples:" in out, f"{path}: no examples"
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            names = action.option_strings or [action.dest]
            assert action.help, f"dustless {' '.join(path)} {names[0]}: no help text"
    # A sub-command's help is its own, not its neighbour's.
    assert "Mines the crawl" in texts[("rules", "learn")]
    assert "Mines the crawl" not in texts[("rules", "show")]
    # The crawl settings read the same in crawl and recrawl.
    for option in ("--connect-timeout S", "--stall-timeout S", "--total-timeout S"):
        assert option in texts[("crawl",)]
        assert option in texts[("recrawl",)]


@pytest.mark.parametrize("argv", [[], ["shortener"], ["rules"]])
def test_a_command_alone_prints_its_help_and_exits_2(argv, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: dustless")
    listed = ["crawl", "recrawl"] if not argv else ["serve"] if argv == ["shortener"] else ["learn"]
    for name in listed:
        assert name in err


def test_argparse_refusals_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "dustless export: error: the following arguments are required: -o/--output "
        "(see 'dustless export --help')\n"
    )


# -- the files the CLI reads ---------------------------------------------------------------


def test_numbered_lines_decode_utf8_with_bom_and_crlf(tmp_path):
    from dustless.cli._input import content_lines, numbered_lines, text_lines

    f = tmp_path / "list.txt"
    f.write_bytes(b"\xef\xbb\xbfhttp://a.test/\r\n# note\n\n  http://b.test/caf\xc3\xa9  \n")
    assert list(numbered_lines(f)) == [
        (1, "http://a.test/"),
        (2, "# note"),
        (3, ""),
        (4, "  http://b.test/café  "),
    ]
    assert list(content_lines(numbered_lines(f))) == [
        (1, "http://a.test/"),
        (4, "http://b.test/café"),
    ]
    assert next(text_lines(f)) == "http://a.test/"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"ok\nab\xffc\n", "{f}:2: not UTF-8 text (byte 0xff at column 3)"),
        # Columns count characters, not bytes.
        (b"caf\xc3\xa9 \xe9\n", "{f}:1: not UTF-8 text (byte 0xe9 at column 6)"),
        (b"a\x00b\n", "{f}:1: a NUL byte at column 2: not a text file"),
        (b"\x1f\x8b\x08\x00", "{f}:1: not UTF-8 text (byte 0x8b at column 2)"),  # gzip
    ],
)  # fmt: skip
def test_bad_bytes_are_one_input_error_with_file_and_line(tmp_path, content, message):
    from dustless.cli._input import InputError, numbered_lines
    from dustless.errors import UsageError

    f = tmp_path / "in.txt"
    f.write_bytes(content)
    with pytest.raises(InputError) as exc:
        list(numbered_lines(f))
    assert str(exc.value) == message.format(f=f)
    assert isinstance(exc.value, UsageError)  # the CLI prints it as "error: …", exit 2


def test_missing_files_and_directories_are_input_errors(tmp_path):
    from dustless.cli._input import InputError, numbered_lines

    with pytest.raises(InputError, match=r"nope\.txt: cannot read: No such file"):
        list(numbered_lines(tmp_path / "nope.txt"))
    with pytest.raises(InputError, match="is a directory, not a file"):
        list(numbered_lines(tmp_path))


def test_standard_input_is_read_through_the_same_place():
    code = "from dustless.cli._input import numbered_lines\nprint(list(numbered_lines('-')))\n"
    ok = subprocess.run(
        [sys.executable, "-c", code], input=b"a\nb\n", capture_output=True, check=True
    )
    assert ok.stdout == b"[(1, 'a'), (2, 'b')]\n"
    bad = subprocess.run([sys.executable, "-c", code], input=b"a\n\xff\n", capture_output=True)
    assert b"<stdin>:2: not UTF-8 text" in bad.stderr
