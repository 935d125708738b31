"""`Started`: a base for things with start() and stop() that are used in a `with` block."""

from types import TracebackType
from typing import Self


class Started:
    """Something with start() and stop(), used in a `with` block: stopped however the block ends."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
