"""The function overloads of OCM's CEL environment, as cel-go's checker declares them.

upstream: cel-go's standard library (`common/stdlib`), `ext.Strings`, `cel.OptionalTypes`, the
k8s.io/apiserver `pkg/cel/library` libraries OCM registers (lists, regex, URLs, quantity, IP, CIDR,
format, semver) and sdk-go's `scores` and `parseJSON` (both member functions). One line per overload:
`name(params) result` for a global function, `receiver.name(params) result` for a member one. Single
capital letters are type parameters. A trailing `#tag` names the runtime cost rule cel-go applies when
the checker resolves a call to that overload alone (see `cel_cost`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

_NUMBERS = ("int", "uint", "double")
_ORDERED = ("bool", "int", "uint", "double", "string", "bytes", "timestamp", "duration")

_COMPARISONS = "\n".join(
    f"{op}({t}, {t}) bool{' #eq' if t in ('string', 'bytes') else ''}"
    for op in ("_<_", "_<=_", "_>_", "_>=_")
    for t in _ORDERED
)
_ARITHMETIC = "\n".join(f"{op}({t}, {t}) {t}" for op in ("_+_", "_-_", "_*_", "_/_") for t in _NUMBERS)
_TIME_GETTERS = "\n".join(
    f"timestamp.{name}() int\ntimestamp.{name}(string) int"
    for name in (
        "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek", "getHours",
        "getMinutes", "getSeconds", "getMilliseconds",
    )
) + "\n" + "\n".join(
    f"duration.{name}() int" for name in ("getHours", "getMinutes", "getSeconds", "getMilliseconds")
)  # fmt: skip
_LIST_ORDERED = "\n".join(
    f"list({t}).{name}() {result}"
    for t in ("int", "uint", "double", "bool", "string", "bytes", "duration", "timestamp")
    for name, result in (("isSorted", "bool"), ("min", t), ("max", t))
)
_FORMATS = "\n".join(
    f"format.{name}() kubernetes.NamedFormat"
    for name in (
        "dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
        "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
        "datetime",
    )
)  # fmt: skip
_IP_TESTS = "\n".join(
    f"net.IP.{name}() bool"
    for name in (
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
    )
)

_DECLARATIONS = f"""
_==_(A, A) bool #eq
_!=_(A, A) bool #eq
{_COMPARISONS}
{_ARITHMETIC}
_%_(int, int) int
_%_(uint, uint) uint
_+_(string, string) string #concat
_+_(bytes, bytes) bytes #concat
_+_(list(A), list(A)) list(A)
_+_(timestamp, duration) timestamp
_+_(duration, timestamp) timestamp
_+_(duration, duration) duration
_-_(timestamp, timestamp) duration
_-_(timestamp, duration) timestamp
_-_(duration, duration) duration
-_(int) int
-_(double) double
!_(bool) bool
_&&_(bool, bool) bool
_||_(bool, bool) bool
_?_:_(bool, A, A) A
_in_(A, list(A)) bool #in_list
_in_(A, map(A, B)) bool
_[_](list(A), int) A
_[_](map(A, B), A) B
_[_](optional(list(A)), int) optional(A)
_[_](optional(map(A, B)), A) optional(B)
_[?_](list(A), int) optional(A)
_[?_](map(A, B), A) optional(B)
_[?_](optional(list(A)), int) optional(A)
_[?_](optional(map(A, B)), A) optional(B)
size(string) int
size(bytes) int
size(list(A)) int
size(map(A, B)) int
string.size() int
bytes.size() int
list(A).size() int
map(A, B).size() int
int(int) int
int(uint) int
int(double) int
int(string) int
int(timestamp) int
uint(int) uint
uint(uint) uint
uint(double) uint
uint(string) uint
double(int) double
double(uint) double
double(double) double
double(string) double
string(int) string
string(uint) string
string(double) string
string(bool) string
string(string) string
string(bytes) string #text
string(timestamp) string
string(duration) string
string(net.IP) string
string(net.CIDR) string
bytes(string) bytes #text
bytes(bytes) bytes
bool(bool) bool
bool(string) bool
duration(string) duration
duration(duration) duration
timestamp(string) timestamp
timestamp(timestamp) timestamp
timestamp(int) timestamp
type(A) type
dyn(A) dyn
matches(string, string) bool
string.matches(string) bool #matches
string.contains(string) bool #contains
string.startsWith(string) bool #text
string.endsWith(string) bool #text
{_TIME_GETTERS}
string.charAt(int) string
string.indexOf(string) int
string.indexOf(string, int) int
string.lastIndexOf(string) int
string.lastIndexOf(string, int) int
string.lowerAscii() string
string.upperAscii() string
string.replace(string, string) string
string.replace(string, string, int) string
string.split(string) list(string)
string.split(string, int) list(string)
string.substring(int) string
string.substring(int, int) string
string.trim() string
string.reverse() string
string.format(list(dyn)) string #text
strings.quote(string) string #text
list(string).join() string
list(string).join(string) string
{_LIST_ORDERED}
list(int).sum() int
list(uint).sum() uint
list(double).sum() double
list(duration).sum() duration
list(A).indexOf(A) int
list(A).lastIndexOf(A) int
string.find(string) string
string.findAll(string) list(string)
string.findAll(string, int) list(string)
url(string) kubernetes.URL
isURL(string) bool
kubernetes.URL.getScheme() string
kubernetes.URL.getHost() string
kubernetes.URL.getHostname() string
kubernetes.URL.getPort() string
kubernetes.URL.getEscapedPath() string
kubernetes.URL.getQuery() map(string, list(string))
quantity(string) kubernetes.Quantity
isQuantity(string) bool
kubernetes.Quantity.isInteger() bool
kubernetes.Quantity.asInteger() int
kubernetes.Quantity.asApproximateFloat() double
sign(kubernetes.Quantity) int
kubernetes.Quantity.add(kubernetes.Quantity) kubernetes.Quantity
kubernetes.Quantity.add(int) kubernetes.Quantity
kubernetes.Quantity.sub(kubernetes.Quantity) kubernetes.Quantity
kubernetes.Quantity.sub(int) kubernetes.Quantity
kubernetes.Quantity.isGreaterThan(kubernetes.Quantity) bool
kubernetes.Quantity.isLessThan(kubernetes.Quantity) bool
kubernetes.Quantity.compareTo(kubernetes.Quantity) int
ip(string) net.IP
isIP(string) bool
ip.isCanonical(string) bool
net.IP.family() int
{_IP_TESTS}
cidr(string) net.CIDR
isCIDR(string) bool
net.CIDR.containsIP(string) bool
net.CIDR.containsIP(net.IP) bool
net.CIDR.containsCIDR(string) bool
net.CIDR.containsCIDR(net.CIDR) bool
net.CIDR.ip() net.IP
net.CIDR.masked() net.CIDR
net.CIDR.prefixLength() int
format.named(string) optional(kubernetes.NamedFormat)
{_FORMATS}
kubernetes.NamedFormat.validate(string) optional(list(string))
semver(string) kubernetes.Semver
isSemver(string) bool
kubernetes.Semver.major() int
kubernetes.Semver.minor() int
kubernetes.Semver.patch() int
kubernetes.Semver.isGreaterThan(kubernetes.Semver) bool
kubernetes.Semver.isLessThan(kubernetes.Semver) bool
kubernetes.Semver.compareTo(kubernetes.Semver) int
optional.of(A) optional(A)
optional.ofNonZeroValue(A) optional(A)
optional.none() optional(A)
optional(A).value() A
optional(A).hasValue() bool
optional(A).or(optional(A)) optional(A)
optional(A).orValue(A) A
list(A).first() optional(A)
list(A).last() optional(A)
optional.unwrap(list(optional(A))) list(A)
list(optional(A)).unwrapOpt() list(A)
dyn.scores(string) list(dyn)
string.parseJSON() dyn
"""


@dataclass(frozen=True, slots=True)
class CelType:
    """A checker type: a name with type arguments; single capital letters are type parameters."""

    name: str
    args: tuple[CelType, ...] = ()

    @property
    def is_param(self) -> bool:
        return len(self.name) == 1 and self.name.isupper()

    def __str__(self) -> str:
        shown = {"optional": "optional_type", "null": "null_type"}.get(self.name, self.name)
        return f"{shown}({', '.join(map(str, self.args))})" if self.args else shown


DYN = CelType("dyn")
BOOL = CelType("bool")
STRING = CelType("string")


def parse_type(text: str) -> CelType:
    """`list(map(string, A))` and the like."""
    text = text.strip()
    name, paren, rest = text.partition("(")
    if not paren:
        return CelType(name)
    args, depth, start = [], 0, 0
    inner = rest[:-1]
    for index, char in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            args.append(parse_type(inner[start:index]))
            start = index + 1
    args.append(parse_type(inner[start:]))
    return CelType(name.strip(), tuple(args))


@dataclass(frozen=True, slots=True)
class Overload:
    params: tuple[CelType, ...]  # the receiver first for a member overload
    result: CelType
    cost_tag: str = ""


@dataclass(slots=True)
class Declarations:
    """Overloads by function name, global and member ones apart."""

    global_: dict[str, list[Overload]] = field(default_factory=dict)
    member: dict[str, list[Overload]] = field(default_factory=dict)


def _split_params(text: str) -> list[str]:
    params, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            params.append(text[start:index])
            start = index + 1
    tail = text[start:].strip()
    return [*params, tail] if tail else params


def _parse_line(line: str) -> tuple[str, bool, Overload]:
    signature, _, tag = line.partition("#")
    # the call ends at the first closing parenthesis that balances and is followed by the result
    depth, end = 0, 0
    for index, char in enumerate(signature):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ")" and depth == 0 and signature[index + 1 : index + 2] == " ":
            end = index
            break
    call, result = signature[: end + 1], signature[end + 1 :]
    open_at = end
    while depth < 1:
        open_at -= 1
        depth += {"(": 1, ")": -1}.get(call[open_at], 0)
    head, params = call[:open_at], [parse_type(p) for p in _split_params(call[open_at + 1 : -1])]
    receiver, dot, name = head.rpartition(".")
    # `optional.of`, `format.named`, `ip.isCanonical`, `strings.quote`: namespaced global functions
    if dot and receiver in ("optional", "format", "ip", "strings"):
        receiver, dot, name = "", "", head
    if dot:
        params = [parse_type(receiver), *params]
    return name, bool(dot), Overload(tuple(params), parse_type(result), tag.strip())


@cache
def declarations() -> Declarations:
    table = Declarations()
    for line in _DECLARATIONS.strip().splitlines():
        name, member, overload = _parse_line(line)
        (table.member if member else table.global_).setdefault(name, []).append(overload)
    return table
