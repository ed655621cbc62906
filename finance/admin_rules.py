"""Rules in the admin: the household's rules in order, an editor whose conditions and actions
are rows of small forms, a preview of what a rule would change before it is saved, and
"apply to existing" (a background run, as the API's). Written through the API's services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.errors import ValidationFailed
from finance.admin_base import HouseholdAdmin, scope_queryset, user_family
from finance.admin_rule_forms import (
    ActionFormSet,
    ConditionFormSet,
    RuleForm,
    errors_place,
    names_for_datalist,
    rule_body,
    rule_initial,
    rule_initial_from,
)
from finance.models import Family, Rule, RuleRun, Transaction
from finance.rules.definitions import rule_fields_validate
from finance.selectors.rules import rule_preview
from finance.services.rules import rule_apply_request, rule_create, rule_update

TEMPLATE = "admin/finance/rule/edit.html"


@admin.register(Rule)
class RuleAdmin(HouseholdAdmin):
    list_display = ("position", "name", "active", "match", "summary")
    list_display_links = ("name",)
    list_filter = ("active",)
    search_fields = ("name",)
    ordering = ("position", "created_at", "id")
    actions = ("apply_to_existing", "activate", "deactivate")

    @admin.display(description="what it does")
    def summary(self, rule: Rule) -> str:
        conditions = f" {rule.match.upper()} ".join(
            f"{c['field']} {c['operator']}" for c in rule.conditions
        )
        actions = ", ".join(a["type"] for a in rule.actions)
        return f"if {conditions}: {actions}"

    @admin.action(
        description="Apply selected rules to existing transactions", permissions=["change"]
    )
    def apply_to_existing(self, request: HttpRequest, queryset: QuerySet[Rule]) -> None:
        for rule in queryset:
            run = rule_apply_request(rule=rule)
            self.message_user(
                request, f"“{rule.name}” is being applied (run {run.pk}).", messages.SUCCESS
            )

    @admin.action(description="Activate selected rules", permissions=["change"])
    def activate(self, request: HttpRequest, queryset: QuerySet[Rule]) -> None:
        for rule in queryset:
            rule_update(rule=rule, active=True)

    @admin.action(description="Deactivate selected rules", permissions=["change"])
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Rule]) -> None:
        for rule in queryset:
            rule_update(rule=rule, active=False)

    # -- the editor -------------------------------------------------------------------------
    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        if not self.has_add_permission(request):
            raise Http404
        family = user_family(request)
        if family is None:
            self.message_user(request, "Only a household's member can add rules.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:finance_rule_changelist"))
        return self._editor(request, family=family, rule=None)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        rule = self.get_object(request, object_id)
        if rule is None or not self.has_view_or_change_permission(request, rule):
            raise Http404
        return self._editor(request, family=rule.family, rule=rule)

    def _initial(self, request: HttpRequest, rule: Rule | None) -> tuple[Any, Any, Any]:
        if rule is not None:
            return rule_initial(rule)
        source = request.GET.get("from_transaction")
        if source:
            try:
                txn = (
                    scope_queryset(Transaction.objects.all(), request)
                    .select_related("merchant", "category")
                    .filter(pk=source)
                    .first()
                )
            except (ValueError, DjangoValidationError):  # a malformed id
                txn = None
            if txn is not None:
                return rule_initial_from(txn)
        return {"active": True, "match": "all"}, [], []

    def _editor(self, request: HttpRequest, *, family: Family, rule: Rule | None) -> HttpResponse:
        preview = None
        if request.method == "POST":
            form = RuleForm(request.POST)
            conditions = ConditionFormSet(request.POST, prefix="conditions")
            actions = ActionFormSet(request.POST, prefix="actions")
            if form.is_valid() and conditions.is_valid() and actions.is_valid():
                body, condition_forms, action_forms = rule_body(form, conditions, actions, family)
                try:
                    if "_preview" in request.POST:
                        preview = self._preview(family, rule, body)
                    else:
                        return self._save(request, family, rule, body)
                except ValidationFailed as exc:
                    errors_place(exc.errors or [exc.message], form, condition_forms, action_forms)
        else:
            head, condition_rows, action_rows = self._initial(request, rule)
            form = RuleForm(initial=head)
            conditions = ConditionFormSet(prefix="conditions", initial=condition_rows)
            actions = ActionFormSet(prefix="actions", initial=action_rows)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Change rule “{rule.name}”" if rule else "Add rule",
            "original": rule,
            "form": form,
            "conditions": conditions,
            "actions": actions,
            "preview": preview,
            "names": names_for_datalist(family),
            "has_change_permission": self.has_change_permission(request, rule),
        }
        return render(request, TEMPLATE, context)

    def _preview(self, family: Family, rule: Rule | None, body: dict[str, Any]) -> dict[str, Any]:
        fields = rule_fields_validate(family=family, data=body)
        draft = Rule(family=family, **fields)
        if rule is not None:
            draft.pk = rule.pk
        count, rows = rule_preview(rule=draft)
        return {"count": count, "transactions": rows}

    def _save(
        self, request: HttpRequest, family: Family, rule: Rule | None, body: dict[str, Any]
    ) -> HttpResponse:
        if rule is None:
            rule = rule_create(family=family, **body)
            self.message_user(request, f"The rule “{rule.name}” was added.", messages.SUCCESS)
        else:
            rule_update(rule=rule, **body)
            self.message_user(request, f"The rule “{rule.name}” was changed.", messages.SUCCESS)
        if "_apply" in request.POST:
            run = rule_apply_request(rule=rule)
            self.message_user(
                request, f"It is being applied to existing transactions (run {run.pk}).",
                messages.SUCCESS,
            )  # fmt: skip
        if "_continue" in request.POST or "_apply" in request.POST:
            return HttpResponseRedirect(reverse("admin:finance_rule_change", args=[rule.pk]))
        return HttpResponseRedirect(reverse("admin:finance_rule_changelist"))


@admin.register(RuleRun)
class RuleRunAdmin(HouseholdAdmin):
    list_display = ("created_at", "rule", "status", "matched", "changed", "finished_at")
    list_filter = ("status",)
    list_select_related = ("rule",)
    readonly_fields = (
        "rule", "status", "matched", "changed", "error", "created_at", "started_at", "finished_at"
    )  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs come from "apply to existing"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def rules_applied_html(txn: Transaction) -> str:
    """Which rule set what on a transaction, each rule (of its household) linked to its page."""
    changes = txn.rule_changes or []
    if not changes:
        return "No rule changed this transaction."
    ids = [c["rule"] for c in changes]
    found = Rule.objects.filter(family_id=txn.family_id, pk__in=ids).values_list("pk", "name")
    names = {str(pk): name for pk, name in found}
    rows = []
    for change in changes:
        name = names.get(change["rule"])
        label = (
            format_html(
                '<a href="{}">{}</a>',
                reverse("admin:finance_rule_change", args=[change["rule"]]),
                name,
            )
            if name is not None
            else format_html("a deleted rule ({})", change["rule"])
        )
        rows.append((label, ", ".join(change["set"])))
    return format_html(
        '<ul class="pf-rules-applied">{}</ul>',
        format_html_join("", "<li>{} set {}</li>", rows),
    )
