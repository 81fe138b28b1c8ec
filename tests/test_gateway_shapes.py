"""The two gateways read alike where their parts meet the contract: the metrics object has the same attribute names
in both (snake_case in one, the same words in the other's camelCase), each attribute one family of metrics.json.
Neither gateway is the other's reference: both are read here, side by side."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON_METRICS = ROOT / "gateway" / "python" / "telemetry_gateway" / "metrics.py"
NODE_METRICS = ROOT / "gateway" / "node" / "src" / "metrics.js"


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def python_attributes(source: str) -> list[str]:
    """The attributes Metrics.__init__ sets on self, in order."""
    cls = next(node for node in ast.parse(source).body if isinstance(node, ast.ClassDef) and node.name == "Metrics")
    init = next(node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    return [target.attr for node in ast.walk(init) if isinstance(node, ast.Assign) for target in node.targets
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"]


def node_attributes() -> list[str]:
    script = (f"import {{ createMetrics }} from {json.dumps(NODE_METRICS.as_uri())};"
              "console.log(JSON.stringify(Object.keys(createMetrics())));")
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60,
                          check=True)
    return json.loads(done.stdout)


def test_the_reader_finds_attributes_in_made_up_source():
    source = "class Metrics:\n    def __init__(self):\n        r = self.registry = 1\n        self.a_b = 2\n"
    assert python_attributes(source) == ["registry", "a_b"]
    assert snake("framesAccepted") == "frames_accepted" and snake("registry") == "registry"


def test_both_metrics_objects_have_the_same_attribute_names_in_the_same_order():
    python = python_attributes(PYTHON_METRICS.read_text())
    assert len(python) > 20
    assert [snake(name) for name in node_attributes()] == python
