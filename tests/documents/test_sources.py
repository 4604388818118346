"""Source strings → documents (spec §3), without a network: forms, canonical form, host policy."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from werkbaum_core import ForbiddenSource, InvalidArgument
from werkbaum_core.stores.documents import DocumentRef, DocumentStore, looks_like_document
from werkbaum_core.stores.sources import document_in_uri, normalize_server

UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
DOC = f"https://plans.example/api/v1/documents/{UUID}"


class NoNetwork(httpx.BaseTransport):
    """Proves that parsing and refusing never reach the network."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.method} {request.url}")


def offline(*servers: str, allow_any_host: bool = True) -> DocumentStore:
    return DocumentStore(servers, allow_any_host=allow_any_host, transport=NoNetwork())


@pytest.mark.parametrize(
    "source",
    [
        DOC,
        DOC + "/",
        f"HTTPS://Plans.Example/api/v1/documents/{UUID.upper()}",
        f"https://plans.example:443/api/v1/documents/{UUID}",
        f"  {DOC}  ",
        DOC + "#section",
        f"https://editor.example/?live={DOC}",
        f"https://editor.example/?live={quote(DOC, safe='')}",
        f"https://editor.example/app/?server=x&live={quote(DOC, safe='')}",
        f"http://localhost:8137/?live={DOC}",
        UUID,
        UUID.upper(),
    ],
)
def test_every_form_names_the_same_document(source: str) -> None:
    with offline("https://plans.example") as store:
        assert looks_like_document(source)
        assert store.parse(source) == DocumentRef("https://plans.example", UUID)
        assert store.parse(source).url == DOC


def test_prefix_port_and_scheme_stay_part_of_the_server() -> None:
    with offline() as store:
        ref = store.parse(f"http://127.0.0.1:8080/sub/dir/api/v1/documents/{UUID}")
    assert ref.server == "http://127.0.0.1:8080/sub/dir"
    assert ref.url == f"http://127.0.0.1:8080/sub/dir/api/v1/documents/{UUID}"


def test_ipv6_host() -> None:
    with offline() as store:
        assert (
            store.parse(f"http://[::1]:9080/api/v1/documents/{UUID}").server == "http://[::1]:9080"
        )


@pytest.mark.parametrize(
    ("configured", "canonical"),
    [
        ("https://plans.example", "https://plans.example"),
        ("https://Plans.Example:443/", "https://plans.example"),
        ("https://plans.example/sub/", "https://plans.example/sub"),
        ("https://plans.example/sub/api/v1", "https://plans.example/sub"),
        ("http://127.0.0.1:8080/api/v1/", "http://127.0.0.1:8080"),
    ],
)
def test_configured_servers_are_canonical(configured: str, canonical: str) -> None:
    assert normalize_server(configured) == canonical


@pytest.mark.parametrize(
    "source",
    [
        "plan.werkbaum",
        "/abs/plan.werkbaum",
        "werkbaum://guide",
        f"ftp://plans.example/api/v1/documents/{UUID}",
        f"file:///api/v1/documents/{UUID}",
        "https://plans.example/",
        "https://plans.example/api/v1/info",
        "https://plans.example/api/v1/documents",
        f"https://plans.example/api/v1/documents/{UUID}/history",
        f"https://plans.example/api/v1/documents/{UUID}x",
        "https://plans.example/api/v1/documents/not-a-uuid",
        f"https://user:pw@plans.example/api/v1/documents/{UUID}",
        f"https://plans.example:99999/api/v1/documents/{UUID}",
        "https://editor.example/?live=https://plans.example/elsewhere",
        f"https://editor.example/?live=ftp://plans.example/api/v1/documents/{UUID}",
        UUID + "0",
        "",
    ],
)
def test_anything_else_is_invalid(source: str) -> None:
    assert not looks_like_document(source)
    with offline("https://plans.example") as store, pytest.raises(InvalidArgument):
        store.parse(source)


def test_bare_uuid_without_a_server_says_to_pass_server() -> None:
    with offline() as store, pytest.raises(InvalidArgument, match="--server"):
        store.parse(UUID)


def test_bare_uuid_uses_the_first_configured_server() -> None:
    with offline("https://a.example/x/", "https://b.example") as store:
        assert store.parse(UUID).url == f"https://a.example/x/api/v1/documents/{UUID}"


def test_local_server_accepts_any_host() -> None:
    with offline("https://plans.example") as store:
        assert store.parse(f"http://elsewhere.test/api/v1/documents/{UUID}").server == (
            "http://elsewhere.test"
        )


@pytest.mark.parametrize(
    "source",
    [
        f"https://evil.example/api/v1/documents/{UUID}",
        f"http://plans.example/api/v1/documents/{UUID}",  # other scheme
        f"https://plans.example:8443/api/v1/documents/{UUID}",  # other port
        f"https://plans.example/other/api/v1/documents/{UUID}",  # other prefix
        f"https://plans.example.evil.example/api/v1/documents/{UUID}",
        f"https://editor.example/?live=https://evil.example/api/v1/documents/{UUID}",
    ],
)
def test_remote_server_refuses_unconfigured_backends(source: str) -> None:
    with offline("https://plans.example", allow_any_host=False) as store:
        with pytest.raises(ForbiddenSource) as info:
            store.parse(source)
        assert info.value.to_json()["error"]["code"] == "forbidden_source"
        store.parse(DOC)  # the configured one is fine
        assert store.parse(f"https://editor.example/?live={DOC}").url == DOC


def test_remote_server_without_backends_refuses_every_document() -> None:
    with offline(allow_any_host=False) as store, pytest.raises(ForbiddenSource):
        store.parse(DOC)


def test_client_id_is_per_store_and_marked_mcp() -> None:
    with offline() as one, offline() as two:
        assert one.client_id.startswith("mcp-") and two.client_id.startswith("mcp-")
        assert one.client_id != two.client_id
        assert len(one.client_id) <= 64


@pytest.mark.parametrize(
    ("uri", "document"),
    [
        (f"werkbaum://doc/{quote(DOC, safe='')}", DOC),
        (f"werkbaum://doc/{DOC}", DOC),
        (f"werkbaum://doc/{UUID}", UUID),
        (f"WERKBAUM://doc/{UUID}", UUID),
        (
            f"werkbaum://doc/{quote(f'https://editor.example/?live={DOC}', safe='')}",
            f"https://editor.example/?live={DOC}",
        ),
        ("plan.werkbaum", None),
        (f"werkbaum://file/{UUID}", None),
        (DOC, None),
    ],
)
def test_a_document_resource_uri_names_its_document(uri: str, document: str | None) -> None:
    assert document_in_uri(uri) == document


@pytest.mark.parametrize(
    "uri", ["werkbaum://doc/", "werkbaum://doc/plan.werkbaum", "werkbaum://doc/%2Fetc%2Fpasswd"]
)
def test_a_document_resource_uri_never_names_a_file(uri: str) -> None:
    with pytest.raises(InvalidArgument, match="werkbaum://doc/ takes"):
        document_in_uri(uri)
