from enum import StrEnum


class VectorSearchMemoriesDeviceScope(StrEnum):
    ALL = "all"
    CURRENT = "current"
    EXPLICIT = "explicit"

    def __str__(self) -> str:
        return str(self.value)
