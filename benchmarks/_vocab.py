"""Text and byte material for the log generator: chat tokens, code, terminal output.

Everything here is deterministic given a ``random.Random``; nothing reads the clock or the
environment, so a seed always yields the same log.
"""

from __future__ import annotations

import random

# Tokens the way streaming models emit them: mostly a leading space and a short word, some
# punctuation and Markdown, and a fair share of non-ASCII (accents, CJK, emoji incl. ZWJ
# sequences and flags) so the decoders have to deal with multi-byte UTF-8 everywhere.
_ENGLISH = (
    " the",
    " a",
    " to",
    " of",
    " and",
    " in",
    " is",
    " that",
    " it",
    " for",
    " this",
    " we",
    " test",
    " function",
    " file",
    " parser",
    " should",
    " return",
    " value",
    " error",
    " update",
    " message",
    " session",
    " state",
    " call",
    " because",
    " first",
    " then",
    " check",
    " failing",
    " fix",
    " rename",
    " module",
    " import",
    " the",
    " line",
    " type",
    " now",
    " I'll",
    " Let",
    " me",
    " look",
    " at",
    " here",
    " which",
    " when",
    " list",
    ".",
    ",",
    ":",
    "\n",
    "\n\n",
    " `",
    "`",
    "**",
    " -",
    "\n- ",
    "(",
    ")",
    " 42",
    " 3.14",
)
_ACCENTED = (
    " café",
    " naïve",
    " déjà",
    " vu",
    " Übergröße",
    " straße",
    " façade",
    " coöperate",
    " résumé",
    " señor",
    " piñata",
    " São",
    " Paulo",
    " Zürich",
    " Ångström",
    " crème",
    " brûlée",
    " élève",
    " où",
    " là",
    " æsthetic",
    " Øresund",
    " Łódź",
    " Kraków",
    " İstanbul",
    " ñandú",
    " ça",
    " marché",
    " für",
    " über",
    " schön",
)
_CJK = (
    "日本語",
    "の",
    "テスト",
    "を",
    "実行",
    "します",
    "。",
    "数据",
    "结构",
    "解析器",
    "错误",
    "修复",
    "。",
    "函数",
    "返回",
    "值",
    "한국어",
    "파일",
    "을",
    "수정",
    "했습니다",
    "、",
    "「",
    "」",
    "中文",
    "字符",
    "编码",
    "漢字",
    "かな",
    "カタカナ",
)
_EMOJI = (
    " 🚀",
    " ✅",
    " ❌",
    " 👍",
    " 👍🏽",
    " 🎉",
    " 🐛",
    " 🔧",
    " 📦",
    " ⚠️",
    " 🇫🇷",
    " 🇯🇵",
    " 👩‍💻",
    " 🧑🏾‍🔬",
    " 💡",
    " 🔥",
    " ✨",
    " 😅",
    " 🤖",
    " ⏳",
    " 👨‍👩‍👧‍👦",
)
_CODE = (
    "\n```python\n",
    "\n```\n",
    "def ",
    "return ",
    "self.",
    "None",
    '("',
    '")',
    " = ",
    "    ",
    "\t",
    "\\n",
    '\\"',
    '{"key": ',
    "}",
    "[",
    "]",
    " -> ",
    "  # ",
    "import os\n",
    " == ",
    "'",
    '"quoted"',
    "C:\\path\\to",
    "\x07bell",
    '<tag attr="1">',
    "&amp;",
)

# (pool, weight) per language profile; a message picks one profile and draws from it.
_PROFILES: tuple[tuple[tuple[tuple[str, ...], int], ...], ...] = (
    ((_ENGLISH, 90), (_CODE, 8), (_EMOJI, 2)),
    ((_ENGLISH, 60), (_ACCENTED, 35), (_EMOJI, 5)),
    ((_CJK, 80), (_ENGLISH, 15), (_EMOJI, 5)),
    ((_ENGLISH, 55), (_CODE, 40), (_EMOJI, 5)),
    ((_ENGLISH, 70), (_EMOJI, 15), (_ACCENTED, 10), (_CJK, 5)),
)
_PROFILE_WEIGHTS = (40, 15, 15, 20, 10)

