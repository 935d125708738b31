"""The Kubernetes CEL libraries upstream OCM registers, as celpy runtime functions.

upstream: sdk-go `pkg/cel/common.BaseEnvOpts` adds cel-go's optional types and strings extension and
the k8s.io/apiserver `pkg/cel/library` libraries: lists, regex, URLs, quantity (in `cel.py`), IP, CIDR,
format and semver (without the normalizing overloads, which `SemverLib()` leaves out by default).
Each function follows the Go one: a failure is a CEL error (the expression does not match), never an
exception. Values of the library types are small frozen dataclasses so CEL equality compares them the
way the Go types' `Equal` does. cel-go's own runtime rules that cel-python does otherwise are here
too: equality across value types (numbers by value, other types unequal instead of an error),
ordering across int, uint and double, and `string()` of doubles, bools, durations and timestamps as
Go prints them.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, wraps
from typing import Any
from urllib.parse import quote, unquote

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information
from celpy import celtypes
from celpy.evaluation import CELEvalError, bool_ge, bool_gt, bool_le, bool_lt

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _error(message: str) -> CELEvalError:
    return CELEvalError(message)


# --- optional types (cel-go `cel.OptionalTypes`) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class CelOptional:
    """`optional_type`: a value or none."""

    value: Any = None
    present: bool = False


_NONE = CelOptional()


def _optional_of(value: Any) -> CelOptional:
    return CelOptional(value, True)


def _optional_none() -> CelOptional:
    return _NONE


def _is_zero(value: Any) -> bool:
    # cel-go ofNonZeroValue: the type's zero value (false, 0, "", b"", [], {}, null) is none
    if value is None or isinstance(value, bool | int | float | str | bytes | list | dict):
        return not value
    return False


def _optional_of_non_zero(value: Any) -> CelOptional:
    return _NONE if _is_zero(value) else CelOptional(value, True)


def _has_value(optional: CelOptional) -> celtypes.BoolType:
    return celtypes.BoolType(optional.present)


def _value(optional: CelOptional) -> Any:
    return optional.value if optional.present else _error("optional.none() dereference")


def _or(optional: CelOptional, other: CelOptional) -> CelOptional:
    return optional if optional.present else other


def _or_value(optional: CelOptional, default: Any) -> Any:
    return optional.value if optional.present else default


def _first(items: Sequence[Any]) -> CelOptional:
    return CelOptional(items[0], True) if items else _NONE


def _last(items: Sequence[Any]) -> CelOptional:
    return CelOptional(items[-1], True) if items else _NONE


def _unwrap(items: Sequence[Any]) -> celtypes.ListType | CELEvalError:
    """`optional.unwrap(list)` / `list.unwrapOpt()`: the values of the optionals that have one."""
    if not all(isinstance(item, CelOptional) for item in items):
        return _error("value is not optional")
    return celtypes.ListType(item.value for item in items if item.present)


# --- semver (k8s `SemverLib`, parsing as github.com/blang/semver/v4 `Parse`) --------------------

_NUMERIC = re.compile(r"[0-9]+")
_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")


@dataclass(frozen=True, slots=True, eq=False)
class CelSemver:
    """`kubernetes.Semver`; build metadata is ignored by ordering and equality (blang `Equals`)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]
    build: tuple[str, ...]

    def compare(self, other: CelSemver) -> int:
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for left, right in zip(self.pre, other.pre, strict=False):
            if left == right:
                continue
            if isinstance(left, int) != isinstance(right, int):
                return -1 if isinstance(left, int) else 1  # numeric identifiers sort first
            return -1 if left < right else 1  # type: ignore[operator]
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelSemver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))


def _semver_number(text: str, what: str) -> int:
    if not _NUMERIC.fullmatch(text):
        raise ValueError(f"Invalid character(s) found in {what} number {text!r}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what} number must not contain leading zeroes {text!r}")
    value = int(text)
    if value >= 2**64:
        raise ValueError(f"{what} number out of range")
    return value


