from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.v3_memory import V3Memory
from ...types import UNSET, Response, Unset


def _get_kwargs(
    memory_id: str,
    *,
    value: bool | Unset = True,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["value"] = value

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v3/memories/{memory_id}/review".format(
            memory_id=quote(str(memory_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | V3Memory | None:
    if response.status_code == 200:
        response_200 = V3Memory.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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
) -> Response[Error | V3Memory]:
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
    value: bool | Unset = True,
) -> Response[Error | V3Memory]:
    """Record the user's own review

     Deprecated (kept for the original system's clients): use PATCH /v1/memories/{memory_id} (a JSON
    body: content, visibility, category, reviewed).

    Args:
        memory_id (str):
        value (bool | Unset):  Default: True.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | V3Memory]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        value=value,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    value: bool | Unset = True,
) -> Error | V3Memory | None:
    """Record the user's own review

     Deprecated (kept for the original system's clients): use PATCH /v1/memories/{memory_id} (a JSON
    body: content, visibility, category, reviewed).

    Args:
        memory_id (str):
        value (bool | Unset):  Default: True.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | V3Memory
    """

    return sync_detailed(
        memory_id=memory_id,
        client=client,
        value=value,
    ).parsed


async def asyncio_detailed(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    value: bool | Unset = True,
) -> Response[Error | V3Memory]:
    """Record the user's own review

     Deprecated (kept for the original system's clients): use PATCH /v1/memories/{memory_id} (a JSON
    body: content, visibility, category, reviewed).

    Args:
        memory_id (str):
        value (bool | Unset):  Default: True.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | V3Memory]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        value=value,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    value: bool | Unset = True,
) -> Error | V3Memory | None:
    """Record the user's own review

     Deprecated (kept for the original system's clients): use PATCH /v1/memories/{memory_id} (a JSON
    body: content, visibility, category, reviewed).

    Args:
        memory_id (str):
        value (bool | Unset):  Default: True.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | V3Memory
    """

    return (
        await asyncio_detailed(
            memory_id=memory_id,
            client=client,
            value=value,
        )
    ).parsed
