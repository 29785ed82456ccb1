from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.deletion_receipt import DeletionReceipt
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    receipt_id: str,
    *,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/deletions/{receipt_id}".format(
            receipt_id=quote(str(receipt_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeletionReceipt | Error | None:
    if response.status_code == 200:
        response_200 = DeletionReceipt.from_dict(response.json())

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
) -> Response[DeletionReceipt | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    receipt_id: str,
    *,
    client: AuthenticatedClient,
    x_strata_user: str | Unset = UNSET,
) -> Response[DeletionReceipt | Error]:
    """A deletion receipt: when each store confirmed the removal (only the owner's; kept 30 days; an ID
    token or a personal key, read scope)

    Args:
        receipt_id (str):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletionReceipt | Error]
    """

    kwargs = _get_kwargs(
        receipt_id=receipt_id,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    receipt_id: str,
    *,
    client: AuthenticatedClient,
    x_strata_user: str | Unset = UNSET,
) -> DeletionReceipt | Error | None:
    """A deletion receipt: when each store confirmed the removal (only the owner's; kept 30 days; an ID
    token or a personal key, read scope)

    Args:
        receipt_id (str):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletionReceipt | Error
    """

    return sync_detailed(
        receipt_id=receipt_id,
        client=client,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    receipt_id: str,
    *,
    client: AuthenticatedClient,
    x_strata_user: str | Unset = UNSET,
) -> Response[DeletionReceipt | Error]:
    """A deletion receipt: when each store confirmed the removal (only the owner's; kept 30 days; an ID
    token or a personal key, read scope)

    Args:
        receipt_id (str):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletionReceipt | Error]
    """

    kwargs = _get_kwargs(
        receipt_id=receipt_id,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    receipt_id: str,
    *,
    client: AuthenticatedClient,
    x_strata_user: str | Unset = UNSET,
) -> DeletionReceipt | Error | None:
    """A deletion receipt: when each store confirmed the removal (only the owner's; kept 30 days; an ID
    token or a personal key, read scope)

    Args:
        receipt_id (str):
        x_strata_user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletionReceipt | Error
    """

    return (
        await asyncio_detailed(
            receipt_id=receipt_id,
            client=client,
            x_strata_user=x_strata_user,
        )
    ).parsed
