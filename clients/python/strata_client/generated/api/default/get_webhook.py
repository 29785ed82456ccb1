from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.webhook_config import WebhookConfig
from ...types import Response


def _get_kwargs(
    webhook_type: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/users/developer/webhooks/{webhook_type}".format(
            webhook_type=quote(str(webhook_type), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | WebhookConfig | None:
    if response.status_code == 200:
        response_200 = WebhookConfig.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | WebhookConfig]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_type: str,
    *,
    client: AuthenticatedClient,
) -> Response[Error | WebhookConfig]:
    """The user's developer webhook of this type (url null when none is set)

    Args:
        webhook_type (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WebhookConfig]
    """

    kwargs = _get_kwargs(
        webhook_type=webhook_type,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_type: str,
    *,
    client: AuthenticatedClient,
) -> Error | WebhookConfig | None:
    """The user's developer webhook of this type (url null when none is set)

    Args:
        webhook_type (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WebhookConfig
    """

    return sync_detailed(
        webhook_type=webhook_type,
        client=client,
    ).parsed


async def asyncio_detailed(
    webhook_type: str,
    *,
    client: AuthenticatedClient,
) -> Response[Error | WebhookConfig]:
    """The user's developer webhook of this type (url null when none is set)

    Args:
        webhook_type (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WebhookConfig]
    """

    kwargs = _get_kwargs(
        webhook_type=webhook_type,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_type: str,
    *,
    client: AuthenticatedClient,
) -> Error | WebhookConfig | None:
    """The user's developer webhook of this type (url null when none is set)

    Args:
        webhook_type (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WebhookConfig
    """

    return (
        await asyncio_detailed(
            webhook_type=webhook_type,
            client=client,
        )
    ).parsed
