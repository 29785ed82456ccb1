from enum import StrEnum


class DeletionReceiptKind(StrEnum):
    ACCOUNT = "account"
    ALL = "all"
    CONVERSATION = "conversation"
    MEMORY = "memory"

    def __str__(self) -> str:
        return str(self.value)
