from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.search_archive_device_scope import SearchArchiveDeviceScope
from ...models.search_page import SearchPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    q: str | Unset = UNSET,
    query: str | Unset = UNSET,
    limit: int | Unset = 10,
    device_scope: SearchArchiveDeviceScope | Unset = SearchArchiveDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    as_of: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    params: dict[str, Any] = {}

    params["q"] = q

    params["query"] = query

    params["limit"] = limit

    json_device_scope: str | Unset = UNSET
    if not isinstance(device_scope, Unset):
        json_device_scope = device_scope.value

    params["device_scope"] = json_device_scope

    json_device_ids: list[str] | Unset = UNSET
    if not isinstance(device_ids, Unset):
        json_device_ids = device_ids

    params["device_ids"] = json_device_ids

    params["as_of"] = as_of

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/memories/archive/search",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | SearchPage | None:
    if response.status_code == 200:
        response_200 = SearchPage.from_dict(response.json())

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
) -> Response[Error | SearchPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    query: str | Unset = UNSET,
    limit: int | Unset = 10,
    device_scope: SearchArchiveDeviceScope | Unset = SearchArchiveDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    as_of: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | SearchPage]:
    """Search the Archive layer only

    Args:
        q (str | Unset):
        query (str | Unset):
        limit (int | Unset):  Default: 10.
        device_scope (SearchArchiveDeviceScope | Unset):  Default: SearchArchiveDeviceScope.ALL.
        device_ids (list[str] | Unset):
        as_of (str | Unset):
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SearchPage]
    """

    kwargs = _get_kwargs(
        q=q,
        query=query,
        limit=limit,
        device_scope=device_scope,
        device_ids=device_ids,
        as_of=as_of,
        cursor=cursor,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    query: str | Unset = UNSET,
    limit: int | Unset = 10,
    device_scope: SearchArchiveDeviceScope | Unset = SearchArchiveDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    as_of: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | SearchPage | None:
    """Search the Archive layer only

    Args:
        q (str | Unset):
        query (str | Unset):
        limit (int | Unset):  Default: 10.
        device_scope (SearchArchiveDeviceScope | Unset):  Default: SearchArchiveDeviceScope.ALL.
        device_ids (list[str] | Unset):
        as_of (str | Unset):
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SearchPage
    """

    return sync_detailed(
        client=client,
        q=q,
        query=query,
        limit=limit,
        device_scope=device_scope,
        device_ids=device_ids,
        as_of=as_of,
        cursor=cursor,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    query: str | Unset = UNSET,
    limit: int | Unset = 10,
    device_scope: SearchArchiveDeviceScope | Unset = SearchArchiveDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    as_of: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | SearchPage]:
    """Search the Archive layer only

    Args:
        q (str | Unset):
        query (str | Unset):
        limit (int | Unset):  Default: 10.
        device_scope (SearchArchiveDeviceScope | Unset):  Default: SearchArchiveDeviceScope.ALL.
        device_ids (list[str] | Unset):
        as_of (str | Unset):
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SearchPage]
    """

    kwargs = _get_kwargs(
        q=q,
        query=query,
        limit=limit,
        device_scope=device_scope,
        device_ids=device_ids,
        as_of=as_of,
        cursor=cursor,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    q: str | Unset = UNSET,
    query: str | Unset = UNSET,
    limit: int | Unset = 10,
    device_scope: SearchArchiveDeviceScope | Unset = SearchArchiveDeviceScope.ALL,
    device_ids: list[str] | Unset = UNSET,
    as_of: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | SearchPage | None:
    """Search the Archive layer only

    Args:
        q (str | Unset):
        query (str | Unset):
        limit (int | Unset):  Default: 10.
        device_scope (SearchArchiveDeviceScope | Unset):  Default: SearchArchiveDeviceScope.ALL.
        device_ids (list[str] | Unset):
        as_of (str | Unset):
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SearchPage
    """

    return (
        await asyncio_detailed(
            client=client,
            q=q,
            query=query,
            limit=limit,
            device_scope=device_scope,
            device_ids=device_ids,
            as_of=as_of,
            cursor=cursor,
            x_strata_user=x_strata_user,
        )
    ).parsed
