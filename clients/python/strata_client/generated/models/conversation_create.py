from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.app_result import AppResult
    from ..models.external_data import ExternalData
    from ..models.plugin_result import PluginResult
    from ..models.structured import Structured
    from ..models.transcript_segment import TranscriptSegment


T = TypeVar("T", bound="ConversationCreate")


@_attrs_define
class ConversationCreate:
    """A completed conversation, with the fields apps write (docs/data-model.md, the conversation document). It must carry
    something to capture: at least one transcript segment or ``external_data.text``.

        Attributes:
            id (None | str | Unset):
            status (Literal['completed'] | Unset):  Default: 'completed'.
            transcript_segments (list[TranscriptSegment] | Unset):
            structured (None | Structured | Unset):
            source (str | Unset):  Default: 'api'.
            language (str | Unset):  Default: 'en'.
            discarded (bool | Unset):  Default: False.
            client_device_id (None | str | Unset):
            client_platform (None | str | Unset):
            external_data (ExternalData | None | Unset):
            created_at (None | str | Unset): ISO 8601 date-time
            started_at (None | str | Unset): ISO 8601 date-time
            finished_at (None | str | Unset): ISO 8601 date-time
            apps_results (list[AppResult] | None | Unset):
            plugins_results (list[PluginResult] | None | Unset):
            processing_memory_id (None | str | Unset):
    """

    id: None | str | Unset = UNSET
    status: Literal["completed"] | Unset = "completed"
    transcript_segments: list[TranscriptSegment] | Unset = UNSET
    structured: None | Structured | Unset = UNSET
    source: str | Unset = "api"
    language: str | Unset = "en"
    discarded: bool | Unset = False
    client_device_id: None | str | Unset = UNSET
    client_platform: None | str | Unset = UNSET
    external_data: ExternalData | None | Unset = UNSET
    created_at: None | str | Unset = UNSET
    started_at: None | str | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    apps_results: list[AppResult] | None | Unset = UNSET
    plugins_results: list[PluginResult] | None | Unset = UNSET
    processing_memory_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.external_data import ExternalData  # noqa: PLC0415
        from ..models.structured import Structured  # noqa: PLC0415

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        status = self.status

        transcript_segments: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.transcript_segments, Unset):
            transcript_segments = []
            for transcript_segments_item_data in self.transcript_segments:
                transcript_segments_item = transcript_segments_item_data.to_dict()
                transcript_segments.append(transcript_segments_item)

        structured: dict[str, Any] | None | Unset
        if isinstance(self.structured, Unset):
            structured = UNSET
        elif isinstance(self.structured, Structured):
            structured = self.structured.to_dict()
        else:
            structured = self.structured

        source = self.source

        language = self.language

        discarded = self.discarded

        client_device_id: None | str | Unset
        if isinstance(self.client_device_id, Unset):
            client_device_id = UNSET
        else:
            client_device_id = self.client_device_id

        client_platform: None | str | Unset
        if isinstance(self.client_platform, Unset):
            client_platform = UNSET
        else:
            client_platform = self.client_platform

        external_data: dict[str, Any] | None | Unset
        if isinstance(self.external_data, Unset):
            external_data = UNSET
        elif isinstance(self.external_data, ExternalData):
            external_data = self.external_data.to_dict()
        else:
            external_data = self.external_data

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        else:
            created_at = self.created_at

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        else:
            started_at = self.started_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        apps_results: list[dict[str, Any]] | None | Unset
        if isinstance(self.apps_results, Unset):
            apps_results = UNSET
        elif isinstance(self.apps_results, list):
            apps_results = []
            for apps_results_type_0_item_data in self.apps_results:
                apps_results_type_0_item = apps_results_type_0_item_data.to_dict()
                apps_results.append(apps_results_type_0_item)

        else:
            apps_results = self.apps_results

        plugins_results: list[dict[str, Any]] | None | Unset
        if isinstance(self.plugins_results, Unset):
            plugins_results = UNSET
        elif isinstance(self.plugins_results, list):
            plugins_results = []
            for plugins_results_type_0_item_data in self.plugins_results:
                plugins_results_type_0_item = plugins_results_type_0_item_data.to_dict()
                plugins_results.append(plugins_results_type_0_item)

        else:
            plugins_results = self.plugins_results

        processing_memory_id: None | str | Unset
        if isinstance(self.processing_memory_id, Unset):
            processing_memory_id = UNSET
        else:
            processing_memory_id = self.processing_memory_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if id is not UNSET:
            field_dict["id"] = id
        if status is not UNSET:
            field_dict["status"] = status
        if transcript_segments is not UNSET:
            field_dict["transcript_segments"] = transcript_segments
        if structured is not UNSET:
            field_dict["structured"] = structured
        if source is not UNSET:
            field_dict["source"] = source
        if language is not UNSET:
            field_dict["language"] = language
        if discarded is not UNSET:
            field_dict["discarded"] = discarded
        if client_device_id is not UNSET:
            field_dict["client_device_id"] = client_device_id
        if client_platform is not UNSET:
            field_dict["client_platform"] = client_platform
        if external_data is not UNSET:
            field_dict["external_data"] = external_data
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if apps_results is not UNSET:
            field_dict["apps_results"] = apps_results
        if plugins_results is not UNSET:
            field_dict["plugins_results"] = plugins_results
        if processing_memory_id is not UNSET:
            field_dict["processing_memory_id"] = processing_memory_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.app_result import AppResult  # noqa: PLC0415
        from ..models.external_data import ExternalData  # noqa: PLC0415
        from ..models.plugin_result import PluginResult  # noqa: PLC0415
        from ..models.structured import Structured  # noqa: PLC0415
        from ..models.transcript_segment import TranscriptSegment  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        status = cast(Literal["completed"] | Unset, d.pop("status", UNSET))
        if status != "completed" and not isinstance(status, Unset):
            raise ValueError(f"status must match const 'completed', got '{status}'")

        _transcript_segments = d.pop("transcript_segments", UNSET)
        transcript_segments: list[TranscriptSegment] | Unset = UNSET
        if _transcript_segments is not UNSET:
            transcript_segments = []
            for transcript_segments_item_data in _transcript_segments:
                transcript_segments_item = TranscriptSegment.from_dict(transcript_segments_item_data)

                transcript_segments.append(transcript_segments_item)

        def _parse_structured(data: object) -> None | Structured | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                structured_type_0 = Structured.from_dict(data)

                return structured_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Structured | Unset, data)

        structured = _parse_structured(d.pop("structured", UNSET))

        source = d.pop("source", UNSET)

        language = d.pop("language", UNSET)

        discarded = d.pop("discarded", UNSET)

        def _parse_client_device_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_device_id = _parse_client_device_id(d.pop("client_device_id", UNSET))

        def _parse_client_platform(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_platform = _parse_client_platform(d.pop("client_platform", UNSET))

        def _parse_external_data(data: object) -> ExternalData | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                external_data_type_0 = ExternalData.from_dict(data)

                return external_data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExternalData | None | Unset, data)

        external_data = _parse_external_data(d.pop("external_data", UNSET))

        def _parse_created_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_started_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_apps_results(data: object) -> list[AppResult] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                apps_results_type_0 = []
                _apps_results_type_0 = data
                for apps_results_type_0_item_data in _apps_results_type_0:
                    apps_results_type_0_item = AppResult.from_dict(apps_results_type_0_item_data)

                    apps_results_type_0.append(apps_results_type_0_item)

                return apps_results_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[AppResult] | None | Unset, data)

        apps_results = _parse_apps_results(d.pop("apps_results", UNSET))

        def _parse_plugins_results(data: object) -> list[PluginResult] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                plugins_results_type_0 = []
                _plugins_results_type_0 = data
                for plugins_results_type_0_item_data in _plugins_results_type_0:
                    plugins_results_type_0_item = PluginResult.from_dict(plugins_results_type_0_item_data)

                    plugins_results_type_0.append(plugins_results_type_0_item)

                return plugins_results_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[PluginResult] | None | Unset, data)

        plugins_results = _parse_plugins_results(d.pop("plugins_results", UNSET))

        def _parse_processing_memory_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        processing_memory_id = _parse_processing_memory_id(d.pop("processing_memory_id", UNSET))

        conversation_create = cls(
            id=id,
            status=status,
            transcript_segments=transcript_segments,
            structured=structured,
            source=source,
            language=language,
            discarded=discarded,
            client_device_id=client_device_id,
            client_platform=client_platform,
            external_data=external_data,
            created_at=created_at,
            started_at=started_at,
            finished_at=finished_at,
            apps_results=apps_results,
            plugins_results=plugins_results,
            processing_memory_id=processing_memory_id,
        )

        return conversation_create
