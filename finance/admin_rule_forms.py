"""The admin's rule editor: a rule's name and options, then its conditions and actions as rows
of small forms (a field, an operator, a value). Records are named as a household names them
(a category's name, an account's name, tag names separated by commas), or by id; the rows
become the API's rule body, which the rules' one check (finance/rules/definitions.py) decides."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django import forms

from finance.models import Account, Category, Family, Merchant, Rule, Tag, Transaction
from finance.rules.definitions import ACTIONS, FIELDS, ID, MATCHES, OPERATORS

_OPERATOR_CHOICES = sorted({op for ops in OPERATORS.values() for op in ops})
_YES, _NO = {"", "yes", "true", "1", "y"}, {"no", "false", "0", "n"}
ROW_ERROR = re.compile(r"^(conditions|actions)\[(\d+)\](?:\.(\w+))?(?:\[\d+\])?: (.*)$")
EXTRA_ROWS = 2
VALUE_HELP = (
    "Text; a regular expression for “matches”; an amount or a date (YYYY-MM-DD); "
    "“low, high” for “between”; names (or ids) of accounts and categories, comma-separated "
    "for “in”; for “is empty”: yes (default) or no."
)
ACTION_HELP = (
    "A category's name; a merchant's name (made when first used); tag names, comma-separated; "
    "the new name or notes; yes or no to exclude."
)


class RuleForm(forms.Form):
    name = forms.CharField(max_length=255)
    active = forms.BooleanField(required=False, initial=True)
    match = forms.ChoiceField(
        choices=[(m, f"{m} of the conditions") for m in MATCHES], initial="all"
    )
    position = forms.IntegerField(
        min_value=0, required=False, help_text="Order of application, lower first."
    )


class ConditionForm(forms.Form):
    field = forms.ChoiceField(choices=[("", "---------"), *((f, f) for f in FIELDS)])
    operator = forms.ChoiceField(choices=[("", "---------"), *((o, o) for o in _OPERATOR_CHOICES)])
    value = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"list": "pf-rule-names", "size": 40})
    )


class ActionForm(forms.Form):
    type = forms.ChoiceField(choices=[("", "---------"), *((a, a) for a in ACTIONS)])
    value = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"list": "pf-rule-names", "size": 40})
    )


ConditionFormSet = forms.formset_factory(ConditionForm, extra=EXTRA_ROWS, can_delete=True)
ActionFormSet = forms.formset_factory(ActionForm, extra=EXTRA_ROWS, can_delete=True)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class _Names:
    """A household's records by name (without regard to case) and by id."""

    def __init__(self, family: Family) -> None:
        self.family = family
        self._by_model: dict[type, dict[str, Any]] = {}

    def table(self, model: type) -> dict[str, Any]:
        if model not in self._by_model:
            table: dict[str, Any] = {}
            for pk, name in model.objects.filter(family=self.family).values_list("pk", "name"):
                table.setdefault(name.casefold(), str(pk))
                table[str(pk)] = name
            self._by_model[model] = table
        return self._by_model[model]

    def id_of(self, model: type, text: str) -> str:
        """An id (given as such, or the id of the record of that name); the text itself when
        nothing matches (the rules' check then names it)."""
        try:
            return str(uuid.UUID(text))
        except ValueError:
            return self.table(model).get(text.casefold(), text)

    def name_of(self, model: type, pk: str) -> str:
        return self.table(model).get(pk, pk)


def _condition_value(row: dict[str, Any], names: _Names) -> Any:
    field, operator, text = row["field"], row["operator"], row["value"].strip()
    if operator == "is_empty":
        return text.lower() not in _NO
    if FIELDS.get(field) == ID:
        model = Account if field == "account_id" else Category
        ids = [names.id_of(model, part) for part in _split(text)]
        return ids if operator == "in" else (ids[0] if ids else "")
    if operator == "between":
        return _split(text)
    return text


def _action_value(row: dict[str, Any], names: _Names) -> Any:
    kind, text = row["type"], row["value"].strip()
    if kind == "set_category":
        return names.id_of(Category, text)
    if kind in ("add_tags", "remove_tags"):
        return [names.id_of(Tag, part) for part in _split(text)]
    if kind == "exclude":
        lowered = text.lower()
        return True if lowered in _YES else False if lowered in _NO else text
    if kind == "set_notes":
        return text or None
    return text


