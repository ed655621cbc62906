"""The rules engine's shortcuts never change an outcome: an expression's pieces are in every
text it matches, and the gates that skip runs of rules give what evaluating every rule gives."""

from __future__ import annotations

import re
import uuid
import warnings

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finance.rules.engine import Refs, RuleSet
from finance.rules.gates import expression_literals

PATTERN_ALPHABET = "abAB c.*+?()[]{}^$12,\\dsw-"


def _valid(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible set difference"
            re.compile(pattern, re.IGNORECASE)
        regex.compile(pattern, regex.IGNORECASE)
    except (re.error, regex.error, OverflowError, RecursionError):
        return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data(), st.text(alphabet=PATTERN_ALPHABET, min_size=1, max_size=10).filter(_valid))
def test_every_match_holds_the_expressions_pieces(data, pattern):
    pieces = expression_literals(pattern)
    text = data.draw(st.from_regex(re.compile(pattern, re.IGNORECASE)))
    if regex.search(pattern, text, flags=regex.IGNORECASE) is None:
        return  # hypothesis and the regex module may disagree on an edge: not our question
    folded = text.casefold()
    assert all(piece in folded for piece in pieces), (pattern, text, pieces)


def test_pieces_of_some_expressions():
    assert expression_literals(r"^AMZN\s+MKTP") == ["amzn", "mktp"]
    assert expression_literals(r"purchase \d*117$") == ["purchase ", "117"]
    assert expression_literals(r"ab{2,}c") == ["a", "c"]
    assert expression_literals(r"caf[eé] \d{2}") == ["caf"]
    assert expression_literals(r"blue\.bottle") == ["blue.bottle"]
    for none in (r"foo|bar", r"(?i)abc", r"\x41bc", r"\p{L}+", r"(\w)\1"):
        assert expression_literals(none) == []


class _Rule:
    def __init__(self, conditions: list[dict], actions: list[dict], match: str) -> None:
        self.id = uuid.uuid4()
        self.name = "r"
        self.conditions, self.actions, self.match = conditions, actions, match


WORDS = ["blue", "bottle", "card", "coffee", "rent", "bl", "e b"]
condition = st.builds(
    lambda field, operator, value: {"field": field, "operator": operator, "value": value},
    st.sampled_from(["name", "name", "name", "notes"]),  # runs on one field are what is gated
    st.sampled_from(["contains", "contains", "equals", "starts_with", "ends_with"]),
    st.sampled_from(WORDS),
)
action = st.builds(
    lambda kind, value: {"type": kind, "value": value},
    st.sampled_from(["set_name", "set_notes"]),
    st.sampled_from(["blue bottle", "card rent", "coffee"]),
)
rule = st.builds(
    _Rule,
    st.lists(condition, min_size=1, max_size=3),
    st.lists(action, min_size=1, max_size=2, unique_by=lambda a: a["type"]),
    st.sampled_from(["all", "all", "any"]),
)
texts = st.one_of(st.none(), st.sampled_from(["", "Blue Bottle", "CARD rent", "coffee e b"]))


@settings(max_examples=500, deadline=None)
@given(st.lists(rule, min_size=3, max_size=12), texts, texts)
def test_gates_give_what_every_rule_one_by_one_gives(rules, name, notes):
    gated = RuleSet(rules, Refs())
    plain = RuleSet(rules, Refs())
    plain.steps = [(None, None, [r]) for r in plain.rules]
    rows = [{"name": name, "notes": notes} for _ in range(2)]
    assert gated.run(rows[0]) == plain.run(rows[1])
    assert rows[0] == rows[1]
