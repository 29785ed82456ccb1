from enum import StrEnum


class SetMemoryVisibilityV3Value(StrEnum):
    PRIVATE = "private"
    PUBLIC = "public"

    def __str__(self) -> str:
        return str(self.value)
