"""Which imports are worth asking jedi about: only those that may lead into the checked roots.

jedi parses the whole calling file before it answers (0.2 s for a large model file); checking
transformers' `models/` spent most of its time there on imports of `...utils` and
`...modeling_utils`, which lie outside the tree checked and so can never be followed."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from graphmend import crossmodule
from graphmend.analysis import analyze_detailed
from graphmend.config import Config
from graphmend.crossmodule import CallSite, _may_lead_inside, call_sites, may_reach_a_function, reachable_names, resolve
from graphmend.imported_disables import ImportedDisables


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for folder in ("pkg", "pkg/utils", "pkg/models", "pkg/models/a", "pkg/models/b"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    for module in ("pkg/utils/generic.py", "pkg/models/a/model.py", "pkg/models/b/layers.py", "pkg/modeling_utils.py"):
        (tmp_path / module).write_text("def helper(x):\n    return x\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("imported", "leads_inside"),
    [
        ("...utils.generic.helper", False),  # pkg/utils: outside the checked models/
        ("...modeling_utils.helper", False),
        ("...utils", False),  # a package outside
        ("..b.layers.helper", True),  # a sibling model's module
        ("..b", True),  # a sibling package (its __init__ may re-export)
        (".model_helpers", True),  # nothing on disk, in the file's own package: a name there
        ("pkg.utils.generic.helper", False),  # absolute, from the folder above the top-level package
        ("pkg.models.b.layers.helper", True),
        ("einops.rearrange", True),  # installed elsewhere: jedi decides
        ("", True),
    ],
)
def test_an_import_is_followed_only_where_it_may_lead_into_the_roots(tree: Path, imported: str, leads_inside: bool) -> None:
    caller = tree / "pkg" / "models" / "a" / "model.py"
    assert _may_lead_inside(imported, caller, frozenset([(tree / "pkg" / "models").resolve()])) is leads_inside


@pytest.mark.parametrize("imported", ["sys", "random", "os.path"])
def test_a_standard_library_module_not_in_the_tree_is_never_followed(tree: Path, imported: str) -> None:
    caller = tree / "pkg" / "models" / "a" / "model.py"
    assert not _may_lead_inside(imported, caller, frozenset([(tree / "pkg" / "models").resolve()]))


def test_a_local_package_named_like_the_standard_library_is_still_followed(tree: Path) -> None:
    (tree / "pkg" / "models" / "a" / "test").mkdir()
    (tree / "pkg" / "models" / "a" / "test" / "__init__.py").write_text("def helper(x):\n    return x\n", encoding="utf-8")
    caller = tree / "pkg" / "models" / "a" / "standalone.py"
    (tree / "pkg" / "models" / "a" / "__init__.py").unlink()  # a folder of scripts: imports start here
    assert _may_lead_inside("test.helper", caller, frozenset([(tree / "pkg" / "models").resolve()]))


def test_a_relative_path_checked_from_inside_the_package_resolves_like_an_absolute_one(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`graphmend check models` run inside `pkg/`: the walk up to the top-level package must not
    stop at `.`, or every absolute import of the package goes to jedi (slow, and it may follow a
    re-export the absolute run does not)."""
    monkeypatch.chdir(tree / "pkg")
    site = crossmodule.CallSite(line=1, column=0, callee="helper", caller="f", imported="pkg.utils.generic.helper")

    def no_jedi(*args: object, **kwargs: object) -> None:
        raise AssertionError("jedi was asked about an import that leads outside the roots")

    monkeypatch.setattr("jedi.Script", no_jedi)
    caller = Path("models") / "a" / "model.py"
    assert resolve("", caller, [Path("models")], (site,), header="from pkg.utils.generic import helper\n") == {}


def test_with_the_whole_package_checked_every_import_of_it_is_followed(tree: Path) -> None:
    caller = tree / "pkg" / "models" / "a" / "model.py"
    assert _may_lead_inside("...utils.generic.helper", caller, frozenset([(tree / "pkg").resolve()]))


MODEL = """import torch
from torch import nn

try:
    from .helpers import helper
except ImportError:
    helper = None
if torch.__version__:
    from . import helpers as helper_module
from .mixins import MixA, MixB
scale = helper_module.scale


class Base(MixA, MixB):
    pass


class Model(Base, nn.Module):
    def forward(self, x):
        x = helper(x) + scale(x)
        x = helper_module.shift(x)
        return self.other(self.extended(x))


compiled = torch.compile(Model())
"""


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "helpers.py").write_text("def helper(x):\n    return x\n\n\ndef scale(x):\n    return x\n\n\ndef shift(x):\n    return x\n", encoding="utf-8")
    (folder / "mixins.py").write_text(
        "class MixA:\n    def extended(self, x):\n        return x\n\n\nclass MixB:\n    def other(self, x):\n        return x\n", encoding="utf-8"
    )
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    return folder


