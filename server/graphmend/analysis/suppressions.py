"""`# graphmend: ignore[GM101, GM2]`, bare `# graphmend: ignore` and `# graphmend: ignore-file`.

A suppression comment applies to findings that start or end on its line (so a comment after the
closing parenthesis of a multi-line call works). Codes may be prefixes, as in `select`. Only lines
that mention "graphmend" are looked at, so files without suppressions cost one substring search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..findings import Finding

_COMMENT = re.compile(r"#\s*graphmend:\s*ignore(?P<file>-file)?(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
ALL_CODES: frozenset[str] = frozenset({"*"})


@dataclass
class Suppressions:
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    file_codes: frozenset[str] = frozenset()

    def suppresses(self, finding: Finding) -> bool:
        if _matches(self.file_codes, finding.code):
            return True
        for line in {finding.span.start_line, finding.span.end_line}:
            codes = self.by_line.get(line)
            if codes and _matches(codes, finding.code):
                return True
        return False


def _matches(codes: frozenset[str], code: str) -> bool:
    return "*" in codes or any(code.startswith(c) for c in codes)


def parse_suppressions(lines: list[str], text: str) -> Suppressions:
    result = Suppressions()
    if "graphmend" not in text.lower():
        return result
    file_codes: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if "graphmend" not in line.lower():
            continue
        for match in _COMMENT.finditer(line):
            raw = match.group("codes")
            codes = ALL_CODES if raw is None else frozenset(
                c.strip().upper() for c in raw.split(",") if c.strip()
            )
            if match.group("file"):
                file_codes |= codes
            else:
                result.by_line[number] = result.by_line.get(number, frozenset()) | codes
    result.file_codes = frozenset(file_codes)
    return result
