from enum import StrEnum


class MemoryEditVisibilityType0(StrEnum):
    PRIVATE = "private"
    PUBLIC = "public"

    def __str__(self) -> str:
        return str(self.value)
