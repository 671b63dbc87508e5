"""Finding + source -> edit, or the reason a rewrite would not keep the program's meaning.

Fixers decide on the analysis's `ast` facts and edit with libcst, scoped to the enclosing
function (context.py). engine.py applies them to a whole file.
"""

from .engine import FileFix, fix_source, plan_fix, plan_fixes
from .model import Declined, Fix, Safety

__all__ = ["Declined", "FileFix", "Fix", "Safety", "fix_source", "plan_fix", "plan_fixes"]
