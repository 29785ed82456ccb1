from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.conversation_create import ConversationCreate
from ...models.conversation_created import ConversationCreated
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: ConversationCreate,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/conversations",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ConversationCreated | Error | None:
    if response.status_code == 201:
        response_201 = ConversationCreated.from_dict(response.json())

        return response_201

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

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

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
) -> Response[ConversationCreated | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ConversationCreate,
    x_strata_user: str | Unset = UNSET,
) -> Response[ConversationCreated | Error]:
    """Create a completed conversation (same path as a Firestore write)

    Args:
        x_strata_user (str | Unset):
        body (ConversationCreate): A completed conversation, with the fields apps write
            (docs/data-model.md, the conversation document). It must carry
            something to capture: at least one transcript segment or ``external_data.text``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConversationCreated | Error]
    """

    kwargs = _get_kwargs(
        body=body,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: ConversationCreate,
    x_strata_user: str | Unset = UNSET,
) -> ConversationCreated | Error | None:
    """Create a completed conversation (same path as a Firestore write)

    Args:
        x_strata_user (str | Unset):
        body (ConversationCreate): A completed conversation, with the fields apps write
            (docs/data-model.md, the conversation document). It must carry
            something to capture: at least one transcript segment or ``external_data.text``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConversationCreated | Error
    """

    return sync_detailed(
        client=client,
        body=body,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ConversationCreate,
    x_strata_user: str | Unset = UNSET,
) -> Response[ConversationCreated | Error]:
    """Create a completed conversation (same path as a Firestore write)

    Args:
        x_strata_user (str | Unset):
        body (ConversationCreate): A completed conversation, with the fields apps write
            (docs/data-model.md, the conversation document). It must carry
            something to capture: at least one transcript segment or ``external_data.text``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConversationCreated | Error]
    """

    kwargs = _get_kwargs(
        body=body,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: ConversationCreate,
    x_strata_user: str | Unset = UNSET,
) -> ConversationCreated | Error | None:
    """Create a completed conversation (same path as a Firestore write)

    Args:
        x_strata_user (str | Unset):
        body (ConversationCreate): A completed conversation, with the fields apps write
            (docs/data-model.md, the conversation document). It must carry
            something to capture: at least one transcript segment or ``external_data.text``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConversationCreated | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            x_strata_user=x_strata_user,
        )
    ).parsed
