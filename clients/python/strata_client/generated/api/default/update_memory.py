from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.memory import Memory
from ...models.memory_edit import MemoryEdit
from ...types import UNSET, Response, Unset


def _get_kwargs(
    memory_id: str,
    *,
    body: MemoryEdit,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/memories/{memory_id}".format(
            memory_id=quote(str(memory_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Memory | None:
    if response.status_code == 200:
        response_200 = Memory.from_dict(response.json())

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
) -> Response[Error | Memory]:
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
    body: MemoryEdit,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | Memory]:
    """Edit a memory: content (a new revision, back to Short-term), visibility, category, the user's review
    flag

    Args:
        memory_id (str):
        x_strata_user (str | Unset):
        body (MemoryEdit): ``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A
            content edit is a new
            revision back in Short-term; visibility, category and the review flag are metadata edits.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Memory]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        body=body,
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
    body: MemoryEdit,
    x_strata_user: str | Unset = UNSET,
) -> Error | Memory | None:
    """Edit a memory: content (a new revision, back to Short-term), visibility, category, the user's review
    flag

    Args:
        memory_id (str):
        x_strata_user (str | Unset):
        body (MemoryEdit): ``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A
            content edit is a new
            revision back in Short-term; visibility, category and the review flag are metadata edits.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Memory
    """

    return sync_detailed(
        memory_id=memory_id,
        client=client,
        body=body,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    body: MemoryEdit,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | Memory]:
    """Edit a memory: content (a new revision, back to Short-term), visibility, category, the user's review
    flag

    Args:
        memory_id (str):
        x_strata_user (str | Unset):
        body (MemoryEdit): ``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A
            content edit is a new
            revision back in Short-term; visibility, category and the review flag are metadata edits.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Memory]
    """

    kwargs = _get_kwargs(
        memory_id=memory_id,
        body=body,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    memory_id: str,
    *,
    client: AuthenticatedClient,
    body: MemoryEdit,
    x_strata_user: str | Unset = UNSET,
) -> Error | Memory | None:
    """Edit a memory: content (a new revision, back to Short-term), visibility, category, the user's review
    flag

    Args:
        memory_id (str):
        x_strata_user (str | Unset):
        body (MemoryEdit): ``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A
            content edit is a new
            revision back in Short-term; visibility, category and the review flag are metadata edits.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Memory
    """

    return (
        await asyncio_detailed(
            memory_id=memory_id,
            client=client,
            body=body,
            x_strata_user=x_strata_user,
        )
    ).parsed
