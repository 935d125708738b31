"""CEL cluster selectors of Placement predicates (`celSelector.celExpressions`).

upstream: ocm `pkg/placement/helpers/cel.go` with the environment of sdk-go `pkg/cel` (variable
`managedCluster`, member function `scores`, `parseJSON`, and the k8s `BaseEnvOpts` libraries).

Parsing uses cel-python's grammar with cel-go's optional syntax (`cel_syntax`). Compiling checks as
cel-go does: every identifier must be `managedCluster`, a type name or a comprehension variable, and
every function must exist in the upstream environment (`undeclared reference to '<name>' (in container
'')`); then the types (`cel_check`): a call no overload accepts fails to compile. Namespaced functions
(`optional.of`, `format.dns1123Label`, `ip.isCanonical`, `strings.quote`) are resolved while checking,
and a constant regular expression of `find`/`findAll` is compiled then, as cel-go's regex optimization
does when it builds the program. Evaluation (`cel_evaluator`) follows cel-go's runtime cost: one
expression stops past the per-call limit, and one cluster's expressions share the runtime budget
(`cel_cost`); a non-bool result, a runtime error or an exceeded limit is "no match", never an exception.
The library functions are in `cel_library`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Any, TypeAlias

import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import Activation, CELEvalError, Evaluator

from placement.scheduler.ocm.cel_check import CelTypeError, check_types
from placement.scheduler.ocm.cel_closures import Closure, Evaluation, compile_closure
from placement.scheduler.ocm.cel_cost import RUNTIME_BUDGET, CostLimitExceeded, CostTracker
from placement.scheduler.ocm.cel_evaluator import CelEvaluator, CostPlan, plan_costs
from placement.scheduler.ocm.cel_library import (
    FORMAT_CLAUSE_KINDS,
    LIBRARY_FUNCTIONS,
    CelSemver,
    compile_regex,
    format_clauses,
)
from placement.scheduler.ocm.cel_syntax import TYPE_NAMES, innermost_name, parse, unwrap
from placement.scheduler.quantity import QuantityError, approx_float, parse_quantity

ScoresProvider = Callable[[str], list[dict[str, Any]]]
# celpy's parse trees: grammar rules whose leaves are lark tokens
CelTree: TypeAlias = lark.Tree[lark.Token]

CLUSTER_VARIABLE = "managedCluster"

# Global functions of the upstream environment (standard, ext.Strings, k8s libraries, OCM json).
_GLOBAL_FUNCTIONS = frozenset(
    {
        "size", "int", "uint", "double", "string", "bytes", "bool", "duration", "timestamp", "type", "dyn",
        "matches", "semver", "isSemver", "ip.isCanonical", "url", "isURL", "quantity",
        "isQuantity", "sign", "ip", "isIP", "cidr", "isCIDR",
        "optional.of", "optional.ofNonZeroValue", "optional.none", "optional.unwrap", "strings.quote",
        "format.named", "format.dns1123Label", "format.dns1123Subdomain", "format.dns1035Label",
        "format.qualifiedName", "format.dns1123LabelPrefix", "format.dns1123SubdomainPrefix",
        "format.dns1035LabelPrefix", "format.labelValue", "format.uri", "format.uuid", "format.byte",
        "format.date", "format.datetime",
    }
)  # fmt: skip

# Receiver-style functions of the same environment, including OCM's `managedCluster.scores(name)`.
_MEMBER_FUNCTIONS = frozenset(
    {
        "scores", "parseJSON", "size", "contains", "startsWith", "endsWith", "matches",
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
        "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
        "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split", "substring",
        "trim", "join", "format", "reverse",
        "isSorted", "sum", "min", "max", "find", "findAll", "major", "minor", "patch",
        "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
        "isInteger", "asInteger", "asApproximateFloat", "add", "sub", "isGreaterThan",
        "isLessThan", "compareTo",
        "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
        "isGlobalUnicast", "isCanonical", "containsIP", "containsCIDR", "ip", "masked", "prefixLength",
        "validate", "hasValue", "value", "or", "orValue", "first", "last", "unwrapOpt",
    }
)  # fmt: skip

# Member macros that bind a variable: name -> accepted argument counts.
_COMPREHENSIONS = {"all": (2,), "exists": (2,), "exists_one": (2,), "filter": (2,), "map": (2, 3)}
_OPTIONAL_MACROS = {"optMap": (2,), "optFlatMap": (2,)}


class CelCompileError(Exception):
    """An expression cel-go would refuse: str(e) is `compilation failed: <issues>` (or `instantiation
    failed: <error>` when it checks but its program cannot be built)."""

    def __init__(self, issues: str, stage: str = "compilation") -> None:
        self.issues = issues
        self.stage = stage
        self.message = f"{stage} failed: {issues}"
        super().__init__(self.message)


# --- compile-time checks (cel-go parser + checker messages) ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Issue:
    line: int
    column: int  # 1-based, as cel-go displays it
    message: str

    def display(self, source: str) -> str:
        """cel-go `Error.ToDisplayString`: location, message, the source line and a caret."""
        lines = source.splitlines() or [""]
        snippet = lines[self.line - 1].replace("\t", " ") if self.line <= len(lines) else ""
        caret = "." * min(self.column - 1, len(snippet)) + "^"
        return f"ERROR: <input>:{self.line}:{self.column}: {self.message}\n | {snippet}\n | {caret}"


def _undeclared(token: lark.Token, name: str) -> _Issue:
    return _Issue(token.line or 1, token.column or 1, f"undeclared reference to '{name}' (in container '')")


def _arguments(node: CelTree, index: int) -> list[Any]:
    """The expressions of the optional `exprlist` child at `index`."""
    child = node.children[index] if len(node.children) > index else None
    return list(child.children) if isinstance(child, lark.Tree) else []


def _name(node: CelTree, index: int) -> lark.Token:
    """The name (an IDENT token, by the grammar) at `index` of an identifier, call or selection."""
    child = node.children[index]
    assert isinstance(child, lark.Token)
    return child


def _qualified_name(node: Any) -> str | None:
    """`a.b.c` written as plain selections of an identifier, else None."""
    node = unwrap(node)
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0])
    if isinstance(node, lark.Tree) and node.data == "member_dot":
        receiver = _qualified_name(node.children[0])
        return None if receiver is None else f"{receiver}.{node.children[1]}"
    return None


class _Checker:
    """Walks a celpy parse tree and collects the issues cel-go's parser (macros) and checker report."""

    def __init__(self) -> None:
        self.issues: list[_Issue] = []
        # what fails only when cel-go builds the program from a checked expression
        self.instantiation_issues: list[str] = []

    def check(self, node: Any, scope: frozenset[str]) -> None:
        if not isinstance(node, lark.Tree):
            return
        handler = getattr(self, f"_check_{node.data}", None)
        if handler is not None:
            handler(node, scope)
            return
        for child in node.children:
            self.check(child, scope)

    def _check_ident(self, node: CelTree, scope: frozenset[str]) -> None:
        token = _name(node, 0)
        if token not in scope and token != CLUSTER_VARIABLE and token not in TYPE_NAMES:
            self.issues.append(_undeclared(token, str(token)))

    def _check_dot_ident(self, node: CelTree, scope: frozenset[str]) -> None:
        # a leading dot resolves from the root, so comprehension variables do not count
        self._check_ident(node, frozenset())

    def _check_ident_arg(self, node: CelTree, scope: frozenset[str]) -> None:
        token, arguments = _name(node, 0), _arguments(node, 1)
        if token == "has":
            self._check_has(token, arguments, scope)
            return
        if token not in _GLOBAL_FUNCTIONS:
            self.issues.append(_undeclared(token, str(token)))
        for argument in arguments:
            self.check(argument, scope)

    def _check_dot_ident_arg(self, node: CelTree, scope: frozenset[str]) -> None:
        self._check_ident_arg(node, frozenset())

    def _check_has(self, token: lark.Token, arguments: list[Any], scope: frozenset[str]) -> None:
        selection = unwrap(arguments[0]) if len(arguments) == 1 else None
        if not (isinstance(selection, lark.Tree) and selection.data == "member_dot"):
            self.issues.append(_Issue(token.line or 1, token.column or 1, "invalid argument to has() macro"))
            return
        self.check(selection, scope)

    def _check_member_dot_arg(self, node: CelTree, scope: frozenset[str]) -> None:
        receiver, token, arguments = node.children[0], _name(node, 1), _arguments(node, 2)
        macros = {**_COMPREHENSIONS, **_OPTIONAL_MACROS}
        if token in macros and len(arguments) in macros[token]:
            self._check_comprehension(receiver, arguments, scope)
            return
        qualified = _qualified_name(receiver)
        # `optional.of(x)`, `format.dns1123Label()`: namespaced global functions, unless shadowed;
        # the node becomes a plain call of the qualified name, which is how the evaluator finds it
        if qualified and qualified.split(".")[0] not in scope and f"{qualified}.{token}" in _GLOBAL_FUNCTIONS:
            name = lark.Token("IDENT", f"{qualified}.{token}")
            call = lark.Tree("ident_arg", [name, *(c for c in node.children[2:] if c is not None)])
            node.data, node.children = "primary", [call]
            for argument in arguments:
                self.check(argument, scope)
            return
        if token not in _MEMBER_FUNCTIONS:
            self.issues.append(_undeclared(token, str(token)))
        elif token in ("find", "findAll") and arguments:
            self._check_constant_regex(token, arguments[0])
        elif token == "format" and len(arguments) == 1:
            self._check_constant_format(token, receiver, arguments[0])
        self.check(receiver, scope)
        for argument in arguments:
            self.check(argument, scope)

    def _check_constant_regex(self, token: lark.Token, argument: Any) -> None:
        pattern = _string_literal(argument)
        if pattern is None:
            return
        try:
            compile_regex(pattern)
        except re.error as exc:
            self.instantiation_issues.append(f"Illegal regex: {exc}")

    def _check_constant_format(self, token: lark.Token, receiver: Any, argument: Any) -> None:
        """cel-go's string.format validator: a literal template against a list literal's elements."""
        template, elements = _string_literal(receiver), unwrap(argument)
        if template is None or not (isinstance(elements, lark.Tree) and elements.data == "list_lit"):
            return
        kinds = [_literal_kind(element) for element in _arguments(elements, 0)]
        try:
            clauses = format_clauses(template)
        except ValueError as exc:
            self.issues.append(_Issue(token.line or 1, token.column or 1, str(exc)))
            return
        if len(clauses) != len(kinds):
            message = f"string.format expects {len(clauses)} arguments, got {len(kinds)}"
            self.issues.append(_Issue(token.line or 1, token.column or 1, message))
            return
        for verb, kind in zip(clauses, kinds, strict=True):
            if kind != "dyn" and kind not in FORMAT_CLAUSE_KINDS[verb]:
                message = f"clause %{verb} cannot format a {kind}"
                self.issues.append(_Issue(token.line or 1, token.column or 1, message))

    def _check_comprehension(self, receiver: Any, arguments: list[Any], scope: frozenset[str]) -> None:
        self.check(receiver, scope)
        variable = unwrap(arguments[0])
        if not (isinstance(variable, lark.Tree) and variable.data == "ident"):
            meta = arguments[0].meta
            self.issues.append(_Issue(meta.line, meta.column, "argument must be a simple name"))
            return
        inner = scope | {str(variable.children[0])}
        for argument in arguments[1:]:
            self.check(argument, inner)

    def _check_member_object(self, node: CelTree, scope: frozenset[str]) -> None:
        # no message types are declared in the upstream environment
        name = _qualified_name(node.children[0]) or "?"
        meta = node.meta
        self.issues.append(
            _Issue(meta.line, meta.column, f"undeclared reference to '{name}' (in container '')")
        )


