"""Model fields shared by the apps."""

import json
import zlib
from typing import Any

from django.db import models


class CompressedJSONField(models.BinaryField[Any, Any]):
    """A JSON document kept zlib-compressed in a binary column, read and written whole.

    For documents rewritten often: a placement's explanation, rewritten by every reschedule. When it
    listed every cluster (about 0.5 MB of JSON at 10,000 clusters), PostgreSQL parsed and TOAST-compressed
    it as jsonb in about 20 ms per write, and the same document as compressed bytes (about 100 kB) took
    under 2 ms (bench/reschedule.py).
    Nothing inside it can be queried in SQL.
    """

    # level 1: most of the size gain for a fraction of the time of the default level
    LEVEL = 1

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return None if value is None else self.decode(value)

    def to_python(self, value: Any) -> Any:
        return self.decode(value) if isinstance(value, bytes | bytearray | memoryview) else value

    def get_prep_value(self, value: Any) -> Any:
        if value is None or isinstance(value, bytes | bytearray | memoryview):
            return value
        return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), self.LEVEL)

    def value_to_string(self, obj: models.Model) -> str:
        return json.dumps(self.value_from_object(obj))

    @staticmethod
    def decode(value: bytes | bytearray | memoryview) -> Any:
        return json.loads(zlib.decompress(bytes(value))) if value else {}