def test_calls_resolve_from_the_imports_alone_as_from_the_whole_file(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jedi is given the module's import statements and a line per call (`import_header`): the
    targets must be those it finds in the whole file, through try/if blocks, a module-level alias
    and a method inherited from the second of two imported mixins."""
    path = package / "model.py"
    result = analyze_detailed(MODEL, str(path), keep_facts=True)
    sites = call_sites(result, MODEL)
    assert len(sites) == 5  # `scale`, bound at module level to an imported module's function, too
    from_stub = resolve(MODEL, path, [package], sites)

    def unparsable(tree: object, text: str) -> str:
        raise ValueError  # as for a file that does not parse: jedi is given the whole file

    monkeypatch.setattr(crossmodule, "import_header", unparsable)
    from_file = resolve(MODEL, path, [package], sites)
    assert from_stub == from_file
    assert {(p.name, q) for p, found in from_stub.items() for q in found} == {
        ("helpers.py", "helper"), ("helpers.py", "scale"), ("helpers.py", "shift"), ("mixins.py", "MixA.extended"), ("mixins.py", "MixB.other")
    }


def test_a_worker_keeps_one_disable_cache_for_all_its_files() -> None:
    """The cache travels to worker processes inside every file's configuration; unpickled there,
    each copy is the process's one cache (a fresh one per file parsed the package again each time)."""
    sent = pickle.dumps(ImportedDisables())
    assert pickle.loads(sent) is pickle.loads(sent)


def test_a_package_checked_from_inside_follows_its_absolute_imports_of_itself(tmp_path: Path) -> None:
    """torchvision's detection models import `from torchvision.ops import boxes as box_ops`; with
    `check .` run inside `torchvision/`, the folder absolute imports start from is the one above,
    which jedi must be told of (it missed the three breaks of `ops/boxes.py` the models reach)."""
    package = tmp_path / "vis"
    (package / "ops").mkdir(parents=True)
    (package / "models").mkdir()
    for folder in (package, package / "ops", package / "models"):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "ops" / "boxes.py").write_text("def remove_small(boxes):\n    return boxes\n", encoding="utf-8")
    model = "import torch\nfrom vis.ops import boxes as box_ops\n\n\n@torch.compile\ndef f(x):\n    return box_ops.remove_small(x)\n"
    path = package / "models" / "rpn.py"
    path.write_text(model, encoding="utf-8")
    sites = call_sites(analyze_detailed(model, str(path), keep_facts=True), model)
    found = resolve(model, path, [package], sites)
    assert {(p.name, q) for p, names in found.items() for q in names} == {("boxes.py", "remove_small")}


DECORATOR = '''import functools


def capture(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        flags = {k: kwargs.get(k, getattr(self, k, False)) for k in self.names}
        try:
            out = func(self, *args, **kwargs)
        finally:
            pass
        return out, flags

    return wrapper
'''

DECORATED = '''import torch
from torch import nn

from ..utils.deco import capture


class Model(nn.Module):
    @capture
    def forward(self, x):
        {body}
        return x * 2
'''


@pytest.mark.parametrize(("body", "wrapper_breaks"), [('print("forward")', True), ("x = x + 1", False)])
def test_a_decorator_in_another_module_has_its_wrapper_compiled(tmp_path: Path, body: str, wrapper_breaks: bool) -> None:
    """transformers' `@capture_outputs` (utils/output_capturing.py): dynamo compiles the wrapper
    the decorator returns, with the forward inlined under its `try`; a break in the forward makes
    it run the wrapper eagerly, and the wrapper's comprehension then breaks alone (GM519; the
    example in GM519.toml checks this against dynamo in one file). A forward that does not break
    leaves the wrapper whole."""
    from graphmend.cli import check_files
    from graphmend.config import Config

    package = tmp_path / "pkg"
    for folder in (package, package / "utils", package / "models"):
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "utils" / "deco.py").write_text(DECORATOR, encoding="utf-8")
    (package / "models" / "model.py").write_text(DECORATED.format(body=body), encoding="utf-8")
    paths = [package / "utils" / "deco.py", package / "models" / "model.py"]
    results = {r.path.name: [(f.code, f.span.start_line) for f in r.findings] for r in check_files({p: Config() for p in paths}, jobs=1)}
    assert results["deco.py"] == ([("GM519", 7)] if wrapper_breaks else [])
    assert results["model.py"] == ([("GM301", 10)] if wrapper_breaks else [])