def _parse(expression: str) -> CelTree:
    """Parse one expression, raising CelCompileError with cel-go-style syntax issues."""
    try:
        return parse(expression)
    except lark.exceptions.UnexpectedInput as exc:
        line, column = exc.line if exc.line > 0 else 1, max(exc.column, 1)
        summary = str(exc).splitlines()[0]
        raise CelCompileError(_Issue(line, column, f"Syntax error: {summary}").display(expression)) from None
    except lark.exceptions.LarkError as exc:
        issue = _Issue(1, len(expression) + 1, f"Syntax error: {str(exc).splitlines()[0]}")
        raise CelCompileError(issue.display(expression)) from None


@dataclass(frozen=True, slots=True)
class _Program:
    """A checked expression, what its evaluation costs beyond one unit per step, and the expression
    compiled into closures when it has only forms they cover (else the interpreter evaluates it)."""

    tree: CelTree
    costs: CostPlan
    closure: Closure | None

    def evaluate(self, cluster: Any, run: Evaluation) -> Any:
        """The expression's value for the cluster, charged to `run.tracker`; raises a CEL error, and
        CostLimitExceeded past the per-call limit."""
        variables = {CLUSTER_VARIABLE: cluster}
        if self.closure is None:
            evaluator = CelEvaluator(self.tree, run.activation, run.tracker, self.costs, variables, run.bound)
            return evaluator.evaluate()
        value = self.closure(variables, run)
        if isinstance(value, CELEvalError):
            raise value
        return value


