"""The package's shape, checked from its source: imports flow one way through the layers
(`_util < data < retrieval, models < rag < traceback, dscan, chameleon, monitor < bench < views < cli`),
analyses never import each other, no import cycle (in-function imports count: hiding an edge inside a
function does not remove it), internal lazy imports only in the command layers, modules of at most 400
lines, and the wheel's package list matches the subpackages on disk. No model loads: fast tier."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "ragsec_core"
LAYERS = {
    "_util": 0, "data": 1, "retrieval": 2, "models": 2, "rag": 3,
    "traceback": 4, "dscan": 4, "chameleon": 4, "monitor": 4, "bench": 5, "views": 6, "cli": 7,
}
# The layer whose modules may import the rest of the package inside functions: the command line, which must
# stay light so that `ragsec --help` and input errors need no torch (it imports a bench module only to run it).
LAZY_OK = {"cli"}
MAX_LINES = 400


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int
    lazy: bool  # inside a function


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def edges(name: str, path: Path) -> Iterator[Edge]:
    """Every import of a ragsec_core module in `path`, at module level or inside a function."""
    tree = ast.parse(path.read_text(), str(path))

    def walk(node: ast.AST, lazy: bool) -> Iterator[Edge]:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                if child.module.startswith("ragsec_core"):
                    yield Edge(name, child.module, child.lineno, lazy)
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("ragsec_core"):
                        yield Edge(name, a.name, child.lineno, lazy)
            yield from walk(child, inner)

    yield from walk(tree, False)


def layer_of(module: str) -> str | None:
    """The layer a module belongs to; the package root (the public facade) has none."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def resolve(dst: str, mods: dict[str, Path]) -> str:
    """`from pkg import submodule` names the package; the edge still goes to a real module."""
    while dst not in mods and "." in dst:
        dst = dst.rsplit(".", 1)[0]
    return dst


@pytest.fixture(scope="module")
def graph() -> list[Edge]:
    mods = modules()
    return [Edge(e.src, resolve(e.dst, mods), e.line, e.lazy) for n, p in mods.items() for e in edges(n, p)]


def test_every_module_has_a_layer() -> None:
    unknown = {layer_of(m) for m in modules()} - set(LAYERS) - {None}
    assert not unknown, f"subpackages without a layer in LAYERS: {unknown}"


def test_imports_flow_down_the_layers(graph: list[Edge]) -> None:
    bad = []
    for e in graph:
        a, b = layer_of(e.src), layer_of(e.dst)
        if a is None or b is None or a == b:
            continue
        if LAYERS[b] > LAYERS[a]:
            bad.append(f"{e.src}:{e.line} imports {e.dst} (layer {b} above {a})")
        elif LAYERS[b] == LAYERS[a]:
            bad.append(f"{e.src}:{e.line} imports {e.dst} (sideways between {a} and {b})")
    assert not bad, "\n".join(bad)


def test_no_import_cycle(graph: list[Edge]) -> None:
    succ: dict[str, set[str]] = {}
    for e in graph:
        if e.src != e.dst and not e.dst.startswith(e.src + "."):  # a package importing its own modules
            succ.setdefault(e.src, set()).add(e.dst)
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(succ.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (cycle := visit(m)):
                return cycle
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(succ):
        if n not in state and (cycle := visit(n)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_lazy_internal_imports_only_in_command_layers(graph: list[Edge]) -> None:
    bad = [f"{e.src}:{e.line} imports {e.dst} inside a function" for e in graph
           if e.lazy and layer_of(e.src) not in LAZY_OK and layer_of(e.src) is not None]
    assert not bad, "\n".join(bad)


def test_views_outside_the_package_do_not_import_the_cli() -> None:
    """Pages and app.py are views: they call the core and the view models, never the CLI."""
    bad = []
    for path in [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]:
        for e in edges(path.stem, path):
            if e.dst.startswith("ragsec_core.cli"):
                bad.append(f"{path.name}:{e.line} imports {e.dst}")
    assert not bad, "\n".join(bad)


def test_modules_stay_small() -> None:
    big = {str(p.relative_to(REPO)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_wheel_package_list_matches_the_tree() -> None:
    """pyproject lists the packages (the sample corpora are mapped in), so a new subpackage must be added
    there or the wheel silently lacks it."""
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {module_name(p.parent / "__init__.py") for p in PKG.rglob("__init__.py")}
    assert listed - {"ragsec_core.sample_corpora"} == on_disk
    assert (REPO / "sample_corpora" / "__init__.py").is_file()
