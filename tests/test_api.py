"""The curated public API: every name resolves, and importing the package (or building the CLI parser)
loads no torch, so `ragsec --help` and bad-input errors answer at once. No model loads: fast tier."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ragsec_core


def test_every_public_name_resolves() -> None:
    for name in ragsec_core.__all__:
        assert getattr(ragsec_core, name) is not None, name
    assert callable(ragsec_core.run_pass1) and "ragcharacter" in ragsec_core.METHODS


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        ragsec_core.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def _loads_torch(code: str) -> bool:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().endswith("True")


def test_import_and_parser_load_no_torch() -> None:
    assert not _loads_torch("import ragsec_core")
    assert not _loads_torch("from ragsec_core.cli.main import build_parser; build_parser()")


@pytest.mark.model
def test_readme_library_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's library example, executed as written: the planted secops poison fires PAR, Pass-1
    attributes characters, D-SCAN gives a probability."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("As a library", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "README.md", "exec"), {})
    answer_line, attributed, probability = capsys.readouterr().out.strip().splitlines()[-3:]
    assert answer_line.endswith("True")  # PAR fired on the planted variant
    assert "embedded" in attributed or "bastion" in attributed.lower() or attributed != "[]"
    assert 0.0 <= float(probability) <= 1.0


def test_all_lists_exactly_the_lazy_names() -> None:
    assert set(ragsec_core.__all__) == set(ragsec_core._API) | {"__version__"}


def test_a_missing_extra_is_one_clear_message() -> None:
    from ragsec_core._util.errors import RagsecError
    from ragsec_core._util.extras import require

    require("bench", "ragsec bench speed", "json")  # present: no error
    with pytest.raises(RagsecError, match=r"needs the \[bench\] extra \(missing: no_such_module_9\): pip install 'ragsec\[bench\]'"):
        require("bench", "ragsec bench speed", "json", "no_such_module_9")