def _compile_expression(expression: str) -> _Program:
    tree = _parse(expression)
    checker = _Checker()
    checker.check(tree, frozenset())
    if checker.issues:
        issues = sorted(set(checker.issues), key=lambda issue: (issue.line, issue.column, issue.message))
        raise CelCompileError("\n".join(issue.display(expression) for issue in issues))
    try:
        checked = check_types(tree)
    except CelTypeError as exc:
        raise CelCompileError(_Issue(exc.line, exc.column, exc.message).display(expression)) from None
    if checker.instantiation_issues:
        raise CelCompileError(checker.instantiation_issues[0], stage="instantiation")
    costs = plan_costs(tree, checked.cost_tags)
    return _Program(tree, costs, compile_closure(tree, costs, CLUSTER_VARIABLE))


def _is_cluster_variable(node: Any) -> bool:
    node = unwrap(node)
    return isinstance(node, lark.Tree) and node.data == "ident" and node.children[0] == CLUSTER_VARIABLE


_NOT_A_LITERAL = object()


def _literal_value(node: Any) -> Any:
    """The value of a literal expression, or `_NOT_A_LITERAL`."""
    node = unwrap(node)
    if not (isinstance(node, lark.Tree) and node.data == "literal"):
        return _NOT_A_LITERAL
    try:
        return Evaluator(node, Activation()).evaluate({})
    except CELEvalError:
        return _NOT_A_LITERAL


