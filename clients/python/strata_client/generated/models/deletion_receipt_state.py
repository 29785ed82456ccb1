from enum import StrEnum


class DeletionReceiptState(StrEnum):
    CONFIRMED = "confirmed"
    PENDING = "pending"

    def __str__(self) -> str:
        return str(self.value)
