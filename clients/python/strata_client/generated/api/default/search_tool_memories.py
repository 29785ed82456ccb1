from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.search_tool_memories_device_scope import SearchToolMemoriesDeviceScope
from ...models.tool_result import ToolResult
from ...models.tool_search import ToolSearch
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: ToolSearch,
    device_scope: SearchToolMemoriesDeviceScope | Unset = SearchToolMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    params: dict[str, Any] = {}

    json_device_scope: str | Unset = UNSET
    if not isinstance(device_scope, Unset):
        json_device_scope = device_scope.value

    params["device_scope"] = json_device_scope

    json_device_ids: list[str] | Unset = UNSET
    if not isinstance(device_ids, Unset):
        json_device_ids = device_ids

    params["device_ids"] = json_device_ids

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/tools/memories/search",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ToolResult | None:
    if response.status_code == 200:
        response_200 = ToolResult.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | ToolResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ToolSearch,
    device_scope: SearchToolMemoriesDeviceScope | Unset = SearchToolMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | ToolResult]:
    """Tool adapter: search the user's memories

     Deprecated (kept for the original system's clients): use GET /v1/memories/hybrid-search (/mcp's
    search_memories with a personal key).

    Args:
        device_scope (SearchToolMemoriesDeviceScope | Unset):  Default:
            SearchToolMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):
        body (ToolSearch): ``POST /v1/tools/memories/search`` (the original's tool request).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ToolResult]
    """

    kwargs = _get_kwargs(
        body=body,
        device_scope=device_scope,
        device_ids=device_ids,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ToolSearch,
    device_scope: SearchToolMemoriesDeviceScope | Unset = SearchToolMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | ToolResult | None:
    """Tool adapter: search the user's memories

     Deprecated (kept for the original system's clients): use GET /v1/memories/hybrid-search (/mcp's
    search_memories with a personal key).

    Args:
        device_scope (SearchToolMemoriesDeviceScope | Unset):  Default:
            SearchToolMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):
        body (ToolSearch): ``POST /v1/tools/memories/search`` (the original's tool request).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ToolResult
    """

    return sync_detailed(
        client=client,
        body=body,
        device_scope=device_scope,
        device_ids=device_ids,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ToolSearch,
    device_scope: SearchToolMemoriesDeviceScope | Unset = SearchToolMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | ToolResult]:
    """Tool adapter: search the user's memories

     Deprecated (kept for the original system's clients): use GET /v1/memories/hybrid-search (/mcp's
    search_memories with a personal key).

    Args:
        device_scope (SearchToolMemoriesDeviceScope | Unset):  Default:
            SearchToolMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):
        body (ToolSearch): ``POST /v1/tools/memories/search`` (the original's tool request).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ToolResult]
    """

    kwargs = _get_kwargs(
        body=body,
        device_scope=device_scope,
        device_ids=device_ids,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ToolSearch,
    device_scope: SearchToolMemoriesDeviceScope | Unset = SearchToolMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | ToolResult | None:
    """Tool adapter: search the user's memories

     Deprecated (kept for the original system's clients): use GET /v1/memories/hybrid-search (/mcp's
    search_memories with a personal key).

    Args:
        device_scope (SearchToolMemoriesDeviceScope | Unset):  Default:
            SearchToolMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):
        body (ToolSearch): ``POST /v1/tools/memories/search`` (the original's tool request).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ToolResult
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            device_scope=device_scope,
            device_ids=device_ids,
            x_strata_user=x_strata_user,
        )
    ).parsed