def parse_semver(text: str) -> CelSemver:
    """blang/semver `Parse`; raises ValueError like its errors."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major, minor = _semver_number(parts[0], "Major"), _semver_number(parts[1], "Minor")
    rest = parts[2]
    index = next((i for i, c in enumerate(rest) if c in "+-"), len(rest))
    patch = _semver_number(rest[:index], "Patch")
    pre: list[int | str] = []
    build: list[str] = []
    rest = rest[index:]
    if rest.startswith("-"):
        pre_text, _, build_text = rest[1:].partition("+")
        rest = "+" + build_text if "+" in rest else ""
        for part in pre_text.split("."):
            if not part or not _IDENTIFIER.fullmatch(part):
                raise ValueError(f"Invalid character(s) found in prerelease {part!r}")
            if _NUMERIC.fullmatch(part):
                pre.append(_semver_number(part, "PreRelease"))
            else:
                pre.append(part)
    if rest.startswith("+"):
        for part in rest[1:].split("."):
            if not part or not _IDENTIFIER.fullmatch(part):
                raise ValueError(f"Invalid character(s) found in build meta data {part!r}")
            build.append(part)
    return CelSemver(major, minor, patch, tuple(pre), tuple(build))


def _semver(text: str) -> CelSemver | CELEvalError:
    try:
        return parse_semver(text)
    except ValueError as exc:
        return _error(str(exc))


def _is_semver(text: str) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(_semver(text), CelSemver))


# --- regex (k8s `Regex`: Go regexp FindString / FindAllString) -----------------------------------


# a pattern RE2 refuses is reported as a CEL error, not logged to stderr
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@lru_cache(maxsize=256)
def compile_regex(pattern: str) -> re2._Regexp:
    """Compile with RE2, whose syntax Go's regexp shares (`\\d` is ASCII, `$` is the end of the text,
    `\\Q...\\E` quotes, no lookarounds); raises re.error for a pattern it refuses."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        raise re.error(reason.decode() if isinstance(reason, bytes) else str(reason)) from None


def _matches(text: str, pattern: str) -> celtypes.BoolType | CELEvalError:
    """The standard `matches`, with the same compiled patterns as `find` (RE2, as cel-go)."""
    try:
        return celtypes.BoolType(compile_regex(pattern).search(text) is not None)
    except re.error as exc:
        return _error(f"Illegal regex: {exc}")


def _find(text: str, pattern: str) -> celtypes.StringType | CELEvalError:
    try:
        match = compile_regex(pattern).search(text)
    except re.error as exc:
        return _error(f"Illegal regex: {exc}")
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: str, pattern: str, limit: int = -1) -> celtypes.ListType | CELEvalError:
    """Go `FindAllString`: an empty match right after the previous match is skipped, so `(ab)*` on
    `abab` finds `abab` only."""
    try:
        regex = compile_regex(pattern)
    except re.error as exc:
        return _error(f"Illegal regex: {exc}")
    found: list[celtypes.StringType] = []
    position, previous_end = 0, -1
    while position <= len(text) and (limit < 0 or len(found) < limit):
        match = regex.search(text, position)
        if match is None:
            break
        start, end = match.span()
        if end == position:
            # an empty match: the next search starts one character on
            if start != previous_end:
                found.append(celtypes.StringType(""))
            position += 1
        else:
            found.append(celtypes.StringType(match.group(0)))
            position = end
        previous_end = end
    return celtypes.ListType(found)


# --- lists (k8s `Lists`) -----------------------------------------------------------------------


def _min(items: Sequence[Any]) -> Any:
    if not items:
        return _error("min called on empty list")
    return min(items)


def _max(items: Sequence[Any]) -> Any:
    if not items:
        return _error("max called on empty list")
    return max(items)


# --- URLs (k8s `URLs`, parsing as Go net/url) ---------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


# Characters Go's net/url leaves as they are: in a path (`shouldEscape` with encodePath), in an
# already escaped path (`validEncoded`) and in a host name (encodeHost).
_PATH_SAFE = "$&+,/:;=@"
_ENCODED_PATH = re.compile(r"[A-Za-z0-9\-_.~!$&'()*+,;=:@\[\]/%]*")
_HOST = re.compile(r"[A-Za-z0-9\-_.~!$&'()*+,;=:\[\]<>\"%]*")


