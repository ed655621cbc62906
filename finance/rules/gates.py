"""Gates: cheap checks that skip rules which cannot match a row, so that most rules cost a
row almost nothing. A gate only ever skips what could not match; when it opens, each rule
decides as before.

- An expression's pieces: the literal text every match contains. Evaluating an expression
  under a time bound costs far more than looking for a piece of text, and most rows hold
  none of the words a household's expressions look for.
- Runs of rules on one field: most rules need a text in a field ("contains BLUE BOTTLE"),
  and most rows hold none of them. Consecutive rules that each need a piece in the
  same field are looked at together: one search for any of their pieces, and when none
  occurs, the whole run is skipped (none of them ran, so none changed the field)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from finance.rules.definitions import FIELDS, TEXT

_NEEDS_TEXT = frozenset({"contains", "equals", "starts_with", "ends_with"})
MIN_RUN = 3  # fewer rules are as cheap to look at one by one

_QUANTIFIERS = frozenset("*?+{")
# Characters that stand for themselves outside a class, in every flag setting but verbose
# (which needs an inline flag, refused below).
_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,:;/&'\"_@#%=<>!~-"
)
_ESCAPED_LITERALS = frozenset(".^$*+?{}[]()|\\/-&~#% ,:;'\"=<>!@_")
# Escapes that stand for a class or a position, one character long. Any other escape (\x41,
# \1, \p{L}, \N{...}) may take arguments: the pattern then has no pieces.
_ESCAPED_CLASSES = frozenset("dDsSwWbBAZ")


def expression_literals(pattern: str) -> list[str]:
    """Casefolded pieces every match of `pattern` contains: the runs of literal characters at
    its top level that no quantifier applies to. [] when that cannot be told simply."""
    if "|" in pattern or "(?" in pattern:
        return []
    pieces: list[str] = []
    run: list[str] = []
    depth = 0
    i = 0

    def close() -> None:
        if run:
            pieces.append("".join(run))
            run.clear()

    while i < len(pattern):
        char = pattern[i]
        nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
        if char == "\\":
            if nxt not in _ESCAPED_LITERALS and nxt not in _ESCAPED_CLASSES:
                return []
            follows = pattern[i + 2 : i + 3]
            if (
                depth == 0
                and nxt in _ESCAPED_LITERALS
                and (not follows or follows not in _QUANTIFIERS)
            ):
                run.append(nxt)
            else:
                close()
            i += 2
            continue
        if char == "[":  # a class: skip to its end
            close()
            i = _class_end(pattern, i)
            continue
        if char == "{":  # a repetition's bounds (or a literal brace): skip them
            close()
            end = pattern.find("}", i)
            i = len(pattern) if end < 0 else end + 1
            continue
        if char == "(":
            close()
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in _PLAIN and (not nxt or nxt not in _QUANTIFIERS):
            run.append(char)
            i += 1
            continue
        else:
            close()
        i += 1
    close()
    return [p.casefold() for p in pieces if p.strip()]


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class opening at `start`."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def needle(condition: dict[str, Any]) -> str | None:
    """The casefolded text the condition cannot match without, if any. (An expression's pieces
    are looked for by the expression's own test: they may be as common as a bank's prefix.)"""
    if FIELDS[condition["field"]] != TEXT or condition["operator"] not in _NEEDS_TEXT:
        return None
    return condition["value"].casefold()


def rule_needle(rule: Any) -> tuple[str, str] | None:
    """(field, text) a rule cannot match without; None when there is no such text (a rule of
    `any`, or none of its conditions needs text)."""
    if rule.match == "any":
        return None
    found = [(c["field"], n) for c in rule.conditions if (n := needle(c))]
    return max(found, key=lambda f: len(f[1])) if found else None


def rule_runs(rules: Sequence[Any]) -> list[tuple[re.Pattern[str] | None, str, list[int]]]:
    """The rules (by index, in order) as steps: (expression, field, indexes) for a run of
    MIN_RUN or more consecutive rules that each need text in `field`, skipped when the
    expression finds none of it; (None, "", [index]) for a rule looked at on its own."""
    steps: list[tuple[re.Pattern[str] | None, str, list[int]]] = []
    run: list[tuple[int, str]] = []
    field = ""

    def close() -> None:
        if len(run) >= MIN_RUN:
            pieces = sorted({text for _, text in run}, key=len, reverse=True)
            union = re.compile("|".join(re.escape(p) for p in pieces))
            steps.append((union, field, [i for i, _ in run]))
        else:
            steps.extend((None, "", [i]) for i, _ in run)
        run.clear()

    for index, rule in enumerate(rules):
        need = rule_needle(rule)
        if need is None or need[0] != field:
            close()
        if need is None:
            steps.append((None, "", [index]))
            field = ""
            continue
        field = need[0]
        run.append((index, need[1]))
    close()
    return steps
