"""pattern-script.xsd and the validator's table say the same thing.

lxml is a test-only dependency (the runtime validator is pure Python): this cross-check always runs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from lxml import etree

import dustless.rules
from dustless.rules import RuleSet, dump_script, load_script

HERE = Path(__file__).parent
XSD = Path(dustless.rules.__file__).parent / "pattern-script.xsd"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"_rules_{name}", HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _module("test_validation").CASES
LEARNED = _module("test_roundtrip").LEARNED
# What a schema cannot say; the loader checks these after validation (see the XSD's comment).
SEMANTIC = {
    "target placeholder not in original",
    "relative originalAddr",
    "relative targetAddr",
    "placeholders touching",
    "placeholder in host",
    "placeholder in parameter name",
    "fragment in pattern",
    "javascript pattern that is a URL",
    "substitute that never settles",
    "bad identity",
}
NOT_XML = {"mismatched tag", "undefined entity", "empty file"}


@pytest.fixture(scope="module")
def schema():
    return etree.XMLSchema(etree.parse(str(XSD)))


def test_valid_scripts_are_schema_valid(schema):
    fig6 = (HERE / "data" / "fig6.xml").read_text(encoding="utf-8").replace("&", "&amp;")
    written = dump_script(load_script(HERE / "data" / "fig6.xml").rules + RuleSet((LEARNED,)))
    for text in (fig6, written):
        assert schema.validate(etree.fromstring(text.encode("utf-8"))), schema.error_log


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_XML))
def test_schema_rejects_exactly_the_structural_errors(schema, name):
    text = CASES[name][0]
    assert schema.validate(etree.fromstring(text.encode("utf-8"))) == (name in SEMANTIC)
