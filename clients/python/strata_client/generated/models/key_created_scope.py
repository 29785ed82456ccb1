from enum import StrEnum


class KeyCreatedScope(StrEnum):
    READ = "read"
    READWRITE = "read+write"

    def __str__(self) -> str:
        return str(self.value)
