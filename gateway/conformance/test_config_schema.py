"""gateway/contract/config.schema.json against what is written from it: config.md's key tables, the annotated
example config and the config vectors. Each test fails when one of them drifts from the schema (a key missing,
one too many, another default, type, unit or variable). Only contract files are read: no gateway is involved."""

import json
import math
import re
import tomllib
from pathlib import Path

import pytest

EVERY_GATEWAY_INSIDE = True  # no gateway runs: once, not once per gateway (conftest.py)
CONTRACT = Path(__file__).resolve().parents[1] / "contract"
SCHEMA = json.loads((CONTRACT / "config.schema.json").read_text(encoding="utf-8"))
KEYS = {f"{section}.{key}": declared
        for section, body in SCHEMA["sections"].items() for key, declared in body["keys"].items()}
CONFIG_MD = (CONTRACT / "config.md").read_text(encoding="utf-8")
EXAMPLE = CONTRACT / "telemetry-gateway.example.toml"
VECTORS = json.loads((CONTRACT / "config-vectors" / "index.json").read_text(encoding="utf-8"))
TYPE_WORDS = {"whole": "whole number", "number": "number", "string": "string", "choice": "choice",
              "strings": "list of strings", "ports": "list of port entries (below)", "boolean": "boolean"}


def toml_value(text: str):
    return tomllib.loads(f"v = {text}")["v"]


def same(value, default) -> bool:
    """Equal and of one TOML type (10 is not 10.0, a whole number not a number)."""
    return value == default and type(value) is type(default)


def defaults() -> dict:
    return {section: {key: declared["default"] for key, declared in body["keys"].items()}
            for section, body in SCHEMA["sections"].items()}


@pytest.mark.parametrize("path", sorted(KEYS))
def test_each_declaration_is_complete_and_consistent(path):
    declared = KEYS[path]
    section, key = path.split(".")
    assert declared["type"] in TYPE_WORDS
    assert declared["env"] == f"TELEMETRY_{section.upper()}_{key.upper()}"
    assert isinstance(declared["secret"], bool) and declared["meaning"]
    default = declared["default"]
    if declared["type"] in ("whole", "number"):
        assert isinstance(default, int if declared["type"] == "whole" else float) and not isinstance(default, bool)
        low = declared.get("above", declared.get("min"))
        assert (low < default if "above" in declared else low <= default) and default <= declared["max"]
    elif declared["type"] in ("strings", "ports"):
        assert isinstance(default, list)
    else:
        assert isinstance(default, str)
    if "choices" in declared:
        assert default in declared["choices"]
    if "pattern" in declared:
        assert re.fullmatch(declared["pattern"], default)


def table_rows(first_cell: str) -> dict[str, list[str]]:
    """config.md's table rows whose first cell is a backticked name matching first_cell, by that name."""
    rows = {}
    for line in CONFIG_MD.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(rf"`({first_cell})`", cells[0]) if line.startswith("| `") else None
        if match:
            assert match[1] not in rows, f"{match[1]} is in config.md twice"
            rows[match[1]] = cells
    return rows


def test_config_md_key_table_is_the_schema():
    rows = table_rows(r"[a-z_]+\.[a-z_]+")
    assert set(rows) == set(KEYS), "config.md's key table and config.schema.json name other keys"
    for path, (_, type_word, default, rule, unit, env) in rows.items():
        declared = KEYS[path]
        assert type_word == TYPE_WORDS[declared["type"]], path
        assert same(toml_value(re.match(r"`([^`]*)`", default)[1]), declared["default"]), path
        assert unit == declared.get("unit", ""), path
        assert re.match(r"`([^`]*)`", env)[1] == declared["env"], path
        if "max" in declared:
            low = f"> {declared['above']}, ≤ " if "above" in declared else f"{declared['min']}.."
            assert rule.startswith(f"{low}{declared['max']}"), path
        for choice in declared.get("choices", []):
            assert f"`{choice}`" in rule, path
        if "pattern" in declared:
            assert f"`{declared['pattern']}`" in rule, path


def test_config_md_rule_table_is_the_schema():
    rows = table_rows(r"[a-z_]+")
    assert {rule: cells[1] for rule, cells in rows.items()} == SCHEMA["rules"]


def test_config_md_port_table_is_the_schema():
    rows = table_rows(r"serial\.ports\[i\]\.([a-z_]+)")
    assert {path.split(".")[-1] for path in rows} == set(SCHEMA["port_table"])
    for path, cells in rows.items():
        assert cells[1] == TYPE_WORDS[SCHEMA["port_table"][path.split(".")[-1]]["type"]], path


def test_config_md_alert_table_is_the_schema():
    rows = table_rows(r"alerts\[i\]\.([a-z_]+)")
    assert [path.split(".")[-1] for path in rows] == list(SCHEMA["alert_table"])
    for path, cells in rows.items():
        assert cells[1] == TYPE_WORDS[SCHEMA["alert_table"][path.split(".")[-1]]["type"]], path


ALERTS_MARK = "# [[alerts]]"  # the example's commented rules: from the first such line to the end of the file


