"""Request bodies read with the limits of every untrusted input (placement.scheduler.untrusted)."""

from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from placement.scheduler.untrusted import InputError, load_json


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


class BoundedJSONParser(JSONParser):
    """JSON bodies of at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes and `MAX_DEPTH` levels; else 413 / 400.

    DRF reads a JSON body from the raw stream, past Django's own size check, so the size is checked
    here; a body too deep for Python's stack would otherwise end in a RecursionError (500). A NUL
    character is left to the serializers, whose error names the field that holds it.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        if stream is None:
            return None
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = stream.read(limit + 1)
        if len(body) > limit:
            raise RequestTooLarge(f"the request body is larger than {limit} bytes")
        try:
            return load_json(body, refuse_nul=False)
        except InputError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