_FILES = (
    "src/app/main.py",
    "src/app/parser.py",
    "src/app/état.py",
    "tests/test_parser.py",
    "docs/índice.md",
    "src/数据/loader.py",
    "README.md",
    "pyproject.toml",
    "src/app/cli.py",
    "lib/utils/strings.ts",
    "cmd/server/main.go",
    "src/emoji_🚀.rs",
)
PROJECT = "/home/dev/projects/démo"


class TextSource:
    """Draws chat text for one message in one language profile."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        profile = rng.choices(_PROFILES, _PROFILE_WEIGHTS)[0]
        self._pools = tuple(pool for pool, _ in profile)
        self._weights = tuple(weight for _, weight in profile)

    def chunk(self) -> str:
        """One streamed chunk: one to four tokens."""
        rng = self._rng
        pools = rng.choices(self._pools, self._weights, k=rng.choice((1, 1, 2, 2, 3, 4)))
        return "".join(rng.choice(pool) for pool in pools)

    def sentence(self, tokens: int) -> str:
        """A longer text (a prompt, a plan entry, a title)."""
        rng = self._rng
        pools = rng.choices(self._pools, self._weights, k=tokens)
        return "".join(rng.choice(pool) for pool in pools).strip() or "…"


def file_path(rng: random.Random) -> str:
    """An absolute path inside the fake project."""
    return f"{PROJECT}/{rng.choice(_FILES)}"


def code_text(rng: random.Random, lines: int) -> str:
    """A few lines of source code, as a read tool would return them."""
    out = []
    for i in range(lines):
        indent = "    " * rng.randrange(3)
        name = rng.choice(("parse", "résumé", "数据", "value", "emoji_🚀", "self.state"))
        out.append(f'{indent}{name}_{i} = compute({i}, "{rng.choice(_ACCENTED).strip()}")')
    return "\n".join(out) + "\n"


def git_patch(rng: random.Random, path: str) -> str:
    """A small Git patch with native absolute paths (section 7.6 of the state spec)."""
    old = rng.choice(("foo", "naïve", "旧名"))
    new = rng.choice(("bar", "clean", "新名"))
    return (
        f"diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ -1,3 +1,3 @@\n"
        f" import os\n-def {old}():\n+def {new}():\n     return 1\n"
    )


_TERM_LINES = (
    "\x1b[1;32m✓\x1b[0m tests/test_parser.py::test_ünïcödé_{n} \x1b[2m({ms}ms)\x1b[0m\r\n",
    "\x1b[31mFAILED\x1b[0m tests/test_数据.py::test_load_{n} - AssertionError: 'é' != 'e'\r\n",
    "   Compiling démo-{n} v0.{ms}.0 (/home/dev/projects/démo)\r\n",
    "\r[{bar}] {pct}% 🚀",
    "\x1b[33mwarning\x1b[0m: unused variable `données_{n}`\r\n",
    "collected {n} items / 日本語テスト {ms} 件\r\n",
    "\x1b[38;5;208m{n}\x1b[0m files changed, \x1b[32m+{ms}\x1b[0m \x1b[31m-{pct}\x1b[0m\r\n",
    "$ ls -la\r\ndrwxr-xr-x  4 dev dev 4096 résumé/\r\n",
)


def terminal_bytes(rng: random.Random, size: int) -> bytes:
    """About ``size`` bytes of terminal output: ANSI colour, UTF-8, progress bars, raw bytes."""
    parts: list[bytes] = []
    total = 0
    while total < size:
        if rng.random() < 0.03:
            piece = rng.randbytes(rng.randrange(4, 40))  # binary garbage / invalid UTF-8
        else:
            n = rng.randrange(1000)
            pct = rng.randrange(101)
            piece = (
                rng.choice(_TERM_LINES)
                .format(n=n, ms=rng.randrange(999), pct=pct, bar="#" * (pct // 10))
                .encode()
            )
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)


def split_bytes(rng: random.Random, data: bytes, mean: int) -> list[bytes]:
    """Cut ``data`` at arbitrary byte offsets (inside UTF-8 and escape sequences too)."""
    pieces = []
    pos = 0
    while pos < len(data):
        step = max(1, int(rng.expovariate(1 / mean)))
        pieces.append(data[pos : pos + step])
        pos += step
    return pieces
