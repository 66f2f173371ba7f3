"""Talking to a cluster: the client (retries with the transport's backoff), a fast first check, and client errors
turned into one-line messages that say what to do; URLs are shown without credentials."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from gear.store.base import StoreError

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

    from gear.config import Settings

def safe_url(url: str) -> str:
    """The URL without any user:password part, for messages and the manifest."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return getter() if getter else str(value)


def connect(url: str, settings: Settings | None = None, *, request_timeout: float = 30.0,
            max_retries: int = 3) -> Elasticsearch:
    """A client with retries on timeouts and connection errors (with the transport's backoff); credentials from
    settings (API key preferred over user/password), never logged."""
    from elasticsearch import Elasticsearch

    kwargs: dict[str, Any] = {"request_timeout": request_timeout, "max_retries": max_retries,
                              "retry_on_timeout": True, "retry_on_status": (502, 503, 504)}
    if settings is not None:
        api_key = _secret(settings.es_api_key)
        if api_key:
            kwargs["api_key"] = api_key
        elif settings.es_username:
            kwargs["basic_auth"] = (settings.es_username, _secret(settings.es_password) or "")
        if settings.es_ca_certs:
            kwargs["ca_certs"] = str(settings.es_ca_certs)
    try:
        return Elasticsearch(url, **kwargs)
    except (ValueError, TypeError) as exc:
        raise StoreError(f"invalid Elasticsearch URL {safe_url(url)!r} ({type(exc).__name__}); set GEAR_ES_URL to "
                          "something like http://127.0.0.1:9200") from None


def check_cluster(client: Elasticsearch, url: str, timeout: float = 10.0) -> dict[str, Any]:
    """One quick request (`timeout` s, one retry) so a wrong URL fails fast; returns the server's version info."""
    from elasticsearch import NotFoundError, UnsupportedProductError

    try:
        with es_errors(url, "connecting"):
            return dict(client.options(request_timeout=timeout, max_retries=1).info())
    except StoreError as exc:
        if isinstance(exc.__context__, NotFoundError):
            raise StoreError(f"{safe_url(url)} does not answer like Elasticsearch (HTTP 404 on /); check GEAR_ES_URL")\
                from None
        raise
    except UnsupportedProductError:
        raise StoreError(f"{safe_url(url)} is not an Elasticsearch server the client supports; check GEAR_ES_URL")\
            from None


@contextmanager
def es_errors(url: str, what: str, *, hint_missing: str = "run `gear migrate INDEX_DIR --to elasticsearch`"
              ) -> Iterator[None]:
    """Turn client exceptions into one-line StoreError messages that say what to do; never include credentials."""
    from elasticsearch import (
        ApiError,
        AuthenticationException,
        AuthorizationException,
        ConnectionError,
        ConnectionTimeout,
        NotFoundError,
        SerializationError,
        TransportError,
    )

    where = safe_url(url)
    try:
        yield
    except StoreError:
        raise
    except ConnectionTimeout:
        raise StoreError(f"Elasticsearch at {where} timed out while {what} (after retries); check the cluster's "
                          "health and load, or retry later") from None
    except ConnectionError as exc:
        reason = "TLS/certificate problem" if "ssl" in str(exc).lower() or "certificate" in str(exc).lower() \
            else "connection failed"
        raise StoreError(f"cannot reach Elasticsearch at {where} while {what} ({reason}); check GEAR_ES_URL, "
                          "that the cluster is running, and GEAR_ES_CA_CERTS for https") from None
    except AuthenticationException:
        raise StoreError(f"Elasticsearch at {where} rejected the credentials while {what}; set GEAR_ES_API_KEY or "
                          "GEAR_ES_USERNAME and GEAR_ES_PASSWORD") from None
    except AuthorizationException:
        raise StoreError(f"Elasticsearch at {where}: the configured user may not do this ({what}); grant it "
                          "read (and for migrate: create_index, write, manage aliases) on the gear indices") from None
    except NotFoundError as exc:
        index = _error_index(exc)
        raise StoreError(f"Elasticsearch index {index or '?'} not found at {where} while {what}; {hint_missing}") \
            from None
    except ApiError as exc:
        raise StoreError(f"Elasticsearch at {where} refused {what}: {exc.meta.status} {_error_reason(exc)}") \
            from None
    except (TransportError, SerializationError) as exc:
        raise StoreError(f"Elasticsearch at {where} failed while {what}: {type(exc).__name__}") from None


def _error_index(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return err.get("index") or (err.get("root_cause") or [{}])[0].get("index")
    return None


def _error_reason(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return f"{err.get('type', '')}: {err.get('reason', '')}"[:300]
    return str(getattr(exc, "message", type(exc).__name__))[:300]
