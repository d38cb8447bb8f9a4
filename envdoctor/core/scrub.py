"""What a secret looks like, and the one scrubber that hides it in any text or structure.

:func:`scrub` takes a string or any JSON-like structure (dicts, lists, tuples, dataclasses) and
returns the same shape with every secret replaced by ``<redacted>``. It is what the report
boundary (:mod:`envdoctor.core.redact`) applies to reports, and what any other writer (triage,
diff, fleet, baselines, a bundle) calls on what it is about to write: always on the values,
before they are serialised, so the escaping of a format can never be broken by it.

Secrets are found two ways:

* **by value**: the values of this environment's secret-looking variables (``HF_TOKEN``,
  ``MYSQL_PWD``, ``*_CONNECTION_STRING``), and every part of any variable's value that the shape
  rules below would hide (the password in ``PIP_INDEX_URL``), wherever they appear, also
  URL-encoded, base64-encoded or broken across lines;
* **by shape**: provider tokens (``hf_``, ``ghp_``, ``glpat-``, ``sk-``, ``xoxb-``, ``AKIA``,
  ``AIza``, JWTs ...), credentials in URLs (user info, secret query parameters, webhook and
  package-index paths), ``NAME=value`` / ``"name": value`` / ``NAME: value`` of a secret name,
  HTTP headers (``Authorization``, ``Cookie``, ``X-API-Key``), command lines (``--password X``,
  ``mysql -pX``, ``curl -u user:pass``), netrc lines, PEM and PGP private-key blocks, base64
  ``user:password`` pairs and bare 40-hex API keys (not a commit: a word such as ``git`` or
  ``commit`` before it keeps it).

Every pattern is bounded or anchored so that scrubbing is linear in the text's length.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

from envdoctor.core.patterns import lazy

REDACTED = "<redacted>"

# Words that make an environment-variable-like name secret. Matched as substrings of
# UPPER_CASE names, where over-matching (NCCL_IB_PKEY) only hides a harmless value.
SECRET_WORDS = (
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "SIGNATURE",
    "BEARER",
    "CONNECTION_STRING",
    "CONNSTR",
    "CONN_STR",
)
# In lower/mixed-case keys (facts, details) only whole segments count: a ``token`` field is
# secret, the ``google-auth`` or ``keyring`` distribution is not.
SECRET_SEGMENTS = frozenset(
    {
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cookie",
        "cookies",
        "session",
        "apikey",
        "private",
        "bearer",
    }
)
# Env-like names that end in these are passwords too (DB_PASS, SMTP_PW, MYSQL_PWD, SENTRY_DSN),
# though the words alone are too short to match inside names (BYPASS, COMPASS, OLDPWD).
SECRET_SUFFIXES = ("_PASS", "_PW", "_PWD", "_PASSWD", "_PASSPHRASE", "_DSN")
_ENVLIKE = lazy(r"^[A-Z][A-Z0-9_]*$")
_SEGMENTS = lazy(r"[^a-z0-9]+")
_CAMEL = lazy(r"([a-z0-9])([A-Z])")


@lru_cache(maxsize=8192)  # names repeat: every report has the same keys
def is_secret_key(key: str) -> bool:
    """A name whose value is a secret: an env-like name with a secret word in it, or a key with
    a secret segment (``api_key``, ``AccountKey``, ``privateKeyId``, ``X-API-Key``)."""
    if _ENVLIKE.match(key):
        return any(w in key for w in SECRET_WORDS) or key.endswith(SECRET_SUFFIXES) or key in ("PASS", "PW")
    parts = [p for p in _SEGMENTS.split(_CAMEL.sub(r"\1_\2", key[:128]).lower()) if p]
    if any(p in SECRET_SEGMENTS for p in parts):
        return True
    # api_key, access_key, private_key, ssh_key ... but not "key" alone (a dict's lookup key).
    return len(parts) > 1 and parts[-1] == "key"


# Names that are secret where text assigns them (pwd=, pass=, sig=), too short or too common to
# be secret as keys of a structure (a "pass" count, a "signature" id).
_TEXT_NAMES = frozenset({"pwd", "pass", "pw", "passwd", "sig", "signature", "sharedaccesssignature", "accountkey", "apikey", "api-key"})
_URL_PARAMS = frozenset({"key", "code", "x-amz-signature", "x-amz-credential", "x-goog-signature", "x-goog-credential", "client_secret"})
# A flag named like this takes a location or a mode, not the secret itself (--token-file PATH).
_FLAG_TAILS = frozenset({"file", "path", "dir", "env", "stdin", "cmd", "command", "helper", "type", "length", "prompt", "name", "id"})


def _text_name(name: str) -> bool:
    return len(name) > 1 and (is_secret_key(name) or name.lower() in _TEXT_NAMES)


# Tokens with a recognisable shape. Each is replaced whole.
_TOKEN_PATTERNS = (
    r"hf_[A-Za-z0-9]{16,200}",  # Hugging Face
    r"api_org_[A-Za-z0-9]{20,200}",
    r"gh[pousr]_[A-Za-z0-9]{20,255}",  # GitHub
    r"github_pat_[A-Za-z0-9_]{20,255}",
    r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ddt|wt)-[A-Za-z0-9_\-]{16,200}",  # GitLab
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}",  # AWS key ids
    r"sk-[A-Za-z0-9_\-]{20,255}",  # OpenAI / Anthropic style
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}",  # Stripe
    r"whsec_[A-Za-z0-9]{24,255}",
    r"xox[abposre]-[A-Za-z0-9\-]{10,255}",  # Slack
    r"xapp-\d-[A-Za-z0-9\-]{10,255}",
    r"AIza[0-9A-Za-z_\-]{30,100}",  # Google API key
    r"ya29\.[0-9A-Za-z_\-]{20,2048}",  # Google OAuth access token
    r"npm_[A-Za-z0-9]{30,100}",
    r"pypi-[A-Za-z0-9_\-]{40,400}",
    r"SG\.[A-Za-z0-9_\-]{16,100}\.[A-Za-z0-9_\-]{16,100}",  # SendGrid
    r"do[por]_v1_[a-f0-9]{64}",  # DigitalOcean
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    r"ATATT[A-Za-z0-9_\-=]{20,400}",  # Atlassian
    r"dapi[a-f0-9]{32}",  # Databricks
    r"r8_[A-Za-z0-9]{30,100}",  # Replicate
    r"gsk_[A-Za-z0-9]{40,100}",  # Groq
    r"pplx-[A-Za-z0-9]{40,100}",
    r"lin_api_[A-Za-z0-9]{30,100}",
    r"ntn_[A-Za-z0-9]{40,100}",
    r"dckr_pat_[A-Za-z0-9_\-]{20,100}",  # Docker Hub
    r"hvs\.[A-Za-z0-9_\-]{24,200}",  # Vault
    r"key-[0-9a-f]{32}",  # Mailgun
    r"\d{8,10}:AA[A-Za-z0-9_\-]{33}",  # Telegram bot
    r"[MN][A-Za-z\d]{23,25}\.[\w\-]{6}\.[\w\-]{27,38}",  # Discord bot
    r"[a-z2-7]{52}",  # Azure DevOps PAT (classic)
    r"[A-Za-z0-9]{52}AZDO[A-Za-z0-9]{4}",  # Azure DevOps PAT
    r"eyJ[A-Za-z0-9_\-]{4,8192}\.[A-Za-z0-9_\-]{4,8192}\.[A-Za-z0-9_\-]{0,8192}",  # JWT
)
# A token that ends a line and goes on, alone, on the next (a terminal or an editor wrapped it).
_WRAP = r"(?:\r?\n[ \t>]{0,8}(?=[A-Za-z0-9_\-+/=]{4,200}(?![^\r\n]))[A-Za-z0-9_\-+/=]{4,200})?"
_TOKENS = lazy(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(_TOKEN_PATTERNS) + r")(?![A-Za-z0-9_])" + _WRAP)
_KEY_BLOCK = lazy(
    r"-----BEGIN ([A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)"
    r"|PuTTY-User-Key-File-\d: .*?(?:Private-MAC: [0-9a-f]+|\Z)",
    re.DOTALL,
)
_HEX40 = lazy(r"(?<![\w/.\-+@#:=$%])[0-9a-fA-F]{40}(?![\w/.\-])")
_HASH_WORDS = ("git", "commit", "sha", "hash", "rev", "head", "digest", "checksum", "merge", "tree", "parent", "build", "version")

# scheme://...: the scheme starts a run (so a long run of letters is scanned once).
_URL = lazy(r"(?<![A-Za-z0-9+.\-])([A-Za-z][A-Za-z0-9+.\-]{0,30}://)([^\s\"'<>`\\]{1,8192})")
_HOST_AFTER = lazy(r"\[?[A-Za-z0-9.\-:\]]{1,300}(?:[/?#]|$)")
_HOST_PORT_PATH = lazy(r"[\w.\-]{1,300}:\d{1,6}/")
_BARE_CREDS = lazy(
    r"(?<![\w.:/@+-])([A-Za-z0-9._~\-]{1,200}):(?!//)([^\s@\"'/]{1,400})@"
    r"(?=[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,20}(?::\d{1,6})?(?:[/\s:,;\"')]|$))"
)
# Path segments after these hold a webhook's id and token (Slack, Discord, Teams, Zapier...).
_HOOK_MARKERS = frozenset({"webhook", "webhooks", "webhookb2", "incomingwebhook", "hooks", "catch", "triggers"})
_AFTER_NAME = frozenset({"key", "token", "tokens", "secret", "password", "apikey", "api_key", "access_token", "auth"})
# Package hosts whose first path segment is the reader's token.
_TOKEN_PATH_HOSTS = ("packagecloud.io", "dl.cloudsmith.io", "fury.io", "gemfury.com")
_WEBHOOK_BARE = lazy(
    r"(?<![\w.\-/])((?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks|"
    r"[\w\-]{1,63}\.webhook\.office\.com/webhookb2|outlook\.office\.com/webhook|hooks\.zapier\.com/hooks)/)[^\s\"'<>`]{1,2048}"
)

# NAME=value / NAME: value in free text (a plugin echoing a command line or an env dump).
# NAME= / NAME: is found first; its value is read only where the name is secret, and nothing
# more is consumed, so that in "configuration: token=abc" the assignment inside is judged too.
_ASSIGN = lazy(r"(?<![\w])([A-Za-z_][A-Za-z0-9_\-]{0,127})([ \t]{0,4}[=:][ \t]{0,4})")
_VALUE = lazy(r"\"[^\"\n]{0,4096}\"|'[^'\n]{0,4096}'|[^\s,;&]{1,4096}")
# "name": value / 'name': value (JSON or a dict's repr inside a value).
_QUOTED_ASSIGN = lazy(
    r"([\"'])([A-Za-z_][\w.\-]{0,127})\1(\s{0,4}[:=]\s{0,4})(?![{\[])"
    r"(\"(?:[^\"\\\n]|\\.){0,8192}\"|'(?:[^'\\\n]|\\.){0,8192}'|[^\s,;}\]]{1,4096})"
)
_SCHEMES = r"(?:Bearer|Basic|Token|Digest|Negotiate|AWS4-HMAC-SHA256|Splunk|Key)[ \t]+"
# A header's value: a scheme word and one token; a cookie header's: the rest of the line.
_HEADER = lazy(
    r"(?<![\w\-])((?:Proxy-)?Authorization|[A-Za-z][A-Za-z0-9]{0,30}(?:-[A-Za-z0-9]{1,30}){1,5})"
    rf"([ \t]{{0,4}}:[ \t]{{0,4}})(?!//)((?:{_SCHEMES})?)([^\s\"'\\,;]{{1,4096}})",
    re.IGNORECASE,
)
_COOKIE = lazy(r"(?<![\w\-])((?:Set-)?Cookie[ \t]{0,4}:[ \t]{0,4})([^\r\n\"'\\]{1,4096})", re.IGNORECASE)
_SCHEME_WORD = lazy(r"(?i)" + _SCHEMES)
_BEARER = lazy(r"\b(Bearer|Basic|Token)[ \t]+(?=[A-Za-z0-9._~+/\-]{0,4095}[0-9=+/_\-])[A-Za-z0-9._~+/\-]{8,4096}=*", re.IGNORECASE)
_FLAG = lazy(r"(?<![\w\-])(--[A-Za-z][\w\-]{0,63})(=|[ \t]{1,8})(?!-)(\"[^\"\n]{0,4096}\"|'[^'\n]{0,4096}'|[^\s\"']{1,4096})")
_PW_COMMANDS = (
    r"mysql|mysqldump|mysqladmin|mysqlsh|mysqlimport|mysqlcheck|mariadb|mariadb-dump|mongo|mongosh|mongodump|mongorestore|sshpass"
)
_SHORT_PW = lazy(
    rf"(?<![\w\-])((?:{_PW_COMMANDS})(?:[ \t]{{1,8}}(?!-p)\S{{1,256}}+){{0,16}}?[ \t]{{1,8}}-p[ \t]{{0,8}})([^\s\-][^\s]{{0,1024}})"
    r"|(?<![\w\-])(redis-cli(?:[ \t]{1,8}(?!-a)\S{1,256}+){0,16}?[ \t]{1,8}-a[ \t]{1,8})([^\s\-][^\s]{0,1024})"
)
_USER_FLAG = lazy(r"(?<![\w\-])((?:-u|--user|--proxy-user)(?:=|[ \t]{1,8})[\"']?[^\s:\"']{1,256}:)([^\s\"']{1,1024})")
_NETRC = lazy(r"(?<![\w\-])((?:machine|login|account|default)\s{1,16}\S{1,256}+\s{1,16}(?:password|passwd)\s{1,16})(\S{1,1024})")
_PASS_ARG = lazy(r"(?<![\w\-])(-pass(?:in|out)?[ \t]{1,8}pass:)(\S{1,1024})")
_URLENCODED = lazy(r"(?<![^\s\"'<>])[^\s\"'<>%]{0,4096}(?:%[0-9A-Fa-f]{2}[^\s\"'<>%]{0,4096}){1,2048}")
_BASE64 = lazy(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{16,8192}={0,2}(?![A-Za-z0-9+/=_\-])")
_BASIC_PAIR = lazy(r"[!-9;-~]{1,256}:[!-~]{3,512}")
# Candidates for "long random string": no '/' or '.', so paths and versions never match whole.
_RANDOM = lazy(r"(?<![A-Za-z0-9+_=\-])[A-Za-z0-9+_\-]{32,8192}={0,2}(?![A-Za-z0-9+_=\-])")
# An Itanium C++ ABI symbol (_ZN5torch8autograd10deleteNodeEPNS0_4NodeE): the error's subject
# in every "undefined symbol" report, never a key.
_MANGLED = lazy(r"_Z[NLSTZKI0-9]")
_ABS_PATH = lazy(r"^/[\w.\-/]{0,4096}$")


def _entropy(s: str) -> float:
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# GPU-3f1c2a9e-8b7d-..., MIG-..., or any prefixed hex id: identifiers, not keys (--redact handles them).
_UUIDISH = lazy(r"^[A-Za-z]{0,8}-?[0-9a-fA-F]{8}(?:-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}$")


def looks_random(s: str) -> bool:
    """A long string mixing upper case, lower case and digits with high entropy: a key.
    Hex hashes (git commits, container ids) and UUIDs have no upper case and are kept."""
    if _UUIDISH.match(s) or _MANGLED.match(s):
        return False
    return (
        len(s) >= 32 and any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s) and _entropy(s) >= 4.0
    )


_TOKEN_CHARS = lazy(r"[A-Za-z0-9_\-+/=]{1,8192}")


def _tokenish(s: str) -> bool:
    """A URL path segment or query value that is a credential: a known token shape, a long
    random string, or 20+ letters and digits mixed as no word is (>= 3 of each class)."""
    if _TOKENS.fullmatch(s) or (_TOKEN_CHARS.fullmatch(s) and looks_random(s)):
        return True
    if len(s) < 20 or not s.isalnum():
        return False
    ups, lows, digs = (sum(1 for c in s if f(c)) for f in (str.isupper, str.islower, str.isdigit))
    return ups >= 3 and lows >= 3 and digs >= 3 and _entropy(s) >= 3.8


# Values of secret-named variables that are settings, not secrets.
_NOT_SECRET_VALUES = frozenset(
    {"true", "false", "none", "null", "unset", "empty", "enabled", "disabled", "default", "auto", "bearer", "basic", "token"}
)


def _plain_value(v: str) -> bool:
    """A value no rule hides: empty, already hidden, a setting word, a location."""
    v = v.strip("\"'")
    return v in ("", REDACTED) or v.lower() in _NOT_SECRET_VALUES or bool(_ABS_PATH.match(v))


def _url_userinfo(scheme: str, rest: str, hide: Callable[[str], str]) -> tuple[str, str]:
    """(``scheme://***@`` or ``scheme://``, the rest after the user info). The user info runs to
    the LAST '@' of the address that is followed by a host ('@' and '/' in a password)."""
    colon, slash, inner = rest.find(":"), rest.find("/"), rest.find("://")
    hpp = _HOST_PORT_PATH.match(rest)
    at = rest.rfind("@")
    for _ in range(16):  # bounded: an address with thousands of '@' is no address
        if at <= 0:
            break
        # "host/path@ref" (pip's git+https://github.com/o/r@v1) is no userinfo: it has a '/' and
        # no ':' before the '@'; nor is "host:8080/path@ref". "user:pa/ss@host" is one.
        has_colon, has_slash = 0 <= colon < at, 0 <= slash < at
        nested = 0 <= inner < at  # the '@' belongs to a URL inside this one (?next=https://u:p@h)
        if _HOST_AFTER.match(rest, at + 1) and (has_colon or not has_slash) and not (hpp and hpp.end() <= at) and not nested:
            userinfo = rest[:at]
            hide(userinfo)
            if has_colon:
                hide(userinfo[colon + 1 :])
            return f"{scheme}***@", rest[at + 1 :]
        at = rest.rfind("@", 0, at)
    return scheme, rest


def _url_path(host: str, path: str, hide: Callable[[str], str]) -> str:
    segs = path.split("/")
    low_host = host.lower().split(":", 1)[0]
    token_host = any(low_host == h or low_host.endswith("." + h) for h in _TOKEN_PATH_HOSTS)
    for i, seg in enumerate(segs):
        low = seg.lower()
        if not seg or seg == REDACTED:
            continue
        prev = segs[i - 1].lower() if i else ""
        if low in _HOOK_MARKERS or (low == "services" and low_host.startswith("hooks.")):
            rest = "/".join(segs[i + 1 :])
            if rest.strip("/"):
                for part in [rest, *segs[i + 1 :]]:  # each part is a secret by value elsewhere
                    hide(part)
                return "/".join([*segs[: i + 1], REDACTED])
        if (i == 1 and token_host) or prev in _AFTER_NAME or _tokenish(seg) or re.fullmatch(r"bot\d{6,12}:[\w\-]{30,64}", seg):
            segs[i] = hide(seg)
    return "/".join(segs)


def _url_params(query: str, hide: Callable[[str], str]) -> str:
    out = []
    for part in re.split(r"([&;])", query):
        name, eq, value = part.partition("=")
        if eq and value and value != REDACTED and not _plain_value(value):
            low = unquote(name).lower()
            if _text_name(name) or low in _URL_PARAMS or _tokenish(unquote(value)):
                part = f"{name}={hide(value)}"
            elif "://" in value:  # a URL in a parameter (a redirect target) is a URL too
                part = f"{name}=" + _URL.sub(lambda m: _scrub_url(m, hide), value)
        out.append(part)
    return "".join(out)


def _scrub_url(m: re.Match, hide: Callable[[str], str]) -> str:
    head, rest = _url_userinfo(m.group(1), m.group(2), hide)
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    host, tail = rest[:cut], rest[cut:]
    frag = ""
    if "#" in tail:
        tail, frag = tail.split("#", 1)
        frag = "#" + _url_params(frag, hide)
    query = ""
    if "?" in tail:
        tail, query = tail.split("?", 1)
        query = "?" + _url_params(query, hide)
    return head + host + _url_path(host, tail, hide) + query + frag


@dataclass(frozen=True)
class Scrubber:
    """Secret removal for strings. ``literals`` are known secret values (see
    :func:`secret_values`); ``random`` also hides long random-looking strings (reports: yes;
    pastes: no, their mangled symbols and hashes are the evidence)."""

    literals: tuple[str, ...] = ()
    random: bool = True

    def text(self, s: str, key: str | None = None) -> str:
        """``s`` scrubbed; ``key`` is the name it is stored under (``git_version``: a hash)."""
        return self.scrub_text(s, lambda secret: REDACTED, context=key or "")

    def found(self, s: str) -> list[str]:
        """The secrets the shape rules find in ``s`` (to be hidden by value elsewhere)."""
        seen: list[str] = []

        def keep(secret: str) -> str:
            seen.append(secret)
            return REDACTED

        self.scrub_text(s, keep)
        return seen

    def scrub_text(self, s: str, hide: Callable[[str], str], decode: bool = True, context: str = "") -> str:
        if "-----BEGIN" in s or "PuTTY" in s:
            s = _KEY_BLOCK.sub(lambda m: hide(m.group(0)), s)
        if "://" in s:
            s = _URL.sub(lambda m: _scrub_url(m, hide), s)
        if "hook" in s:
            s = _WEBHOOK_BARE.sub(lambda m: m.group(1) + hide(m.group(0)[len(m.group(1)) :]), s)
        if "@" in s:
            s = _BARE_CREDS.sub(lambda m: _bare_creds(m, hide), s)
        s = _TOKENS.sub(lambda m: hide(m.group(0)), s)
        s = _HEADER.sub(lambda m: self._header(m, hide), s)
        if "ookie" in s or "OOKIE" in s:
            s = _COOKIE.sub(lambda m: m.group(1) + hide(m.group(2).rstrip()) if not m.group(2).startswith(REDACTED) else m.group(0), s)
        s = _BEARER.sub(lambda m: f"{m.group(1)} {hide(m.group(0)[len(m.group(1)) :].strip())}", s)
        s = _QUOTED_ASSIGN.sub(lambda m: self._quoted(m, hide), s)
        s = _assignments(s, hide)
        s = self._command_lines(s, hide)
        s = _HEX40.sub(lambda m: self._hex(m, hide, context), s)
        if decode:
            s = self._decoded(s, hide)
        if self.random:
            s = _RANDOM.sub(lambda m: hide(m.group(0)) if looks_random(m.group(0)) else m.group(0), s)
        return self._literals(s)  # after the shapes: a URL's password goes as ***@, not whole

    def _literals(self, s: str) -> str:
        if not self.literals:
            return s
        for lit in _expanded(self.literals):
            if lit in s:
                s = s.replace(lit, REDACTED)
        if "\n" in s:  # a known secret broken across lines
            for rx in _split_literal_patterns(self.literals):
                s = rx.sub(REDACTED, s)
        return s

    @staticmethod
    def _command_lines(s: str, hide: Callable[[str], str]) -> str:
        # Each rule only where its marker is (cheap substring tests keep ordinary text fast).
        if "--" in s:
            s = _FLAG.sub(lambda m: Scrubber._flag(m, hide), s)
        if "-p" in s or "-a" in s:
            s = _SHORT_PW.sub(lambda m: (m.group(1) or m.group(3)) + hide(m.group(2) or m.group(4)), s)
        if "-u" in s or "-user" in s:
            s = _USER_FLAG.sub(lambda m: m.group(1) + hide(m.group(2)), s)
        if "pass:" in s:
            s = _PASS_ARG.sub(lambda m: m.group(1) + hide(m.group(2)), s)
        if "passw" in s:
            s = _NETRC.sub(lambda m: m.group(1) + hide(m.group(2)), s)
        return s

    @staticmethod
    def _header(m: re.Match, hide: Callable[[str], str]) -> str:
        name, sep, scheme, value = m.groups()
        if not is_secret_key(name) or _plain_value(value) or value.startswith(REDACTED):
            return m.group(0)
        return f"{name}{sep}{scheme}{hide(value)}"

    @staticmethod
    def _quoted(m: re.Match, hide: Callable[[str], str]) -> str:
        q, name, sep, value = m.groups()
        if not _text_name(name) or _plain_value(value):
            return m.group(0)
        inner = value[1:-1] if value[:1] in "\"'" and len(value) > 1 else value
        scheme = _SCHEME_WORD.match(inner)
        head = scheme.group(0) if scheme and len(inner) > scheme.end() else ""
        hidden = head + hide(inner[len(head) :])
        return f"{q}{name}{q}{sep}" + (f"{value[0]}{hidden}{value[0]}" if inner is not value else hidden)

    @staticmethod
    def _flag(m: re.Match, hide: Callable[[str], str]) -> str:
        name, sep, value = m.groups()
        parts = [p for p in re.split(r"[-_]+", name.lower()) if p]
        secret = is_secret_key(name.strip("-")) or any(p in ("pass", "pwd", "pw") for p in parts)
        if not secret or parts[0] == "no" or parts[-1] in _FLAG_TAILS or _plain_value(value):
            return m.group(0)
        return f"{name}{sep}{hide(value)}"

    @staticmethod
    def _hex(m: re.Match, hide: Callable[[str], str], context: str = "") -> str:
        h = m.group(0)
        before = context.lower() + " " + m.string[max(0, m.start() - 40) : m.start()].lower()
        if h.isdigit() or h.isalpha() or any(w in before for w in _HASH_WORDS):
            return h
        return hide(h)

    def _decoded(self, s: str, hide: Callable[[str], str]) -> str:
        """Secrets URL-encoded or base64-encoded: the decoded text is scrubbed; where that
        finds a secret, the encoded text goes."""

        def urlenc(m: re.Match) -> str:
            raw = m.group(0)
            dec = unquote(raw)
            out = self.scrub_text(dec, hide, decode=False) if dec != raw else dec
            return out if out != dec else raw

        s = _URLENCODED.sub(urlenc, s) if "%" in s else s
        return _BASE64.sub(lambda m: self._base64(m, hide), s)

    def _base64(self, m: re.Match, hide: Callable[[str], str]) -> str:
        import base64  # on use: few texts hold a base64 run
        import binascii

        raw = m.group(0)
        try:
            dec = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True).decode("ascii")
        except (binascii.Error, ValueError):
            return raw
        if not dec.isprintable() or len(dec) < 8:
            return raw
        if _BASIC_PAIR.fullmatch(dec) or self.scrub_text(dec, lambda x: REDACTED, decode=False) != dec:
            return hide(raw)
        return raw


def _assignments(s: str, hide: Callable[[str], str]) -> str:
    """NAME=value and NAME: value of a secret name: the value goes. "Authorization: Bearer
    <redacted>" keeps its scheme word (the token went already)."""
    out, pos = [], 0
    for m in _ASSIGN.finditer(s):
        name, sep = m.groups()
        if m.start() < pos or not _text_name(name):
            continue
        if ":" in sep and not is_secret_key(name):
            continue  # "did not pass: smoke.compile" is prose; only "pass=" assigns a short name
        v = _VALUE.match(s, m.end())
        value = v.group(0) if v else ""
        if not value or _plain_value(value) or value.startswith(REDACTED):
            continue
        out += [s[pos : m.start()], name, sep, hide(value)]
        pos = m.end() + len(value)
    return "".join(out) + s[pos:] if out else s


def _bare_creds(m: re.Match, hide: Callable[[str], str]) -> str:
    hide(m.group(1) + ":" + m.group(2))
    hide(m.group(2))
    return "***@"


_SPLIT_CACHE: dict[tuple[str, ...], tuple[re.Pattern, ...]] = {}
_BREAK = r"(?:\r?\n[ \t>|]{0,8})?"


def _split_literal_patterns(literals: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    got = _SPLIT_CACHE.get(literals)
    if got is None:
        got = tuple(re.compile(_BREAK.join(re.escape(c) for c in lit)) for lit in literals if len(lit) >= 8 and len(lit) <= 512)
        if len(_SPLIT_CACHE) < 64:
            _SPLIT_CACHE[literals] = got
    return got


_EXPANDED: dict[tuple[str, ...], tuple[str, ...]] = {}


def _expanded(literals: tuple[str, ...]) -> tuple[str, ...]:
    """Secret values as they may be written: themselves, URL-encoded, base64-encoded; longest
    first, so a value is replaced before a part of it."""
    got = _EXPANDED.get(literals)
    if got is None:
        import base64

        out: set[str] = set()
        for v in literals:
            b = base64.b64encode(v.encode("utf-8", "replace")).decode("ascii")
            out |= {v, quote(v, safe=""), quote(v, safe="/:@"), b, b.rstrip("=")}
        got = tuple(sorted((x for x in out if len(x) >= 5), key=len, reverse=True))
        if len(_EXPANDED) < 64:
            _EXPANDED[literals] = got
    return got


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values to be replaced wherever they appear: those of the environment's secret-looking
    variables, and the secrets the shape rules find in any variable (the password inside
    ``PIP_INDEX_URL``); the scrubber also finds them URL- or base64-encoded. Short values ("1", "tty"),
    settings ("true") and absolute paths (SSH_AUTH_SOCK, XAUTHORITY) are flags or locations, and
    replacing them everywhere would garble the report."""
    vals: set[str] = set()
    finder = Scrubber(random=False)
    for k, v in env.items():
        if not isinstance(v, str) or len(v) < 5 or v.lower() in _NOT_SECRET_VALUES or os.path.isabs(v):
            continue
        if is_secret_key(k):
            vals.add(v)
        if len(v) <= 65536:  # and its secret parts, printed alone (a connection string's key)
            vals |= {f for f in finder.found(v) if len(f) >= 5}
    vals = {v for v in vals if REDACTED not in v}
    return tuple(sorted(vals, key=len, reverse=True))


def walk(
    v: Any,
    fn: Callable[[str, str | None], str],
    *,
    key: str | None = None,
    path: tuple[str, ...] = (),
    key_rule: bool = False,
    tuples: bool = False,
) -> Any:
    """Apply ``fn`` to every string in a JSON-like value (dict keys included, since an env dump
    could carry a secret as a key; dataclasses field by field); with ``key_rule`` a
    secret-looking key hides its value. ``path`` is the chain of keys above ``v`` (without ``key``)."""
    if key_rule and key is not None and is_secret_key(key) and path[:2] not in _NAME_KEYED:
        if v in (None, "", [], {}) or isinstance(v, bool):
            return v
        return REDACTED
    if v is None or isinstance(v, (bool, int, float, Enum)):  # a str-valued Enum (Status) stays itself
        return v
    if isinstance(v, str):
        return fn(v, key)
    if isinstance(v, Mapping):
        sub = (*path, key) if key is not None else path
        return {
            fn(k, None) if isinstance(k, str) else k: walk(x, fn, key=str(k), path=sub, key_rule=key_rule, tuples=tuples)
            for k, x in v.items()
        }
    if isinstance(v, (list, tuple)):
        out = [walk(x, fn, path=path, key_rule=key_rule, tuples=tuples) for x in v]
        return tuple(out) if tuples and isinstance(v, tuple) else out
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        changes = {f.name: walk(getattr(v, f.name), fn, key_rule=False, tuples=True) for f in dataclasses.fields(v) if f.init}
        return dataclasses.replace(v, **changes)
    return fn(str(v), key)  # a Path or odd object would be printed with str() anyway


# Keys under these paths are package or library names, never secret by name ("google-auth").
_NAME_KEYED = (("facts", "dists"), ("facts", "ldconfig"))


def scrubber(env: Mapping[str, str] | None = None, *, random: bool = True) -> Scrubber:
    """The scrubber for this environment (``env`` defaults to this process's)."""
    return Scrubber(secret_values(os.environ if env is None else env), random=random)


def scrub(value: Any, env: Mapping[str, str] | None = None, *, key_rule: bool = True, random: bool = True) -> Any:
    """Every secret in ``value`` hidden: a string, or any JSON-like structure or dataclass (the
    same shape comes back). ``key_rule``: a secret-looking key hides its whole value; ``random``:
    long random-looking strings go too (not for pastes, whose hashes and symbols are evidence)."""
    text = scrubber(env, random=random).text
    done: dict[tuple[str, str | None], str] = {}  # a structure repeats its strings (a triage's asks, ids, titles)

    def fn(s: str, key: str | None) -> str:
        found = done.get((s, key))
        if found is None:
            found = done[(s, key)] = text(s, key)
        return found

    return walk(value, fn, key_rule=key_rule)