def _string_literal(node: Any) -> str | None:
    """The value of a string literal (any quoting or escapes), else None."""
    value = _literal_value(node)
    return str(value) if isinstance(value, celtypes.StringType) else None


def _literal_kind(node: Any) -> str:
    """The CEL type name of a literal expression as the checker knows it, `dyn` for anything else."""
    node = unwrap(node)
    if isinstance(node, lark.Tree) and node.data in ("list_lit", "map_lit"):
        return str(node.data).removesuffix("_lit")
    value = _literal_value(node)
    kinds = (
        (celtypes.BoolType, "bool"), (celtypes.UintType, "uint"), (celtypes.IntType, "int"),
        (celtypes.DoubleType, "double"), (celtypes.StringType, "string"), (celtypes.BytesType, "bytes"),
    )  # fmt: skip
    if value is None:
        return "null"
    return next((name for kind, name in kinds if isinstance(value, kind)), "dyn")


# A cluster path: the keys an expression selects from `managedCluster`, literally, before it uses the
# value; () is the whole object.
ClusterPath: TypeAlias = tuple[str, ...]
_NAME_PATH: ClusterPath = ("metadata", "name")


def _static_path(node: Any) -> ClusterPath | None:
    """The path of `managedCluster.a["b"].?c`: selections and string-literal indexes of the variable."""
    node = unwrap(node)
    if not isinstance(node, lark.Tree):
        return None
    if node.data in ("ident", "dot_ident"):
        return () if node.children[0] == CLUSTER_VARIABLE else None
    if node.data in ("member_dot", "member_dot_opt"):
        key: str | None = str(node.children[1])
    elif node.data in ("member_index", "member_index_opt"):
        key = _string_literal(node.children[1])
    else:
        return None
    receiver = _static_path(node.children[0])
    return None if receiver is None or key is None else (*receiver, key)


# Comprehensions whose body is evaluated once per element, each element on its own.
_PER_ELEMENT_MACROS = frozenset({"all", "exists", "exists_one", "filter", "map"})


def _name_guard(variable: Any, body: Any) -> str | None:
    """L when `body` starts with `v.name == L` (either way round) for the macro's variable `v`, ANDed with
    anything: an element whose name is another string makes the body false before anything else is read.
    """
    node = unwrap(body)
    while isinstance(node, lark.Tree) and node.data == "conditionaland" and len(node.children) == 2:
        node = unwrap(node.children[0])  # `a && b && c` nests to the left, and `a` is evaluated first
    if not (isinstance(node, lark.Tree) and node.data == "relation" and len(node.children) == 2):
        return None
    operator, right = node.children
    if not (isinstance(operator, lark.Tree) and operator.data == "relation_eq"):
        return None
    name = innermost_name(variable)
    for selection, literal in ((operator.children[0], right), (right, operator.children[0])):
        selection = unwrap(selection)
        if (
            isinstance(selection, lark.Tree)
            and selection.data == "member_dot"
            and selection.children[1] == "name"
            and _static_name(selection.children[0]) == name
            and (value := _string_literal(literal)) is not None
        ):
            return value
    return None


def _static_name(node: Any) -> str | None:
    node = unwrap(node)
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0])
    return None


def _scores_name(node: Any) -> str | None:
    """N for `managedCluster.scores(N)` with a string literal N, else None."""
    node = unwrap(node)
    if not (isinstance(node, lark.Tree) and node.data == "member_dot_arg" and node.children[1] == "scores"):
        return None
    arguments = _arguments(node, 2)
    name = _string_literal(arguments[0]) if len(arguments) == 1 else None
    # the receiver's value is not read: the bound provider answers for the cluster itself
    return name if _is_cluster_variable(node.children[0]) else None


