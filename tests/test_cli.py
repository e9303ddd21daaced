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
