from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response


class DeletedSerializer(serializers.Serializer):
    message = serializers.CharField()

    class Meta:
        ref_name = "Deleted"


def deleted_response(what: str) -> Response:
    """Deletes answer 200 with a message, as existing clients of this API expect."""
    return Response({"message": f"{what} deleted"}, status=200)