def _guarded_source(node: CelTree) -> tuple[ClusterPath | str, frozenset[str], list[Any]] | None:
    """For `<cluster path or scores(N)>.exists(v, v.name == L && ...)` and the other per-element macros:
    the path (or N), the guard {L}, and the macro's arguments, which are all it reads besides."""
    if node.data != "member_dot_arg" or node.children[1] not in _PER_ELEMENT_MACROS:
        return None
    arguments = _arguments(node, 2)
    guard = _name_guard(*arguments) if len(arguments) == 2 else None
    if guard is None:
        return None
    source: ClusterPath | str | None = _static_path(node.children[0])
    source = _scores_name(node.children[0]) if source is None else source
    return None if source is None else (source, frozenset({guard}), arguments)


# What one occurrence reads of a source: None for its whole value, else the names of a name guard.
_Reading: TypeAlias = frozenset[str] | None


def _merged(readings: dict[Any, _Reading], source: Any, reading: _Reading) -> None:
    known = readings.get(source, frozenset())
    readings[source] = None if known is None or reading is None else known | reading


@dataclass(frozen=True, slots=True)
class ClusterReads:
    """Everything of a cluster an expression can see: the values at `paths` (none a prefix of another)
    and the AddOnPlacementScores `scores(name)` reads for the literal names in `score_names`.

    `guards` (of paths) and `score_guards` (of score names) name the lists read only element by element
    by comprehensions that start with a name guard (`c.name == "x" && ...`): of an element named
    otherwise, only the name is read.
    """

    paths: frozenset[ClusterPath]
    score_names: frozenset[str]
    guards: frozenset[tuple[ClusterPath, frozenset[str]]] = frozenset()
    score_guards: frozenset[tuple[str, frozenset[str]]] = frozenset()

    @classmethod
    def of(cls, trees: Sequence[CelTree]) -> ClusterReads:
        paths: dict[Any, _Reading] = {}
        scores: dict[Any, _Reading] = {}

        def visit(node: Any) -> None:
            if not isinstance(node, lark.Tree):
                return
            path = _static_path(node)
            if path is not None:
                _merged(paths, path, None)
                return
            if (name := _scores_name(node)) is not None:
                _merged(scores, name, None)
                return
            guarded = _guarded_source(node)
            if guarded is None:
                children = node.children
            else:
                source, guard, children = guarded
                if isinstance(source, str):
                    _merged(scores, source, guard)
                else:
                    _merged(paths, source, guard)
            for child in children:
                visit(child)

        for tree in trees:
            visit(tree)
        # a comprehension variable named like the cluster makes a path too many, never one too few
        minimal = {p for p in paths if not any(p[: len(q)] == q and q != p for q in paths)}
        return cls(
            frozenset(minimal),
            frozenset(scores),
            frozenset((p, g) for p in minimal if (g := paths[p]) is not None),
            frozenset((n, g) for n, g in scores.items() if g is not None),
        )

    @property
    def name_reachable(self) -> bool:
        """Whether the cluster's name is seen, so no two clusters' projections are equal."""
        return any(_NAME_PATH[: len(path)] == path for path in self.paths)


_MISSING = object()
_OTHER_NAME = object()


