"""C identifiers and comment text made from arbitrary (possibly hostile) tensor names.

Identifiers: only [A-Za-z0-9_], no leading digit or underscore, no `__` anywhere (reserved in C
and C++), no C/C++ keyword or common standard macro, bounded length, and unique within one
`NameTable` (deterministic numeric suffixes in claim order).

Comment text: the name as written, except what could end a comment, open a nested one, form a
trigraph (`??/` is a backslash under -std=c99) or break the line: those characters, backslashes
and every non-ASCII byte are written as visible `\\xNN` escapes.
"""

from __future__ import annotations

import re

MAX_IDENT_LEN = 48

_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
_Thread_local
""".split()
_CXX_KEYWORDS = """
alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl concept
const_cast consteval constexpr constinit co_await co_return co_yield decltype delete dynamic_cast
explicit export false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq
private protected public reinterpret_cast requires static_assert static_cast template this
thread_local throw true try typeid typename using virtual wchar_t xor xor_eq final override import
module
""".split()
# Macros and names from the standard headers the emitted files include.
_STD_NAMES = """
NULL EOF assert errno offsetof main stdin stdout stderr complex imaginary noreturn alignas alignof
static_assert thread_local int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
intptr_t uintptr_t size_t ptrdiff_t wchar_t max_align_t
""".split()
RESERVED = frozenset(_C_KEYWORDS + _CXX_KEYWORDS + _STD_NAMES)

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]+")
_UNDERSCORES = re.compile(r"_{2,}")


def c_identifier(text: str, fallback: str = "t") -> str:
    """A valid, non-reserved C identifier derived from `text` (not yet unique)."""
    # TFLite joins fused op names with ';': the first one names the tensor well enough. Long
    # scoped names lose their leading scopes first ("Model/Block/Conv2D" -> "Block_Conv2D").
    parts = (text.split(";", 1)[0] or text).split("/")
    s = _clean("_".join(parts))
    while len(s) > MAX_IDENT_LEN and len(parts) > 1:
        parts = parts[1:]
        s = _clean("_".join(parts)) or s
    if len(s) > MAX_IDENT_LEN:
        s = s[:MAX_IDENT_LEN].rstrip("_")
    if not s:
        s = fallback
    if s[0].isdigit():
        s = f"{fallback}_{s}"
    if s in RESERVED or _is_reserved_prefix(s):
        s = f"{fallback}_{s}"
    return s


def _clean(text: str) -> str:
    return _UNDERSCORES.sub("_", _NOT_IDENT.sub("_", text)).strip("_")


def _is_reserved_prefix(s: str) -> bool:
    # mli_/MLI_ belong to the library headers the emitted code includes.
    return s.lower().startswith("mli_") or s.lower() == "mli"


def join(*parts: str) -> str:
    """Join identifier parts with single underscores (never creating `__`)."""
    return "_".join(p.strip("_") for p in parts if p.strip("_"))


class NameTable:
    """Hands out unique identifiers; a claim may reserve several derived names at once."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def reserve(self, name: str) -> str:
        if name in self._taken:
            raise ValueError(f"identifier {name!r} reserved twice")
        self._taken.add(name)
        return name

    def claim(self, base: str, derived: tuple[str, ...] = ()) -> str:
        """The first of `base`, `base_2`, `base_3`, ... that is free together with every
        `base + suffix` for suffix in `derived`; all of them are then taken."""
        stem = base.rstrip("_") or base
        candidate, k = base, 1
        while True:
            names = [candidate] + [candidate + s for s in derived]
            if not any(n in self._taken or n in RESERVED for n in names):
                self._taken.update(names)
                return candidate
            k += 1
            candidate = f"{stem}_{k}"


# Escaped as visible \xNN: a `/` touching a `*` (would end or open a comment), a `?` before
# another (trigraphs: `??/` is a backslash under -std=c99), backslashes (so every `\x` is ours),
# line breaks and every other non-printable or non-ASCII character (as its UTF-8 bytes).
_MUST_ESCAPE = re.compile(r"(?<=\*)/|/(?=\*)|\?(?=\?)|\\|[^\x20-\x7e]")


def _escape(m: re.Match) -> str:
    return "".join("\\x%02x" % b for b in m.group().encode("utf-8", "surrogatepass"))


def comment_text(text: str, limit: int = 200) -> str:
    """`text` made safe inside a `/* ... */` comment on one line: readable as written, with
    only what could break the comment escaped. Long texts are cut at `limit` characters."""
    s = _MUST_ESCAPE.sub(_escape, text)
    if len(s) > limit:
        s = s[:limit] + "..."  # never ends in a backslash or a `/` that could meet a `*`
    return s