def test_a_method_of_an_attribute_of_an_imported_class_is_followed(tmp_path: Path) -> None:
    """torchvision's SSD calls `self.transform.postprocess(...)` with `self.transform =
    GeneralizedRCNNTransform(...)` imported from `transform.py`: the method is compiled code there
    (and its other methods are not)."""
    from graphmend.cli import check_files
    from graphmend.config import Config

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    method = "    def {name}(self, codes: torch.Tensor) -> torch.Tensor:\n        if codes.sum() > 0:\n            return codes * 2\n        return codes\n\n"
    coders = "import torch\n\n\nclass BoxCoder:\n" + method.format(name="decode") + method.format(name="unused")
    head = (
        "from torch import nn\n\nfrom . import coders\n\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.coder = coders.BoxCoder()\n\n    def forward(self, x):\n        return self.coder.decode(x)\n"
    )
    (package / "coders.py").write_text(coders, encoding="utf-8")
    (package / "head.py").write_text(head, encoding="utf-8")
    paths = [package / "coders.py", package / "head.py"]
    results = {r.path.name: [(f.code, f.span.start_line, f.if_compiled) for f in r.findings] for r in check_files({p: Config() for p in paths}, jobs=1)}
    assert results == {"coders.py": [("GM101", 6, False), ("GM101", 11, True)], "head.py": []}


def test_a_checkout_of_an_installed_package_resolves_into_the_checkout(tmp_path: Path) -> None:
    """A user checks their clone of a package that is also pip-installed (not editable): the
    clone's absolute import of itself must lead to the clone's module, not the installed copy's
    (jedi searched the environment's sys.path before the clone's import root, so transformers'
    modular files, checked from an unzipped wheel beside an installed transformers, followed no
    call)."""
    for copy in ("installed", "checkout"):
        package = tmp_path / copy / "pkgx"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        (package / "helpers.py").write_text("def scaled(x):\n    if x.sum() > 0:\n        return x\n    return -x\n", encoding="utf-8")
    model = "import torch\nfrom pkgx.helpers import scaled\n\n\n@torch.compile\ndef f(x):\n    return scaled(x * 2)\n"
    (tmp_path / "checkout" / "pkgx" / "model.py").write_text(model, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}
    completed = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "--format", "json", "--exit-zero", str(tmp_path / "checkout" / "pkgx")],
        capture_output=True, text=True, env=environment, check=True, cwd=tmp_path,
    )
    found = [(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(completed.stdout) if not f["if_compiled"]]
    assert ("helpers.py", 2, "GM101") in found


def test_a_function_another_file_calls_keeps_what_this_files_callers_pass() -> None:
    """A method that another file's compiled code calls, and that this file's compiled forward
    calls with a tensor: walked first as an entry (its parameters unknown), it lost the break the
    forward's call shows (qwen2_5_vl's `get_window_index`, called from qwen2_5_omni's encoder)."""
    code = (
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return self.helper(x.sum())\n\n"
        "    def helper(self, n):\n        if n > 0:\n            return n\n        return -n\n"
    )
    alone = analyze_detailed(code, "m.py")
    called = analyze_detailed(code, "m.py", Config(extra_entries=(("M.helper", "called from the compiled `g` in other.py (line 3)"),)))
    assert [(f.code, f.span.start_line) for f in alone.findings] == [("GM101", 9)]
    assert [(f.code, f.span.start_line) for f in called.findings] == [("GM101", 9)]


def test_an_inherited_attribute_is_looked_up_only_where_a_checked_file_defines_that_name() -> None:
    """`self.q_proj(x)` in a subclass of a base from another file: the base sets `q_proj` in
    `__init__` (a submodule), so no function by that name exists and jedi is not asked; a
    method, a class-level alias and a module-level function of any checked file are."""
    base = (
        "import torch\nfrom torch import nn\n\n\ndef rotate(x):\n    return x\n\n\nhelper = rotate\n\n\n"
        "class Attention(nn.Module):\n    act = staticmethod(rotate)\n    scale: float = 1.0\n\n"
        "    def __init__(self):\n        super().__init__()\n        self.q_proj = nn.Linear(2, 2)\n\n"
        "    def project(self, x):\n        def inner(y):\n            return y\n        return inner(x)\n\n\n"
        "if torch.cuda.is_available():\n    class Fused:\n        def fused(self, x):\n            return x\n"
        "else:\n    try:\n        from kernels import fallback\n    except ImportError:\n        fallback = None\n"
    )
    reachable = reachable_names(ast.parse(base))
    assert reachable == {"rotate", "helper", "act", "scale", "__init__", "project", "fused", "fallback"}

    def inherited(attribute: str) -> CallSite:
        return CallSite(1, 0, f"self.{attribute}", "Model.forward", ".base.Attention", ("Attention",))

    assert not may_reach_a_function(inherited("q_proj"), reachable)
    assert all(may_reach_a_function(inherited(name), reachable) for name in ("project", "act"))
    assert may_reach_a_function(CallSite(1, 0, "anything", "forward", ".base.anything"), reachable)  # not inherited: jedi decides