def _frozen(value: Any) -> Any:
    """A hashable form of a JSON value that tells apart what CEL tells apart (`1`, `1.0` and `true`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return (dict, tuple((_frozen(key), _frozen(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (list, tuple(_frozen(item) for item in value))
    return (type(value), repr(value))


def _frozen_read(value: Any, guard: frozenset[str] | None) -> Any:
    """`_frozen`, except that a list element a name guard decides is reduced to its name."""
    if guard is None or not isinstance(value, list | tuple):
        return _frozen(value)
    return (
        list,
        tuple(
            (_OTHER_NAME, item["name"])
            if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"] not in guard
            else _frozen(item)
            for item in value
        ),
    )


def _value_at(cluster_object: Mapping[str, Any], path: ClusterPath, guard: frozenset[str] | None) -> Any:
    """The frozen value at `path`, or where and on what selecting it stops."""
    value: Any = cluster_object
    for depth, key in enumerate(path):
        if not isinstance(value, dict):
            return (_MISSING, depth, _frozen(value))
        if key not in value:
            return (_MISSING, depth)
        value = value[key]
    # most values read are strings, which are their own frozen form
    return value if value.__class__ is str else _frozen_read(value, guard)


def _pruned(cluster_object: Mapping[str, Any], paths: frozenset[ClusterPath]) -> dict[str, Any]:
    """The object with only what `paths` reach: the dicts along each path and the values at its end."""
    if () in paths:
        return dict(cluster_object)
    out: dict[str, Any] = {}
    for path in paths:
        source: Any = cluster_object
        target = out
        for depth, key in enumerate(path):
            if not (isinstance(source, dict) and key in source):
                break
            source = source[key]
            if depth == len(path) - 1 or not isinstance(source, dict):
                target[key] = source
                break
            target = target.setdefault(key, {})
    return out


# --- runtime functions ---------------------------------------------------------------------------


def _error(message: str) -> CELEvalError:
    return CELEvalError(message)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def to_cel(document: Any) -> Any:
    """celpy's `json_to_cel`, the JSON types found by their exact class before its isinstance chain (it
    tests against `typing` aliases, which costs more than the rest of a small evaluation).

    Strings, maps and int64 values are made as their constructors make them from a str, a dict and an
    int, without the constructors' costs: StringType's tests its argument's type, MapType's tests it
    against `typing` aliases, and IntType's wraps a new range-checking function on every call (an
    out-of-range int goes to it, for its overflow error)."""
    kind = document.__class__
    if kind is str:
        return str.__new__(celtypes.StringType, document)
    if kind is dict:
        mapping = celtypes.MapType()
        dict.update(mapping, {to_cel(key): to_cel(value) for key, value in document.items()})
        return mapping
    if kind is list:
        return celtypes.ListType([to_cel(item) for item in document])
    if kind is int and _INT64_MIN <= document <= _INT64_MAX:
        return int.__new__(celtypes.IntType, document)
    if kind is float:
        return celtypes.DoubleType(document)
    if kind is bool:
        return celtypes.BoolType(document)
    return json_to_cel(document)


def _ascii_case(text: str, upper: bool) -> celtypes.StringType:
    # ext.Strings lowerAscii/upperAscii leave non-ASCII letters alone
    low, high, shift = ("a", "z", -32) if upper else ("A", "Z", 32)
    return celtypes.StringType("".join(chr(ord(c) + shift) if low <= c <= high else c for c in text))


def _lower_ascii(text: str) -> celtypes.StringType:
    return _ascii_case(text, upper=False)


def _upper_ascii(text: str) -> celtypes.StringType:
    return _ascii_case(text, upper=True)


def _trim(text: str) -> celtypes.StringType:
    return celtypes.StringType(text.strip())


def _char_at(text: str, index: int) -> celtypes.StringType | CELEvalError:
    if not 0 <= index <= len(text):
        return _error(f"index out of range: {index}")
    return celtypes.StringType(text[index : index + 1])


def _substring(text: str, start: int, end: int | None = None) -> celtypes.StringType | CELEvalError:
    stop = len(text) if end is None else end
    if not 0 <= start <= stop <= len(text):
        return _error(f"substring out of range: [{start}:{stop}]")
    return celtypes.StringType(text[start:stop])


def _index_of(target: Any, item: Any, start: int = 0) -> celtypes.IntType | CELEvalError:
    """`indexOf` of ext.Strings (substring) and of the k8s lists library (element)."""
    if isinstance(target, str):
        if not 0 <= start <= len(target):
            return _error(f"index out of range: {start}")
        return celtypes.IntType(target.find(item, start))
    return celtypes.IntType(next((i for i, value in enumerate(target) if value == item), -1))


def _last_index_of(target: Any, item: Any) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(target.rfind(item))
    return celtypes.IntType(next((i for i in range(len(target) - 1, -1, -1) if target[i] == item), -1))


def _replace(text: str, old: str, new: str, count: int = -1) -> celtypes.StringType:
    return celtypes.StringType(text.replace(old, new, count))


def _split(text: str, separator: str, limit: int = -1) -> celtypes.ListType:
    if limit == 0:
        return celtypes.ListType()
    # Go strings.SplitN: an empty separator splits into characters
    parts = list(text) if separator == "" else text.split(separator, -1 if limit < 0 else limit - 1)
    if separator == "" and 0 < limit < len(parts):
        parts = parts[: limit - 1] + ["".join(parts[limit - 1 :])]
    return celtypes.ListType(celtypes.StringType(p) for p in parts)


def _join(items: Sequence[str], separator: str = "") -> celtypes.StringType:
    return celtypes.StringType(separator.join(items))


def _is_sorted(items: Sequence[Any]) -> celtypes.BoolType:
    return celtypes.BoolType(all(a <= b for a, b in zip(items, items[1:], strict=False)))


def _sum(items: Sequence[Any]) -> Any:
    return sum(items[1:], items[0]) if items else celtypes.IntType(0)


def _json_number(text: str) -> float:
    # Go's json.Unmarshal into `any` reads every number as a float64 and refuses one out of its range
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text} out of range")
    return value


def _json_constant(text: str) -> Any:
    raise ValueError(f"invalid character {text[0]!r} looking for beginning of value")


def _parse_json(text: str) -> Any:
    """sdk-go's `parseJSON`: JSON numbers are doubles, as `json.Unmarshal` gives them to cel-go."""
    try:
        document = json.loads(
            text, parse_int=_json_number, parse_float=_json_number, parse_constant=_json_constant
        )
        return to_cel(document)
    except (ValueError, TypeError) as exc:
        return _error(f"failed to parse JSON: {exc}")


