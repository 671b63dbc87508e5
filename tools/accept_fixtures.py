"""Write tests/fixtures/*/*.out.py from the current rewrites, for review with `git diff`.

    .venv/bin/python tools/accept_fixtures.py [pattern]

A changed .out.py is a changed behaviour: read the diff before committing it.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend.rewrite import fix_source  # noqa: E402
from graphmend.rewrite.model import Safety  # noqa: E402

pattern = sys.argv[1] if len(sys.argv) > 1 else "*"
for path in sorted((ROOT / "tests" / "fixtures").glob(f"*/{pattern}.in.py")):
    source = path.read_text(encoding="utf-8")
    level = Safety.UNSAFE if "UNSAFE = True" in source else Safety.COSTLY if "COSTLY = True" in source else Safety.SAFE
    result = fix_source(source, str(path), level=level)
    target = path.with_name(path.name.replace(".in.py", ".out.py"))
    previous = target.read_text(encoding="utf-8") if target.exists() else None
    target.write_text(result.fixed, encoding="utf-8")
    state = "unchanged" if previous == result.fixed else ("new" if previous is None else "CHANGED")
    declined = "; ".join(d.key for d in result.declined)
    print(f"{state:9s} {path.relative_to(ROOT)}  fixes={len(result.applied)}{'  declined: ' + declined if declined else ''}")
