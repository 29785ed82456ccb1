from enum import StrEnum


class SearchMemoriesAliasDeviceScope(StrEnum):
    ALL = "all"
    CURRENT = "current"
    EXPLICIT = "explicit"

    def __str__(self) -> str:
        return str(self.value)
