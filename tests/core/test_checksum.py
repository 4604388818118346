"""The checksum of documents-api.md §4.3, computed host-side."""

from __future__ import annotations

import pytest

from werkbaum_core import InvalidArgument, checksum
from werkbaum_core.stores.memory import MemoryStore

VECTORS = [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("- [ ] Eins", "89fe5185a4df8c956b66344ca272ad1ef4711c3103fccaaefa3ba3c6f83007d2"),
    ("- [ ] Eins\n- [ ] Zwei", "6034865900c19ddb8868c43832bc11247a2ea3909fa3906d1b9eaec72943ae2b"),
    (
        "- [ ] Eins\n- [ ] Zwei\n- [ ] Drei",
        "cd864738c57416ff402bfd84c3a0c230286ca416832dac6ee75267c2091913de",
    ),
    ("a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"),
    ("a\r\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"),
    ("a\rb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"),
    ("a\n", "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"),
    ("Grüße", "f83e039796c6453a10f5519e39fd113901572316a1a8ea07cb525d2801dfd074"),
]


@pytest.mark.parametrize(("text", "digest"), VECTORS)
def test_documents_api_vectors(text: str, digest: str) -> None:
    assert checksum(text) == f"sha256:{digest}"


@pytest.mark.parametrize("text", ["- [ ] A\ud800 #a (M)\n", "\udfff", "a\r\n\ud83d"])
def test_a_lone_surrogate_is_an_invalid_argument_naming_it(text: str) -> None:
    # No UTF-8 form, so no checksum the documents API defines (§4.1): a typed error.
    at = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)
    with pytest.raises(InvalidArgument) as info:
        checksum(text)
    assert info.value.code == "invalid_argument"
    assert info.value.details == {"reason": "lone_surrogate", "at": at}
    assert f"lone surrogate (U+{ord(text[at]):04X}) at character {at}" in info.value.message


def test_a_memory_store_read_of_such_a_text_is_the_same_typed_error() -> None:
    store = MemoryStore({"plan": "- [ ] A\ud800\n"})
    with pytest.raises(InvalidArgument, match="lone surrogate"):
        store.read("plan")