def _rows(formset: forms.BaseFormSet, key: str) -> list[tuple[forms.Form, dict[str, Any]]]:
    """The filled-in rows, with their forms (blank and deleted rows left out)."""
    out = []
    for form in formset.forms:
        data = getattr(form, "cleaned_data", None) or {}
        if not data.get(key) or data.get("DELETE"):
            continue
        out.append((form, data))
    return out


def rule_body(
    form: RuleForm, conditions: forms.BaseFormSet, actions: forms.BaseFormSet, family: Family
) -> tuple[dict[str, Any], list[forms.Form], list[forms.Form]]:
    """The API's rule body from valid forms, and the forms of its condition and action rows in
    order (to put the check's messages on the right row)."""
    names = _Names(family)
    condition_rows, action_rows = _rows(conditions, "field"), _rows(actions, "type")
    body: dict[str, Any] = {
        "name": form.cleaned_data["name"],
        "active": form.cleaned_data["active"],
        "match": form.cleaned_data["match"],
        "conditions": [
            {
                "field": row["field"],
                "operator": row["operator"],
                "value": _condition_value(row, names),
            }
            for _, row in condition_rows
        ],
        "actions": [
            {"type": row["type"], "value": _action_value(row, names)} for _, row in action_rows
        ],
    }
    if form.cleaned_data.get("position") is not None:
        body["position"] = form.cleaned_data["position"]
    return body, [f for f, _ in condition_rows], [f for f, _ in action_rows]


def errors_place(
    messages: list[str],
    form: RuleForm,
    condition_forms: list[forms.Form],
    action_forms: list[forms.Form],
) -> None:
    """Put each "path: problem" of the rules' check on its form, row and field."""
    for message in messages:
        match = ROW_ERROR.match(message)
        if match:
            kind, index, field, problem = match.groups()
            rows = condition_forms if kind == "conditions" else action_forms
            if int(index) < len(rows):
                target = rows[int(index)]
                target.add_error(field if field in target.fields else None, problem)
                continue
        name, _, problem = message.partition(": ")
        if name in form.fields:
            form.add_error(name, problem)
        else:
            form.add_error(None, message)


def _shown_condition_value(condition: dict[str, Any], names: _Names) -> str:
    value = condition["value"]
    if condition["operator"] == "is_empty":
        return "yes" if value else "no"
    if FIELDS[condition["field"]] == ID:
        model = Account if condition["field"] == "account_id" else Category
        ids = value if isinstance(value, list) else [value]
        return ", ".join(names.name_of(model, pk) for pk in ids)
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


def _shown_action_value(action: dict[str, Any], names: _Names) -> str:
    value = action["value"]
    if action["type"] == "set_category":
        return names.name_of(Category, value)
    if action["type"] == "set_merchant":
        return names.name_of(Merchant, value)
    if action["type"] in ("add_tags", "remove_tags"):
        return ", ".join(names.name_of(Tag, pk) for pk in value)
    if action["type"] == "exclude":
        return "yes" if value else "no"
    return value or ""


def rule_initial(rule: Rule) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A stored rule as the editor's initial rows."""
    names = _Names(rule.family)
    head = {
        "name": rule.name,
        "active": rule.active,
        "match": rule.match,
        "position": rule.position,
    }
    conditions = [
        {"field": c["field"], "operator": c["operator"], "value": _shown_condition_value(c, names)}
        for c in rule.conditions
    ]
    actions = [{"type": a["type"], "value": _shown_action_value(a, names)} for a in rule.actions]
    return head, conditions, actions


def rule_initial_from(txn: Transaction) -> tuple[dict[str, Any], list[dict], list[dict]]:
    """A new rule that would treat transactions like this one: matched by its merchant (or its
    name), setting the category it has."""
    if txn.merchant_id is not None:
        label = txn.merchant.name
        conditions = [{"field": "merchant", "operator": "equals", "value": label}]
    else:
        label = txn.name
        conditions = [{"field": "name", "operator": "contains", "value": label}]
    actions = []
    if txn.category_id is not None:
        actions.append({"type": "set_category", "value": txn.category.name})
    return {"name": label[:255], "active": True, "match": "all"}, conditions, actions


def names_for_datalist(family: Family | None) -> list[str]:
    """Every name the value fields may take, offered as the browser's suggestions."""
    if family is None:
        return []
    names: set[str] = set()
    for model in (Category, Account, Tag, Merchant):
        names.update(model.objects.filter(family=family).values_list("name", flat=True)[:500])
    return sorted(names, key=str.casefold)
