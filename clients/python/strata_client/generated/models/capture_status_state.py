from enum import StrEnum


class CaptureStatusState(StrEnum):
    CAPTURED = "captured"
    FAILED = "failed"
    FELL_BACK = "fell_back"
    PENDING = "pending"

    def __str__(self) -> str:
        return str(self.value)