def example_keys(examples: bool = False) -> dict[str, dict[str, object]]:
    """The example's keys by section, set or commented out (a comment line that is `# key = <TOML value>`); with
    examples, instead the other values it suggests (an indented comment line, `#   key = <TOML value>`)."""
    found: dict[str, dict[str, object]] = {}
    section = None
    text = EXAMPLE.read_text(encoding="utf-8")
    for line in text[:text.index(ALERTS_MARK)].splitlines():
        if match := re.fullmatch(r"\[([a-z_]+)\]", line.strip()):
            section = match[1]
            found.setdefault(section, {})
            continue
        if line.startswith("#   ") != examples:
            continue
        text = line[1:].strip() if line.startswith("#") else line
        try:
            item = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue  # prose, or a value written over several lines
        for key, value in item.items():
            assert section is not None, f"{key} is in the example before any section"
            found[section][key] = value
    return found


def example_alerts() -> list[dict]:
    """The example's commented [[alerts]] rules, uncommented as its words say: the first "#" of each line removed."""
    text = EXAMPLE.read_text(encoding="utf-8")
    lines = text[text.index(ALERTS_MARK):].splitlines()
    assert all(line.startswith("#") for line in lines), "an uncommented line among the example's rules"
    document = tomllib.loads("\n".join(line[1:] for line in lines))
    assert list(document) == ["alerts"]
    return document["alerts"]


def test_the_example_shows_every_key_and_nothing_else():
    found = example_keys()
    assert {s: set(keys) for s, keys in found.items()} == {s: set(keys) for s, keys in defaults().items()}
    for section, keys in example_keys(examples=True).items():
        for key, value in keys.items():
            declared = KEYS[f"{section}.{key}"]  # a key of its section
            assert type(value) is type(declared["default"]), f"{section}.{key}: not of its type"
            assert value in declared.get("choices", [value]), f"{section}.{key}: not a choice"
    assert tomllib.loads(EXAMPLE.read_text(encoding="utf-8")).keys() <= SCHEMA["sections"].keys()
    for section, keys in found.items():
        for key, value in keys.items():
            if f"{section}.{key}" != "serial.ports":  # the example's one port, to be edited
                assert same(value, KEYS[f"{section}.{key}"]["default"]), f"{section}.{key}: not the default"


def test_the_example_rules_are_a_frost_a_heat_and_a_silence_rule_of_the_schema():
    rules = example_alerts()
    assert [(rule["name"], [key for key in ("below", "above", "silent_s") if key in rule]) for rule in rules] == [
        ("frost", ["below"]), ("heat", ["above"]), ("board_silent", ["silent_s"])]
    for rule in rules:
        assert set(rule) <= set(SCHEMA["alert_table"]), rule["name"]
        for key, value in rule.items():
            declared = SCHEMA["alert_table"][key]
            assert isinstance(value, {"string": str, "number": float, "strings": list}[declared["type"]]), key
            if "pattern" in declared:
                assert re.fullmatch(declared["pattern"], value), key
        assert rule["command"][0] == "/usr/local/bin/telemetry-alert-webhook"  # what deploy/pi/install installs
    assert rules[0]["below"] == 2.0 and rules[0]["for_s"] == 600.0


def test_the_vectors_resolve_every_key_of_the_schema():
    expected = defaults()
    for case in VECTORS["valid"]:
        resolved = dict(case["resolved"])
        for rule in resolved.pop("alerts"):  # [[alerts]] tables, every key resolved
            assert set(rule) == set(SCHEMA["alert_table"]), case["file"]
        assert {s: set(k) for s, k in resolved.items()} == {s: set(k) for s, k in expected.items()}, case["file"]
        for section, keys in resolved.items():
            for key, value in keys.items():
                declared = KEYS[f"{section}.{key}"]
                if declared["type"] in ("whole", "number"):
                    assert isinstance(value, (int, float)) and math.isfinite(value), (case["file"], key)
    by_file = {case["file"]: case["resolved"] for case in VECTORS["valid"]}
    expected["alerts"] = []  # no rules by default
    assert by_file["valid/empty.toml"] == expected
    example = by_file[f"../{EXAMPLE.name}"]
    assert {**example, "serial": {**example["serial"], "ports": []}} == expected


def test_the_invalid_vectors_name_keys_of_the_schema():
    for case in VECTORS["invalid"]:
        key = re.sub(r"\[\d+\].*", "", case["key"])
        if case["rule"] in ("unknown_section", "unknown_key"):
            name = case["key"]
            assert name not in KEYS and name not in SCHEMA["sections"], case["file"]
            assert name.split(".")[-1] not in SCHEMA["port_table"], case["file"]
        elif key == "alerts":
            assert case["key"] == key or case["key"].split(".")[-1] in SCHEMA["alert_table"] or re.fullmatch(
                r"alerts\[\d+\]", case["key"]), case["file"]
        elif key:
            assert key in KEYS or key in SCHEMA["sections"], case["file"]
        for name in case.get("env", {}):
            assert name in {declared["env"] for declared in KEYS.values()}, (case["file"], name)
