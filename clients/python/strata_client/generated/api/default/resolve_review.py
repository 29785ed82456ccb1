from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.review_resolve import ReviewResolve
from ...models.review_resolved import ReviewResolved
from ...types import UNSET, Response, Unset


def _get_kwargs(
    review_id: str,
    *,
    body: ReviewResolve,
    x_strata_user: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_strata_user, Unset):
        headers["X-Strata-User"] = x_strata_user

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/review-queue/{review_id}/resolve".format(
            review_id=quote(str(review_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ReviewResolved | None:
    if response.status_code == 200:
        response_200 = ReviewResolved.from_dict(response.json())

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
) -> Response[Error | ReviewResolved]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    review_id: str,
    *,
    client: AuthenticatedClient,
    body: ReviewResolve,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | ReviewResolved]:
    """Resolve a review: accept, keep_both, reject or correct

    Args:
        review_id (str):
        x_strata_user (str | Unset):
        body (ReviewResolve):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReviewResolved]
    """

    kwargs = _get_kwargs(
        review_id=review_id,
        body=body,
        x_strata_user=x_strata_user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    review_id: str,
    *,
    client: AuthenticatedClient,
    body: ReviewResolve,
    x_strata_user: str | Unset = UNSET,
) -> Error | ReviewResolved | None:
    """Resolve a review: accept, keep_both, reject or correct

    Args:
        review_id (str):
        x_strata_user (str | Unset):
        body (ReviewResolve):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReviewResolved
    """

    return sync_detailed(
        review_id=review_id,
        client=client,
        body=body,
        x_strata_user=x_strata_user,
    ).parsed


async def asyncio_detailed(
    review_id: str,
    *,
    client: AuthenticatedClient,
    body: ReviewResolve,
    x_strata_user: str | Unset = UNSET,
) -> Response[Error | ReviewResolved]:
    """Resolve a review: accept, keep_both, reject or correct

    Args:
        review_id (str):
        x_strata_user (str | Unset):
        body (ReviewResolve):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReviewResolved]
    """

    kwargs = _get_kwargs(
        review_id=review_id,
        body=body,
        x_strata_user=x_strata_user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    review_id: str,
    *,
    client: AuthenticatedClient,
    body: ReviewResolve,
    x_strata_user: str | Unset = UNSET,
) -> Error | ReviewResolved | None:
    """Resolve a review: accept, keep_both, reject or correct

    Args:
        review_id (str):
        x_strata_user (str | Unset):
        body (ReviewResolve):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReviewResolved
    """

    return (
        await asyncio_detailed(
            review_id=review_id,
            client=client,
            body=body,
            x_strata_user=x_strata_user,
        )
    ).parsed