@dataclass(frozen=True, slots=True)
class CelURL:
    """`kubernetes.URL`; `path` is as written (Go's RawPath when it differs from the escaped form)."""

    scheme: str
    host: str
    path: str
    query: str

    @property
    def escaped_path(self) -> str:
        """Go `URL.EscapedPath`: the written path when it is validly escaped, else the escaped path."""
        if _ENCODED_PATH.fullmatch(self.path):
            return self.path
        return quote(unquote(self.path), safe=_PATH_SAFE)

    @property
    def hostname(self) -> str:
        host = self.host
        if host.startswith("["):
            return host[1 : host.find("]")] if "]" in host else host[1:]
        return host.rpartition(":")[0] if ":" in host else host

    @property
    def port(self) -> str:
        host = self.host[self.host.rfind("]") + 1 :] if self.host.startswith("[") else self.host
        return host.rpartition(":")[2] if ":" in host else ""


def parse_url(text: str, request: bool) -> CelURL:
    """Go `url.ParseRequestURI` (request) or `url.Parse`; raises ValueError for what Go refuses."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError("net/url: invalid control character in URL")
    if not request:
        text = text.partition("#")[0]
    if not text:
        raise ValueError("empty url")
    scheme, rest = "", text
    colon = text.find(":")
    if colon == 0:
        raise ValueError("missing protocol scheme")
    if colon > 0 and _SCHEME.fullmatch(text[:colon]):
        scheme, rest = text[:colon].lower(), text[colon + 1 :]
    rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return CelURL(scheme, "", "", query)  # opaque, as `mailto:x`
        if request:
            raise ValueError("invalid URI for request")
    host = ""
    if rest.startswith("//") and (scheme or not request):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        host = _parse_authority(authority)
    if _BAD_ESCAPE.search(rest):
        raise ValueError("invalid URL escape")
    return CelURL(scheme, host, rest, query)


def _parse_authority(authority: str) -> str:
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        close = host.find("]")
        if close < 0:
            raise ValueError("missing ']' in host")
        port = host[close + 1 :]
    else:
        port = host[host.find(":") :] if ":" in host else ""
        if ":" in port[1:]:
            raise ValueError(f"invalid port {port!r} after host")
    if port and (not port.startswith(":") or not all(c.isdigit() and c.isascii() for c in port[1:])):
        raise ValueError(f"invalid port {port!r} after host")
    if _BAD_ESCAPE.search(host) or not _HOST.fullmatch(host):
        raise ValueError(f"invalid character in host name {host!r}")
    return host


def _url(text: str) -> CelURL | CELEvalError:
    try:
        parse_url(text, request=True)
        return parse_url(text, request=False)
    except ValueError as exc:
        return _error(f"URL parse error during conversion from string: {exc}")


def _is_url(text: str) -> celtypes.BoolType:
    try:
        parse_url(text, request=True)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _query(url: CelURL) -> celtypes.MapType:
    """Go `url.Values` of the query: pairs that fail to unescape or hold ';' are dropped."""
    values: dict[str, list[str]] = {}
    for pair in url.query.split("&"):
        if not pair or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        if _BAD_ESCAPE.search(pair):
            continue
        values.setdefault(unquote(key.replace("+", " ")), []).append(unquote(value.replace("+", " ")))
    return celtypes.MapType(
        {
            celtypes.StringType(k): celtypes.ListType(celtypes.StringType(v) for v in vs)
            for k, vs in values.items()
        }
    )


def _url_part(part: Callable[[CelURL], str]) -> Callable[[CelURL], celtypes.StringType]:
    return lambda url: celtypes.StringType(part(url))


# --- IP and CIDR (k8s `IP`, `CIDR`, parsing as Go net/netip) -------------------------------------


@dataclass(frozen=True, slots=True)
class CelIP:
    """`net.IP`: prints as Go `netip.Addr.String`."""

    address: IPAddress

    def __str__(self) -> str:
        return self.address.compressed


@dataclass(frozen=True, slots=True)
class CelCIDR:
    """`net.CIDR`: the address as written (unmasked) and the prefix length."""

    address: IPAddress
    bits: int

    def __str__(self) -> str:
        return f"{self.address.compressed}/{self.bits}"

    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(f"{self.address}/{self.bits}", strict=False)


def parse_ip(text: str) -> IPAddress:
    """netip.ParseAddr without zones or IPv4-mapped IPv6 (the library refuses both)."""
    if "%" in text:
        raise ValueError(f"IP address {text!r} with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError as exc:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string: {exc}") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def parse_cidr(text: str) -> CelCIDR:
    """netip.ParsePrefix: `address/bits`, decimal bits without leading zeros."""
    address_text, slash, bits_text = text.rpartition("/")
    if not slash:
        raise ValueError(f"netip.ParsePrefix({text!r}): no '/'")
    if not bits_text.isascii() or not bits_text.isdigit() or (len(bits_text) > 1 and bits_text[0] == "0"):
        raise ValueError(f"netip.ParsePrefix({text!r}): bad bits after slash: {bits_text!r}")
    address = parse_ip(address_text)
    bits = int(bits_text)
    if bits > address.max_prefixlen:
        raise ValueError(f"netip.ParsePrefix({text!r}): prefix length out of range")
    return CelCIDR(address, bits)


def _ip(text: str) -> CelIP | CELEvalError:
    try:
        return CelIP(parse_ip(text))
    except ValueError as exc:
        return _error(str(exc))


def _cidr(text: str) -> CelCIDR | CELEvalError:
    try:
        return parse_cidr(text)
    except ValueError as exc:
        return _error(f"network address parse error during conversion from string: {exc}")


def _ip_or_cidr(argument: Any) -> Any:
    """`ip(string)` and the CIDR library's `cidr.ip()` share one name."""
    if isinstance(argument, CelCIDR):
        return CelIP(argument.address)
    return _ip(argument)