@dataclass(frozen=True, slots=True)
class _CelQuantity:
    """A value of the k8s CEL Quantity library."""

    text: str
    exact: Fraction


def _quantity(text: str) -> _CelQuantity | CELEvalError:
    try:
        return _CelQuantity(text, parse_quantity(text))
    except QuantityError as exc:
        return _error(f"quantities must match the regular expression: {exc}")


def _is_quantity(text: str) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(_quantity(text), _CelQuantity))


def _order(left: Any, right: Any) -> int | CELEvalError:
    """The Quantity and Semver libraries both declare compareTo/isGreaterThan/isLessThan."""
    if isinstance(left, _CelQuantity) and isinstance(right, _CelQuantity):
        return (left.exact > right.exact) - (left.exact < right.exact)
    if isinstance(left, CelSemver) and isinstance(right, CelSemver):
        return left.compare(right)
    return _error("no such overload")


def _compare_to(left: Any, right: Any) -> celtypes.IntType | CELEvalError:
    order = _order(left, right)
    return order if isinstance(order, CELEvalError) else celtypes.IntType(order)


def _is_greater_than(left: Any, right: Any) -> celtypes.BoolType | CELEvalError:
    order = _order(left, right)
    return order if isinstance(order, CELEvalError) else celtypes.BoolType(order > 0)


def _is_less_than(left: Any, right: Any) -> celtypes.BoolType | CELEvalError:
    order = _order(left, right)
    return order if isinstance(order, CELEvalError) else celtypes.BoolType(order < 0)


def _fits_int64(value: Fraction) -> bool:
    return value.denominator == 1 and -(2**63) <= value.numerator < 2**63


def _is_integer(quantity: _CelQuantity) -> celtypes.BoolType:
    return celtypes.BoolType(_fits_int64(quantity.exact))


def _as_integer(quantity: _CelQuantity) -> celtypes.IntType | CELEvalError:
    if not _fits_int64(quantity.exact):
        return _error("cannot convert value to integer")
    return celtypes.IntType(quantity.exact.numerator)


def _as_approximate_float(quantity: _CelQuantity) -> celtypes.DoubleType:
    return celtypes.DoubleType(approx_float(quantity.text))


def _sign(quantity: _CelQuantity) -> celtypes.IntType:
    return celtypes.IntType((quantity.exact > 0) - (quantity.exact < 0))


def _quantity_of(exact: Fraction) -> _CelQuantity:
    # quantities are decimal (or binary, hence integral) numbers, so the decimal text is exact
    with localcontext() as context:
        context.prec = 80
        text = format(Decimal(exact.numerator) / Decimal(exact.denominator), "f")
    return _CelQuantity(text, exact)


def _quantity_add(quantity: _CelQuantity, other: Any) -> _CelQuantity | CELEvalError:
    """k8s Quantity `add`, of another quantity or of an int."""
    if isinstance(other, _CelQuantity):
        return _quantity_of(quantity.exact + other.exact)
    if isinstance(other, int) and not isinstance(other, celtypes.BoolType):
        return _quantity_of(quantity.exact + other)
    return _error("no such overload: add")


def _quantity_sub(quantity: _CelQuantity, other: Any) -> _CelQuantity | CELEvalError:
    negated = _CelQuantity(other.text, -other.exact) if isinstance(other, _CelQuantity) else -other
    return _quantity_add(quantity, negated)


_RUNTIME_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **LIBRARY_FUNCTIONS,
    "parseJSON": _parse_json,
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "trim": _trim,
    "charAt": _char_at,
    "substring": _substring,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "replace": _replace,
    "split": _split,
    "join": _join,
    "isSorted": _is_sorted,
    "sum": _sum,
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "compareTo": _compare_to,
    "isGreaterThan": _is_greater_than,
    "isLessThan": _is_less_than,
    "isInteger": _is_integer,
    "asInteger": _as_integer,
    "asApproximateFloat": _as_approximate_float,
    "sign": _sign,
    "add": _quantity_add,
    "sub": _quantity_sub,
}


# the library every evaluation resolves its functions in (never changed by one)
_ACTIVATION = Activation(functions=_RUNTIME_FUNCTIONS)


def _scores_function(provider: ScoresProvider) -> Callable[[Any, Any], Any]:
    """`managedCluster.scores(name)` bound to one cluster's AddOnPlacementScores."""

    def scores(_cluster: Any, resource_name: Any) -> Any:
        if not isinstance(resource_name, str):
            return _error("no such overload: scores")
        try:
            return to_cel(provider(str(resource_name)))
        except LookupError as exc:
            # upstream: the lister's NotFound becomes a CEL error
            return _error(f"failed to get score: {exc}")

    return scores


