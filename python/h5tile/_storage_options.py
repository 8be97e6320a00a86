"""``storage_options``: fsspec's (s3fs's) way of giving S3 credentials, endpoint and region, as
xarray and fsspec users pass them, mapped onto the AWS variables h5tile's S3 reads resolve with.

h5tile reads S3 settings from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_REGION``,
``AWS_ENDPOINT_URL``, ``AWS_NO_SIGN_REQUEST``, AWS profiles: docs/REMOTE.md). ``storage_options``
given for one ``s3://`` URL replace them for that URL, in this process (the core's
``set_s3_settings``, which keeps one set per URL: other options for a URL that an open File reads
with are refused, see apply): its keys say which variables, and a set of credentials replaces the
environment's whole (``anon=True`` drops the environment's keys; ``key``/``secret`` drop its
profile). Keys that s3fs takes and h5tile has no meaning for are refused by name, as are
``storage_options`` for a local path or an http(s) URL (whose signature, if any, is in the URL).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Mapping, Optional

from . import _arguments as _args
from . import _h5tile
from ._h5tile import InvalidArgumentError

_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_NO_SIGN_REQUEST",
                "AWS_PROFILE")
_TAKEN = ("anon", "key", "secret", "token", "username", "password", "profile", "endpoint_url", "region_name",
          "client_kwargs")
_CLIENT_KWARGS = ("endpoint_url", "region_name", "aws_access_key_id", "aws_secret_access_key", "aws_session_token")


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options[{name!r}] must be a non-empty str, not {type(value).__name__}"))
    return value


def s3_settings(storage_options: Optional[Mapping[str, Any]], url: str) -> dict:
    """The AWS variables `storage_options` (s3fs's keys) set for the ``s3://`` URL `url`: a dict
    of variable -> value, "" for one unset; {} for no options. InvalidArgumentError naming the key
    for what h5tile does not take, and for options given with a local path or an http(s) URL."""
    if not storage_options:
        return {}
    if not isinstance(storage_options, Mapping):
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options must be a dict (fsspec's), not {type(storage_options).__name__}"))
    shown = _args.redacted(url)
    if not shown.startswith("s3://"):
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options {sorted(storage_options)} given for '{shown}': h5tile takes them for s3:// URLs "
            "(credentials, endpoint, region); a local path needs none, and an http(s) URL carries its own "
            "signature (a presigned URL) or none"))
    options = dict(storage_options)
    client = options.pop("client_kwargs", None) or {}
    if not isinstance(client, Mapping):
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options['client_kwargs'] must be a dict, not {type(client).__name__}"))
    unknown = sorted(set(options) - set(_TAKEN)) + [f"client_kwargs.{k}" for k in sorted(set(client) -
                                                                                          set(_CLIENT_KWARGS))]
    if unknown:
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options for '{shown}': h5tile does not take {', '.join(map(repr, unknown))} (it takes "
            f"{', '.join(_TAKEN[:-1])} and client_kwargs {', '.join(_CLIENT_KWARGS)}; other settings of h5tile's "
            "reads are h5tile.settings: docs/REMOTE.md)"))
    for ours, theirs in (("key", "aws_access_key_id"), ("secret", "aws_secret_access_key"),
                         ("token", "aws_session_token"), ("endpoint_url", "endpoint_url"),
                         ("region_name", "region_name")):
        if theirs in client:
            if ours in options and options[ours] != client[theirs]:
                raise InvalidArgumentError(_args.without_secrets(
                    f"storage_options gives {ours!r} and client_kwargs[{theirs!r}] different values: give one"))
            options[ours] = client[theirs]
    for alias, name in (("username", "key"), ("password", "secret")):  # s3fs's aliases
        if alias in options:
            if name in options and options[name] != options[alias]:
                raise InvalidArgumentError(_args.without_secrets(
                    f"storage_options gives {name!r} and its alias {alias!r} different values"))
            options[name] = options.pop(alias)
    settings: dict = {}
    anon = options.pop("anon", None)
    if anon is not None and not isinstance(anon, bool):
        raise InvalidArgumentError(_args.without_secrets(
            f"storage_options['anon'] must be True or False, not {type(anon).__name__}"))
    key, secret, token = options.pop("key", None), options.pop("secret", None), options.pop("token", None)
    profile = options.pop("profile", None)
    if anon and (key is not None or secret is not None or token is not None or profile is not None):
        raise InvalidArgumentError("storage_options: anon=True (unsigned requests) with credentials "
                                   "(key, secret, token or profile): give one or the other")
    if (key is None) != (secret is None):
        raise InvalidArgumentError("storage_options: 'key' and 'secret' go together (an access key id and its "
                                   "secret); one of them is missing")
    if token is not None and key is None:
        raise InvalidArgumentError("storage_options: 'token' (a session token) goes with 'key' and 'secret'")
    if key is not None and profile is not None:
        raise InvalidArgumentError("storage_options: 'key'/'secret' and 'profile' name two credentials: give one")
    if anon:
        settings.update({name: "" for name in _CREDENTIALS})
        settings["AWS_NO_SIGN_REQUEST"] = "YES"
    elif key is not None:
        settings.update({name: "" for name in _CREDENTIALS})
        settings["AWS_ACCESS_KEY_ID"] = _text("key", key)
        settings["AWS_SECRET_ACCESS_KEY"] = _text("secret", secret)
        if token is not None:
            settings["AWS_SESSION_TOKEN"] = _text("token", token)
    elif profile is not None:
        settings.update({name: "" for name in _CREDENTIALS})
        settings["AWS_PROFILE"] = _text("profile", profile)
    elif anon is False:
        settings["AWS_NO_SIGN_REQUEST"] = ""  # signed, with the environment's credentials
    endpoint = options.pop("endpoint_url", None)
    if endpoint is not None:
        settings.update({"AWS_ENDPOINT_URL": _text("endpoint_url", endpoint), "AWS_ENDPOINT_URL_S3": ""})
    region = options.pop("region_name", None)
    if region is not None:
        settings.update({"AWS_REGION": _text("region_name", region), "AWS_DEFAULT_REGION": ""})
    return settings


# URL -> (its settings, the Files that gave them): one set of settings per URL in a process.
_given: dict = {}
_given_lock = threading.Lock()


def apply(settings: dict, url: str, owner: Any = None) -> None:
    """Makes `settings` (s3_settings's) those of `url` in this process (`owner`: the File that
    gives them); nothing for none. The core keeps one set per URL for the whole process: other
    settings for a URL that an open File (or a Dataset opened from it) reads with are refused, since
    its later reads would go where the new ones say."""
    if not settings:
        return
    with _given_lock:
        given, owners = _given.get(url, (None, None))
        if given is not None and given != settings:
            if any(getattr(ref(), "_open", False) for ref in owners):
                raise InvalidArgumentError(_args.without_secrets(
                    f"'{_args.redacted(url)}' is open in this process with other storage_options: h5tile keeps one "
                    "set of S3 settings for a URL in a process (its reads would go where the new ones say); close the "
                    "other Files of it (and Datasets opened from it) first, or give the same options"))
            given = None
        if given is None:
            _given[url] = (dict(settings), [])
        if owner is not None:  # weak references (not a WeakSet: a File is hashed by what it has not set yet)
            owners = _given[url][1]
            owners[:] = [ref for ref in owners if ref() is not None] + [weakref.ref(owner)]
        _h5tile.set_s3_settings(url, settings)  # the core names the object as its reads do