def _is_ip(text: str) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(_ip(text), CelIP))


def _is_cidr(text: str) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(_cidr(text), CelCIDR))


def _is_canonical(text: str) -> celtypes.BoolType | CELEvalError:
    address = _ip(text)
    return address if isinstance(address, CELEvalError) else celtypes.BoolType(str(address) == text)


def _family(address: CelIP) -> celtypes.IntType:
    return celtypes.IntType(address.address.version)


def _is_link_local_multicast(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("224.0.0.0/24")
    return (int(address) >> 112) & 0xFF0F == 0xFF02


def _is_global_unicast(address: IPAddress) -> bool:
    # Go netip IsGlobalUnicast: private ranges count as global unicast
    broadcast = address == ipaddress.IPv4Address("255.255.255.255")
    return not (
        address.is_unspecified
        or broadcast
        or address.is_loopback
        or address.is_multicast
        or address.is_link_local
    )


def _ip_test(test: Callable[[IPAddress], bool]) -> Callable[[CelIP], celtypes.BoolType]:
    return lambda address: celtypes.BoolType(test(address.address))


def _contains_ip(cidr: CelCIDR, other: Any) -> celtypes.BoolType | CELEvalError:
    address = _ip(other) if isinstance(other, str) else other
    if isinstance(address, CELEvalError):
        return address
    return celtypes.BoolType(address.address in cidr.network())


def _contains_cidr(cidr: CelCIDR, other: Any) -> celtypes.BoolType | CELEvalError:
    inner = _cidr(other) if isinstance(other, str) else other
    if isinstance(inner, CELEvalError):
        return inner
    if inner.address.version != cidr.address.version or inner.bits < cidr.bits:
        return celtypes.BoolType(False)
    return celtypes.BoolType(inner.network().subnet_of(cidr.network()))  # type: ignore[arg-type]


def _masked(cidr: CelCIDR) -> CelCIDR:
    return CelCIDR(cidr.network().network_address, cidr.bits)


def _prefix_length(cidr: CelCIDR) -> celtypes.IntType:
    return celtypes.IntType(cidr.bits)


# --- format (k8s `Format`: apimachinery name validators and kube-openapi strfmt) -----------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")


def _shaped(text: str, pattern: re.Pattern[str], limit: int, what: str) -> list[str]:
    problems = [f"must be no more than {limit} characters"] if len(text) > limit else []
    if not pattern.fullmatch(text):
        problems.append(f"a {what} must match the regex {pattern.pattern!r}")
    return problems


def _mask_trailing_dash(text: str) -> str:
    # apimachinery maskTrailingDash: a generateName prefix may end in '-'
    return text[:-2] + "a" if len(text) > 1 and text.endswith("-") else text


def _qualified_name(text: str) -> list[str]:
    prefix, slash, name = text.rpartition("/")
    problems: list[str] = []
    if slash:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += _shaped(prefix, _DNS1123_SUBDOMAIN, 253, "DNS-1123 subdomain")
    if not name:
        return [*problems, "name part must be non-empty"]
    if "/" in prefix:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.'"]
    return problems + _shaped(name, _QUALIFIED_NAME, 63, "qualified name")


def _is_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _TIME.search(parts[1]) if parts[1] else None
    if match is None or not _TIME.match(parts[1]):
        return False
    return match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _is_base64(text: str) -> bool:
    if not _BASE64.fullmatch(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except binascii.Error:
        return False
    return True


def _uri(text: str) -> list[str]:
    try:
        parse_url(text, request=True)
    except ValueError as exc:
        return [str(exc)]
    return []


def _check(test: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if test(text) else [message]


@dataclass(frozen=True, slots=True)
class CelFormat:
    """`kubernetes.NamedFormat`."""

    name: str
    check: Callable[[str], list[str]]


FORMATS: dict[str, CelFormat] = {
    "dns1123Label": CelFormat(
        "DNS1123Label", lambda s: _shaped(s, _DNS1123_LABEL, 63, "lowercase RFC 1123 label")
    ),
    "dns1123Subdomain": CelFormat(
        "DNS1123Subdomain", lambda s: _shaped(s, _DNS1123_SUBDOMAIN, 253, "lowercase RFC 1123 subdomain")
    ),
    "dns1035Label": CelFormat("DNS1035Label", lambda s: _shaped(s, _DNS1035_LABEL, 63, "DNS-1035 label")),
    "qualifiedName": CelFormat("QualifiedName", _qualified_name),
    "dns1123LabelPrefix": CelFormat(
        "DNS1123LabelPrefix",
        lambda s: _shaped(_mask_trailing_dash(s), _DNS1123_LABEL, 63, "lowercase RFC 1123 label"),
    ),
    "dns1123SubdomainPrefix": CelFormat(
        "DNS1123SubdomainPrefix",
        lambda s: _shaped(_mask_trailing_dash(s), _DNS1123_SUBDOMAIN, 253, "lowercase RFC 1123 subdomain"),
    ),
    "dns1035LabelPrefix": CelFormat(
        "DNS1035LabelPrefix",
        lambda s: _shaped(_mask_trailing_dash(s), _DNS1035_LABEL, 63, "DNS-1035 label"),
    ),
    "labelValue": CelFormat("LabelValue", lambda s: _shaped(s, _LABEL_VALUE, 63, "valid label")),
    "uri": CelFormat("URI", _uri),
    "uuid": CelFormat("uuid", _check(lambda s: bool(_UUID.fullmatch(s)), "does not match the UUID format")),
    "byte": CelFormat("byte", _check(_is_base64, "invalid base64")),
    "date": CelFormat("date", _check(_is_date, "invalid date")),
    "datetime": CelFormat("datetime", _check(_is_datetime, "invalid datetime")),
}  # fmt: skip


def _format_named(name: str) -> CelOptional:
    found = FORMATS.get(name)
    return _NONE if found is None else CelOptional(found, True)


def _validate(form: CelFormat, text: str) -> CelOptional:
    problems = form.check(text)
    return (
        CelOptional(celtypes.ListType(celtypes.StringType(p) for p in problems), True) if problems else _NONE
    )


def _constant_format(form: CelFormat) -> Callable[[], CelFormat]:
    return lambda: form


# --- string.format (cel-go ext.Strings, its latest version: `parseFormatStringV2`) ----------------


class _FormatError(Exception):
    pass


def _shortest(value: float) -> str:
    """Go strconv.FormatFloat(v, 'f', -1, 64): the shortest digits that round-trip, no exponent."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    text = format(Decimal(repr(float(value))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _format_value(value: Any) -> str:
    """The `%s` form of any CEL value."""
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if isinstance(value, int | celtypes.IntType | celtypes.UintType):
        return str(int(value))
    if isinstance(value, float):
        return _shortest(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return str(value)
    if isinstance(value, celtypes.DurationType):
        return _shortest(value.total_seconds()) + "s"
    if isinstance(value, celtypes.TimestampType):
        stamp = value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
        return stamp + "Z"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(item) for item in value) + "]"
    if isinstance(value, dict):
        entries = sorted((_format_value(k), _format_value(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
    raise _FormatError(f"string clause can only be used on strings, got {type(value).__name__}")


def _go_int_verb(verb: str, precision: int, value: Any) -> str:
    """What Go's fmt prints for an integer under a float verb (cel-go passes it through as is): the
    bad-verb form, whose number keeps the clause's precision as a minimum digit count."""
    kind = "uint64" if isinstance(value, celtypes.UintType) else "int64"
    number = int(value)
    digits = "" if precision == 0 and number == 0 else f"{abs(number):0{precision}d}"
    return f"%!{verb}({kind}={'-' if number < 0 else ''}{digits})"


def _format_number(verb: str, precision: int, value: Any) -> str:
    integer = isinstance(value, int) and not isinstance(value, celtypes.BoolType)
    if verb == "d":
        if integer:
            return str(int(value))
        if isinstance(value, float):
            return _shortest(value)
    elif verb in "fe":
        if integer:
            return _go_int_verb(verb, precision, value)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                return _shortest(value)
            return format(value, f".{precision}{verb}")
    elif verb == "b":
        if isinstance(value, celtypes.BoolType):
            return "1" if value else "0"
        if integer:
            return format(int(value), "b")
    elif verb == "o" and integer:
        return format(int(value), "o")
    elif verb in "xX":
        if integer:
            return format(int(value), verb)
        if isinstance(value, str | bytes):
            data = value.encode() if isinstance(value, str) else bytes(value)
            return data.hex().upper() if verb == "X" else data.hex()
    raise _FormatError(f"clause %{verb} cannot format {type(value).__name__}")


# The argument kinds each clause accepts, as cel-go's format validator checks a constant template.
FORMAT_CLAUSE_KINDS: dict[str, frozenset[str]] = {
    "s": frozenset({"int", "uint", "double", "bool", "string", "bytes", "null", "list", "map"}),
    "d": frozenset({"int", "uint", "double"}),
    "f": frozenset({"int", "uint", "double"}),
    "e": frozenset({"int", "uint", "double"}),
    "b": frozenset({"bool", "int", "uint"}),
    "x": frozenset({"int", "uint", "string", "bytes"}),
    "X": frozenset({"int", "uint", "string", "bytes"}),
    "o": frozenset({"int", "uint"}),
}


def format_clauses(template: str) -> list[str]:
    """The clause letters of a format template in order; raises ValueError for a malformed one."""
    clauses = []
    for match in re.finditer(r"%(%|(?:\.[0-9]*)?(.)|$)", template):
        if match.group(1) == "%":
            continue
        verb = match.group(2)
        if verb is None:
            raise ValueError("unexpected end of string")
        if verb not in FORMAT_CLAUSE_KINDS:
            raise ValueError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
        clauses.append(verb)
    return clauses


def _string_format(template: str, arguments: Sequence[Any]) -> celtypes.StringType | CELEvalError:
    out: list[str] = []
    index, position = 0, 0
    try:
        while position < len(template):
            char = template[position]
            if char != "%":
                out.append(char)
                position += 1
                continue
            if template[position + 1 : position + 2] == "%":
                out.append("%")
                position += 2
                continue
            if index >= len(arguments):
                raise _FormatError(f"index {index} out of range")
            clause = re.match(r"(?:\.([0-9]*))?(.)", template[position + 1 :])
            if clause is None:
                raise _FormatError("unexpected end of string")
            precision = int(clause.group(1)) if clause.group(1) else 6
            verb = clause.group(2)
            value = arguments[index]
            if verb == "s":
                out.append(_format_value(value))
            elif verb in "dfebxXo":
                out.append(_format_number(verb, precision, value))
            else:
                raise _FormatError(f'unrecognized formatting clause "{verb}"')
            position += 1 + clause.end()
            index += 1
    except _FormatError as exc:
        return _error(f"error during formatting: {exc}")
    return celtypes.StringType("".join(out))


# --- cel-go runtime rules cel-python does otherwise ----------------------------------------------


def _strict(function: Callable[..., Any]) -> Callable[..., Any]:
    """A CEL function whose error argument is its result (cel-python hands errors to functions)."""

    @wraps(function)
    def call(*arguments: Any) -> Any:
        error = next((a for a in arguments if isinstance(a, CELEvalError)), None)
        return error if error is not None else function(*arguments)

    return call


# string() conversions, as cel-go's `ConvertToType(StringType)`


def _general(value: float) -> str:
    """Go's `%g` of a float64: the shortest digits that round-trip, in exponent form when the decimal
    exponent is below -4 or at least 6 (`1.234567e+06`, `1e-05`), else plain (`123456`, `0.5`)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # digits before the decimal point
    if not -4 <= point - 1 < 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{point - 1:+03d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _timestamp_text(value: datetime.datetime) -> str:
    """Go's RFC3339Nano: the fraction without trailing zeros, `Z` for UTC, else the offset."""
    text = value.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
    offset = value.utcoffset()
    if not offset:
        return text + "Z"
    minutes = int(offset.total_seconds()) // 60
    return f"{text}{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


@_strict
def _to_string(value: Any) -> Any:
    """`string(x)`: cel-python prints doubles, bools, durations and timestamps the Python way."""
    if isinstance(value, celtypes.BoolType):
        return celtypes.StringType("true" if value else "false")
    if isinstance(value, float):
        return celtypes.StringType(_general(float(value)))
    if isinstance(value, celtypes.DurationType):
        return celtypes.StringType(_shortest(value.total_seconds()) + "s")
    if isinstance(value, celtypes.TimestampType):
        return celtypes.StringType(_timestamp_text(value))
    return celtypes.StringType(value)


# equality and ordering: cel-go compares numbers across int, uint and double


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, celtypes.BoolType)


def native(value: Any) -> int | float:
    return float(value) if isinstance(value, float) else int(value)


def _kind(value: Any) -> type:
    """The CEL type of a value as equality tells them apart (celpy's types subclass Python's)."""
    for kind in (celtypes.BoolType, str, bytes, celtypes.DurationType, celtypes.TimestampType):
        if isinstance(value, kind):
            return kind
    return type(value)


def _map_value(container: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """(found, value) of `key`: numeric keys of different types are one key when their values are."""
    if not is_number(key):
        return (key in container, container.get(key)) if isinstance(key, str | bool) else (False, None)
    for candidate, value in container.items():
        if is_number(candidate) and native(candidate) == native(key):
            return True, value
    return False, None


def equals(left: Any, right: Any) -> bool:
    """cel-go runtime equality: numbers compare by value whatever their type (`dyn(2) == 2.0`), lists
    and maps element by element, optionals by presence and value, and values of two other types are
    unequal rather than an error."""
    kind = left.__class__
    if kind is right.__class__:
        # the common cases first, as the general tests below decide them
        if kind is celtypes.StringType or kind is celtypes.BoolType:
            return bool(left == right)
        if kind is celtypes.IntType:
            return int(left) == int(right)
    if is_number(left) and is_number(right):
        return native(left) == native(right)
    if isinstance(left, CelOptional) or isinstance(right, CelOptional):
        return (
            isinstance(left, CelOptional)
            and isinstance(right, CelOptional)
            and left.present == right.present
            and (not left.present or equals(left.value, right.value))
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(equals(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        if len(left) != len(right):
            return False
        for key, value in left.items():
            found, other = _map_value(right, key)
            if not found or not equals(value, other):
                return False
        return True
    if _kind(left) != _kind(right):
        return False
    try:
        return bool(left == right)
    except TypeError:
        return False


@_strict
def _contains(item: Any, container: Any) -> celtypes.BoolType | CELEvalError:
    """`item in container`: an element of a list, a key of a map, with the equality above."""
    if isinstance(container, list):
        return celtypes.BoolType(any(equals(item, element) for element in container))
    if isinstance(container, Mapping):
        return celtypes.BoolType(_map_value(container, item)[0])
    return _error("no such overload: @in")


def _ordering(
    test: Callable[[Any, Any], bool], same_type: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    """An ordering operator: cel-go orders int, uint and double values across their types."""

    @_strict
    def compare(left: Any, right: Any) -> Any:
        if is_number(left) and is_number(right):
            return celtypes.BoolType(test(native(left), native(right)))
        return same_type(left, right)

    return compare


# --- dispatch of names several libraries share ---------------------------------------------------


def _reverse(text: str) -> celtypes.StringType:
    return celtypes.StringType(text[::-1])


def _quote(text: str) -> celtypes.StringType:
    """ext.Strings `strings.quote`: a double-quoted CEL string literal."""
    escapes = {"\\": "\\\\", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
               "\r": "\\r", "\t": "\\t", "\v": "\\v"}  # fmt: skip
    return celtypes.StringType('"' + "".join(escapes.get(c, c) for c in text) + '"')


LIBRARY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "string": _to_string,
    "_in_": _contains,
    "_<_": _ordering(operator.lt, bool_lt),
    "_<=_": _ordering(operator.le, bool_le),
    "_>_": _ordering(operator.gt, bool_gt),
    "_>=_": _ordering(operator.ge, bool_ge),
    "optional.of": _optional_of,
    "optional.none": _optional_none,
    "optional.ofNonZeroValue": _optional_of_non_zero,
    "hasValue": _has_value,
    "value": _value,
    "or": _or,
    "orValue": _or_value,
    "first": _first,
    "last": _last,
    "optional.unwrap": _unwrap,
    "unwrapOpt": _unwrap,
    "semver": _semver,
    "isSemver": _is_semver,
    "major": lambda version: celtypes.IntType(version.major),
    "minor": lambda version: celtypes.IntType(version.minor),
    "patch": lambda version: celtypes.IntType(version.patch),
    "matches": _matches,
    "find": _find,
    "findAll": _find_all,
    "min": _min,
    "max": _max,
    "url": _url,
    "isURL": _is_url,
    "getScheme": _url_part(lambda url: url.scheme),
    "getHost": _url_part(lambda url: url.host),
    "getHostname": _url_part(lambda url: url.hostname),
    "getPort": _url_part(lambda url: url.port),
    "getEscapedPath": _url_part(lambda url: url.escaped_path),
    "getQuery": _query,
    "ip": _ip_or_cidr,
    "isIP": _is_ip,
    "ip.isCanonical": _is_canonical,
    "family": _family,
    "isUnspecified": _ip_test(lambda a: a.is_unspecified),
    "isLoopback": _ip_test(lambda a: a.is_loopback),
    "isLinkLocalMulticast": _ip_test(_is_link_local_multicast),
    "isLinkLocalUnicast": _ip_test(lambda a: a.is_link_local),
    "isGlobalUnicast": _ip_test(_is_global_unicast),
    "cidr": _cidr,
    "isCIDR": _is_cidr,
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "masked": _masked,
    "prefixLength": _prefix_length,
    "format.named": _format_named,
    "validate": _validate,
    "reverse": _reverse,
    "format": _string_format,
    "strings.quote": _quote,
    **{f"format.{name}": _constant_format(form) for name, form in FORMATS.items()},
}