# --- evaluation ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CelVerdicts:
    """`matched[i]`: whether the i-th cluster matched; `evaluations`: how many were evaluated, the others
    sharing the verdict of an evaluated cluster whose readable fields are equal to theirs."""

    matched: list[bool]
    evaluations: int


class CelSelector:
    """The compiled `celExpressions` of one predicate; `matches` is the AND of all of them."""

    def __init__(self, programs: tuple[_Program, ...]) -> None:
        self._programs = programs
        self.reads = ClusterReads.of([program.tree for program in programs])
        self._paths = sorted(self.reads.paths)
        self._score_names = sorted(self.reads.score_names)
        self._guards = dict(self.reads.guards)
        self._score_guards = dict(self.reads.score_guards)

    def interpreted(self) -> CelSelector:
        """The same expressions evaluated by the interpreter alone, without their closures: the reference
        the closures are measured and tested against."""
        return CelSelector(tuple(replace(program, closure=None) for program in self._programs))

    def _cluster_value(self, cluster_object: Mapping[str, Any]) -> Any:
        # only what the expressions read is converted: the rest cannot change the outcome
        return to_cel(_pruned(cluster_object, self.reads.paths))

    def projection(self, cluster_object: Mapping[str, Any], scores: ScoresProvider) -> Hashable:
        """What the expressions can see of the cluster: clusters with equal projections evaluate alike,
        the per-call cost limit and the budget included, since every input of the evaluation is equal."""
        as_dict = cluster_object if isinstance(cluster_object, dict) else dict(cluster_object)
        guards, score_guards = self._guards, self._score_guards
        values = [_value_at(as_dict, path, guards.get(path)) for path in self._paths]
        for name in self._score_names:
            try:
                values.append(_frozen_read(scores(name), score_guards.get(name)))
            except LookupError as exc:
                values.append((LookupError, str(exc)))
        return tuple(values)

    def matches(self, cluster_object: Mapping[str, Any], scores: ScoresProvider) -> bool:
        """True when every expression evaluates to boolean true for this ManagedCluster.

        `cluster_object` is the ManagedCluster as unstructured JSON. `scores(name)` returns the
        `[{name, value, quantity}]` of the cluster's AddOnPlacementScore `name`, and raises
        LookupError when the cluster has none (an error in CEL, as upstream). Never raises.
        """
        if not self._programs:
            return True
        try:
            cluster = self._cluster_value(dict(cluster_object))
        except (ValueError, TypeError):
            return False
        bound = {"scores": _scores_function(scores)}
        budget = RUNTIME_BUDGET
        for program in self._programs:
            tracker = CostTracker()
            try:
                result = program.evaluate(cluster, Evaluation(tracker, bound, _ACTIVATION))
            except CostLimitExceeded:
                return False
            # a runtime error, or a form cel-python cannot run, is "no match" upstream
            except Exception:
                result = None
            # upstream (ocm `CostCalculation`) fails the cluster once its expressions' costs exceed the
            # budget, and stops at the first expression that is not true
            budget -= tracker.cost
            if budget < 0 or not (isinstance(result, celtypes.BoolType) and result):
                return False
        return True

    def matches_each(self, clusters: Iterable[tuple[Mapping[str, Any], ScoresProvider]]) -> CelVerdicts:
        """`matches` of every (cluster object, scores) pair, evaluated once per distinct projection.

        When the expressions read the cluster's name every projection is distinct, so each cluster is
        evaluated without computing one.
        """
        if self.reads.name_reachable:
            matched = [self.matches(cluster_object, scores) for cluster_object, scores in clusters]
            return CelVerdicts(matched, len(matched))
        verdicts: dict[Hashable, bool] = {}
        matched = []
        for cluster_object, scores in clusters:
            key = self.projection(cluster_object, scores)
            verdict = verdicts.get(key)
            if verdict is None:
                verdict = verdicts[key] = self.matches(cluster_object, scores)
            matched.append(verdict)
        return CelVerdicts(matched, len(verdicts))


@lru_cache(maxsize=1024)
def _compile_all(expressions: tuple[str, ...]) -> CelSelector | CelCompileError:
    try:
        return CelSelector(tuple(_compile_expression(expression) for expression in expressions))
    except CelCompileError as exc:
        return exc


def compile_cel_selector(expressions: Sequence[str]) -> CelSelector:
    """Compile a predicate's `celExpressions` once (cached by the expression tuple).

    Raises CelCompileError for the first expression cel-go would refuse, with its issues text.
    """
    compiled = _compile_all(tuple(expressions))
    if isinstance(compiled, CelCompileError):
        raise CelCompileError(compiled.issues, compiled.stage)
    return compiled
