"""Which imports are worth asking jedi about: only those that may lead into the checked roots.

jedi parses the whole calling file before it answers (0.2 s for a large model file); checking
transformers' `models/` spent most of its time there on imports of `...utils` and
`...modeling_utils`, which lie outside the tree checked and so can never be followed."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphmend.crossmodule import _may_lead_inside


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
    assert _may_lead_inside(imported, caller, [(tree / "pkg" / "models").resolve()]) is leads_inside


def test_with_the_whole_package_checked_every_import_of_it_is_followed(tree: Path) -> None:
    caller = tree / "pkg" / "models" / "a" / "model.py"
    assert _may_lead_inside("...utils.generic.helper", caller, [(tree / "pkg").resolve()])
