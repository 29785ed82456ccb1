from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.history import History
from ...types import UNSET, Response, Unset


def _get_kwargs(
    memory_id: str,
    *,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/memories/{memory_id}/history".format(
            memory_id=quote(str(memory_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | History | None:
    if response.status_code == 200:
        response_200 = History.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | History]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | History]:
    """The ledger commits that touched a memory, oldest first

    Args:
        memory_id (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | History]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        limit=limit,
        cursor=cursor,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | History | None:
    """The ledger commits that touched a memory, oldest first

    Args:
        memory_id (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | History
    """

    return sync_detailed(
        memory_id=memory_id,
        client=client,
        limit=limit,
        cursor=cursor,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | History]:
    """The ledger commits that touched a memory, oldest first

    Args:
        memory_id (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | History]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        limit=limit,
        cursor=cursor,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    x_strata_user: str | Unset = UNSET,
) -> Error | History | None:
    """The ledger commits that touched a memory, oldest first

    Args:
        memory_id (str):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | History
    """

    return (
        await asyncio_detailed(
            memory_id=memory_id,
            client=client,
            limit=limit,
            cursor=cursor,
            x_strata_user=x_strata_user,
        )
    ).parsed
