"""Contains all the data models used in inputs/outputs"""

from .account_deleted import AccountDeleted
from .all_deleted import AllDeleted
from .app_result import AppResult
from .capture_status import CaptureStatus
from .capture_status_state import CaptureStatusState
from .conversation_create import ConversationCreate
from .conversation_created import ConversationCreated
from .conversation_deleted import ConversationDeleted
from .conversation_deleted_cascade_type_1 import ConversationDeletedCascadeType1
from .deletion_receipt import DeletionReceipt
from .deletion_receipt_kind import DeletionReceiptKind
from .deletion_receipt_state import DeletionReceiptState
from .deletion_stores import DeletionStores
from .error import Error
from .error_body import ErrorBody
from .evidence import Evidence
from .evidence_quote_refs_item import EvidenceQuoteRefsItem
from .external_data import ExternalData
from .extractor_used import ExtractorUsed
from .get_open_api_response_200 import GetOpenApiResponse200
from .graph_page import GraphPage
from .graph_page_edges_item import GraphPageEdgesItem
from .graph_page_nodes_item import GraphPageNodesItem
from .health import Health
from .history import History
from .history_commit import HistoryCommit
from .hybrid_search_memories_device_scope import HybridSearchMemoriesDeviceScope
from .key import Key
from .key_create import KeyCreate
from .key_create_scope import KeyCreateScope
from .key_created import KeyCreated
from .key_created_scope import KeyCreatedScope
from .key_list import KeyList
from .key_revoked import KeyRevoked
from .key_scope import KeyScope
from .key_writes import KeyWrites
from .list_mcp_memories_device_scope import ListMcpMemoriesDeviceScope
from .list_memories_device_scope import ListMemoriesDeviceScope
from .list_memories_layer import ListMemoriesLayer
from .list_memories_v3_device_scope import ListMemoriesV3DeviceScope
from .list_tool_memories_device_scope import ListToolMemoriesDeviceScope
from .mcp_memory import McpMemory
from .memory import Memory
from .memory_batch import MemoryBatch
from .memory_create import MemoryCreate
from .memory_create_visibility import MemoryCreateVisibility
from .memory_deleted import MemoryDeleted
from .memory_edit import MemoryEdit
from .memory_edit_visibility_type_0 import MemoryEditVisibilityType0
from .memory_layer import MemoryLayer
from .memory_list import MemoryList
from .memory_page import MemoryPage
from .memory_slot import MemorySlot
from .plugin_result import PluginResult
from .reprocessed import Reprocessed
from .resource_metadata import ResourceMetadata
from .review_entry import ReviewEntry
from .review_page import ReviewPage
from .review_queue import ReviewQueue
from .review_resolve import ReviewResolve
from .review_resolve_decision import ReviewResolveDecision
from .review_resolved import ReviewResolved
from .scored_memory import ScoredMemory
from .scored_memory_layer import ScoredMemoryLayer
from .search_archive_alias_device_scope import SearchArchiveAliasDeviceScope
from .search_archive_device_scope import SearchArchiveDeviceScope
from .search_memories_alias_device_scope import SearchMemoriesAliasDeviceScope
from .search_memories_device_scope import SearchMemoriesDeviceScope
from .search_page import SearchPage
from .search_results import SearchResults
from .search_tool_memories_device_scope import SearchToolMemoriesDeviceScope
from .set_memory_visibility_v3_value import SetMemoryVisibilityV3Value
from .status_ok import StatusOk
from .store_confirmation import StoreConfirmation
from .store_confirmation_state import StoreConfirmationState
from .structured import Structured
from .structured_action_items_item import StructuredActionItemsItem
from .structured_events_item import StructuredEventsItem
from .tool_result import ToolResult
from .tool_search import ToolSearch
from .transcript_segment import TranscriptSegment
from .v3_memory import V3Memory
from .v3_memory_layer import V3MemoryLayer
from .vector_search_memories_alias_device_scope import VectorSearchMemoriesAliasDeviceScope
from .vector_search_memories_device_scope import VectorSearchMemoriesDeviceScope
from .webhook_config import WebhookConfig
from .webhook_deleted import WebhookDeleted
from .webhook_put import WebhookPut
from .would_end import WouldEnd

__all__ = (
    "AccountDeleted",
    "AllDeleted",
    "AppResult",
    "CaptureStatus",
    "CaptureStatusState",
    "ConversationCreate",
    "ConversationCreated",
    "ConversationDeleted",
    "ConversationDeletedCascadeType1",
    "DeletionReceipt",
    "DeletionReceiptKind",
    "DeletionReceiptState",
    "DeletionStores",
    "Error",
    "ErrorBody",
    "Evidence",
    "EvidenceQuoteRefsItem",
    "ExternalData",
    "ExtractorUsed",
    "GetOpenApiResponse200",
    "GraphPage",
    "GraphPageEdgesItem",
    "GraphPageNodesItem",
    "Health",
    "History",
    "HistoryCommit",
    "HybridSearchMemoriesDeviceScope",
    "Key",
    "KeyCreate",
    "KeyCreated",
    "KeyCreatedScope",
    "KeyCreateScope",
    "KeyList",
    "KeyRevoked",
    "KeyScope",
    "KeyWrites",
    "ListMcpMemoriesDeviceScope",
    "ListMemoriesDeviceScope",
    "ListMemoriesLayer",
    "ListMemoriesV3DeviceScope",
    "ListToolMemoriesDeviceScope",
    "McpMemory",
    "Memory",
    "MemoryBatch",
    "MemoryCreate",
    "MemoryCreateVisibility",
    "MemoryDeleted",
    "MemoryEdit",
    "MemoryEditVisibilityType0",
    "MemoryLayer",
    "MemoryList",
    "MemoryPage",
    "MemorySlot",
    "PluginResult",
    "Reprocessed",
    "ResourceMetadata",
    "ReviewEntry",
    "ReviewPage",
    "ReviewQueue",
    "ReviewResolve",
    "ReviewResolved",
    "ReviewResolveDecision",
    "ScoredMemory",
    "ScoredMemoryLayer",
    "SearchArchiveAliasDeviceScope",
    "SearchArchiveDeviceScope",
    "SearchMemoriesAliasDeviceScope",
    "SearchMemoriesDeviceScope",
    "SearchPage",
    "SearchResults",
    "SearchToolMemoriesDeviceScope",
    "SetMemoryVisibilityV3Value",
    "StatusOk",
    "StoreConfirmation",
    "StoreConfirmationState",
    "Structured",
    "StructuredActionItemsItem",
    "StructuredEventsItem",
    "ToolResult",
    "ToolSearch",
    "TranscriptSegment",
    "V3Memory",
    "V3MemoryLayer",
    "VectorSearchMemoriesAliasDeviceScope",
    "VectorSearchMemoriesDeviceScope",
    "WebhookConfig",
    "WebhookDeleted",
    "WebhookPut",
    "WouldEnd",
)
