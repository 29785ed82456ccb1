from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.list_mcp_memories_device_scope import ListMcpMemoriesDeviceScope
from ...models.mcp_memory import McpMemory
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 25,
    offset: int | Unset = 0,
    categories: list[str] | Unset = UNSET,
    q: str | Unset = UNSET,
    device_scope: ListMcpMemoriesDeviceScope | Unset = ListMcpMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["offset"] = offset

    json_categories: list[str] | Unset = UNSET
    if not isinstance(categories, Unset):
        json_categories = categories

    params["categories"] = json_categories

    params["q"] = q

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
        "method": "get",
        "url": "/v1/mcp/memories",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | list[McpMemory] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for componentsschemas_mcp_memory_array_item_data in _response_200:
            componentsschemas_mcp_memory_array_item = McpMemory.from_dict(
                componentsschemas_mcp_memory_array_item_data
            )

            response_200.append(componentsschemas_mcp_memory_array_item)

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

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | list[McpMemory]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 25,
    offset: int | Unset = 0,
    categories: list[str] | Unset = UNSET,
    q: str | Unset = UNSET,
    device_scope: ListMcpMemoriesDeviceScope | Unset = ListMcpMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | list[McpMemory]]:
    """MCP adapter: memories (a search when q is given), compact

     Deprecated (kept for the original system's clients): use GET /v1/memories or GET
    /v1/memories/hybrid-search (/mcp's list_memories and search_memories with a personal key).

    Args:
        limit (int | Unset):  Default: 25.
        offset (int | Unset):  Default: 0.
        categories (list[str] | Unset):
        q (str | Unset):
        device_scope (ListMcpMemoriesDeviceScope | Unset):  Default:
            ListMcpMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | list[McpMemory]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        categories=categories,
        q=q,
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
    limit: int | Unset = 25,
    offset: int | Unset = 0,
    categories: list[str] | Unset = UNSET,
    q: str | Unset = UNSET,
    device_scope: ListMcpMemoriesDeviceScope | Unset = ListMcpMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | list[McpMemory] | None:
    """MCP adapter: memories (a search when q is given), compact

     Deprecated (kept for the original system's clients): use GET /v1/memories or GET
    /v1/memories/hybrid-search (/mcp's list_memories and search_memories with a personal key).

    Args:
        limit (int | Unset):  Default: 25.
        offset (int | Unset):  Default: 0.
        categories (list[str] | Unset):
        q (str | Unset):
        device_scope (ListMcpMemoriesDeviceScope | Unset):  Default:
            ListMcpMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | list[McpMemory]
    """

    return sync_detailed(
        client=client,
        limit=limit,
        offset=offset,
        categories=categories,
        q=q,
        device_scope=device_scope,
        device_ids=device_ids,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 25,
    offset: int | Unset = 0,
    categories: list[str] | Unset = UNSET,
    q: str | Unset = UNSET,
    device_scope: ListMcpMemoriesDeviceScope | Unset = ListMcpMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | list[McpMemory]]:
    """MCP adapter: memories (a search when q is given), compact

     Deprecated (kept for the original system's clients): use GET /v1/memories or GET
    /v1/memories/hybrid-search (/mcp's list_memories and search_memories with a personal key).

    Args:
        limit (int | Unset):  Default: 25.
        offset (int | Unset):  Default: 0.
        categories (list[str] | Unset):
        q (str | Unset):
        device_scope (ListMcpMemoriesDeviceScope | Unset):  Default:
            ListMcpMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | list[McpMemory]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        categories=categories,
        q=q,
        device_scope=device_scope,
        device_ids=device_ids,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 25,
    offset: int | Unset = 0,
    categories: list[str] | Unset = UNSET,
    q: str | Unset = UNSET,
    device_scope: ListMcpMemoriesDeviceScope | Unset = ListMcpMemoriesDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | list[McpMemory] | None:
    """MCP adapter: memories (a search when q is given), compact

     Deprecated (kept for the original system's clients): use GET /v1/memories or GET
    /v1/memories/hybrid-search (/mcp's list_memories and search_memories with a personal key).

    Args:
        limit (int | Unset):  Default: 25.
        offset (int | Unset):  Default: 0.
        categories (list[str] | Unset):
        q (str | Unset):
        device_scope (ListMcpMemoriesDeviceScope | Unset):  Default:
            ListMcpMemoriesDeviceScope.ALL.
        device_ids (list[str] | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | list[McpMemory]
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            offset=offset,
            categories=categories,
            q=q,
            device_scope=device_scope,
            device_ids=device_ids,
            x_strata_user=x_strata_user,
        )
    ).parsed
