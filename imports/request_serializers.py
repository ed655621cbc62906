"""Request bodies of the import API: upload, configuration, mappings and row changes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from finance.serializers.fields import TextChoiceField
from imports.models import Import
from imports.serializers import OPTION_VALUES, MappingKindField
from imports.services.config import CONFIG_KEYS


def option_field(key: str) -> serializers.CharField:
    """A configuration option in a request: text, checked by the import's configuration (its
    messages word the errors); the document lists the allowed values of those that have them."""
    kwargs: dict[str, Any] = {
        "required": False,
        "allow_blank": True,
        "trim_whitespace": False,
        "max_length": 255,
    }
    if key in OPTION_VALUES:
        return TextChoiceField(choices=OPTION_VALUES[key], **kwargs)
    return serializers.CharField(**kwargs)


class BooleanText(serializers.BooleanField):
    """JSON true/false and the strings "true"/"false" (forms) alike."""


class ImportCreateRequestSerializer(serializers.Serializer):
    file = serializers.FileField(
        required=False, help_text="the CSV, OFX/QFX, QIF, CAMT.053 or MT940 file (multipart)"
    )
    raw_file_content = serializers.CharField(
        required=False, allow_blank=False, trim_whitespace=False, help_text="the file as text"
    )
    account_id = serializers.UUIDField(required=False, allow_null=True)
    publish = BooleanText(required=False, default=False)
    type = TextChoiceField(choices=Import.Type.choices, required=False)

    def validate_type(self, value: str) -> str:
        if value not in Import.Type.values:
            raise serializers.ValidationError(f"must be one of {', '.join(Import.Type.values)}")
        return value

    locals().update({k: option_field(k) for k in CONFIG_KEYS})

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        has_file, has_raw = "file" in attrs, "raw_file_content" in attrs
        if has_file == has_raw:
            raise serializers.ValidationError(
                {"file": "send exactly one of file (multipart) or raw_file_content"}
            )
        return attrs

    class Meta:
        ref_name = "ImportCreate"


class ImportUpdateRequestSerializer(serializers.Serializer):
    account_id = serializers.UUIDField(required=False, allow_null=True)
    locals().update({k: option_field(k) for k in CONFIG_KEYS})

    class Meta:
        ref_name = "ImportUpdate"


class MappingChangeSerializer(serializers.Serializer):
    id = serializers.UUIDField(required=False)
    kind = MappingKindField(required=False)
    value = serializers.CharField(
        max_length=255, required=False, allow_blank=True, trim_whitespace=False
    )
    target_id = serializers.UUIDField(required=False, allow_null=True)
    create_new = serializers.BooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "id" not in attrs and ("kind" not in attrs or "value" not in attrs):
            raise serializers.ValidationError("name the mapping by id, or by kind and value")
        return attrs

    class Meta:
        ref_name = "ImportMappingChange"


class MappingsUpdateRequestSerializer(serializers.Serializer):
    mappings = MappingChangeSerializer(many=True, allow_empty=False)

    class Meta:
        ref_name = "ImportMappingsUpdate"


class RowUpdateRequestSerializer(serializers.Serializer):
    force = serializers.BooleanField(required=False)
    skip = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "ImportRowUpdate"
