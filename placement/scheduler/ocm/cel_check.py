"""cel-go's type checker over a cel-python parse tree (with the optional syntax of `cel_syntax`).

upstream: cel-go `checker` as OCM's `env.Compile` runs it. `managedCluster` is declared as
`map(string, dyn)` (sdk-go `ManagedClusterLib`), so every field below it is `dyn`, and `dyn` is
assignable to and from every type. A call resolves against the overloads of `cel_overloads`: none
matching is the compile error `found no matching overload`; one matching gives its result type with the
type parameters it bound (free ones become `dyn`); several give their common result, or `dyn`. List and
map literals join their element types (to `dyn` when they differ). OCM does not check the output type,
so an expression of any type compiles (and does not match unless it is true).

The checker also records, per call node, the cost rule of the overload it resolved to, because cel-go's
runtime costs strings and lists by size only when the checker picked a single overload.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import lark

from placement.scheduler.ocm.cel_overloads import (
    BOOL,
    DYN,
    STRING,
    CelType,
    Overload,
    declarations,
)
from placement.scheduler.ocm.cel_syntax import OPERATORS, TYPE_NAMES, innermost_name

CLUSTER_TYPE = CelType("map", (STRING, DYN))
_LITERALS = {
    "INT_LIT": "int", "UINT_LIT": "uint", "FLOAT_LIT": "double", "STRING_LIT": "string",
    "MLSTRING_LIT": "string", "BYTES_LIT": "bytes", "BOOL_LIT": "bool", "NULL_LIT": "null",
}  # fmt: skip
_QUANTIFIERS = frozenset({"all", "exists", "exists_one"})


class CelTypeError(Exception):
    """The first type error of an expression, with its position."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def _optional(inner: CelType) -> CelType:
    return CelType("optional", (inner,))


def _list(inner: CelType) -> CelType:
    return CelType("list", (inner,))


def _bind(param: CelType, actual: CelType, bindings: dict[str, CelType]) -> bool:
    """cel-go `isAssignable`: can `actual` be passed where `param` is declared, binding parameters."""
    if param.is_param:
        bound = bindings.get(param.name)
        if bound is None or bound == DYN:
            bindings[param.name] = actual
            return True
        return _bind(bound, actual, bindings)
    if param == DYN or actual == DYN:
        return True
    if param.name != actual.name or len(param.args) != len(actual.args):
        return False
    return all(_bind(p, a, bindings) for p, a in zip(param.args, actual.args, strict=True))


def _substitute(kind: CelType, bindings: dict[str, CelType]) -> CelType:
    if kind.is_param:
        return bindings.get(kind.name, DYN)
    return CelType(kind.name, tuple(_substitute(arg, bindings) for arg in kind.args)) if kind.args else kind


def _bound(kind: CelType, bindings: dict[str, CelType]) -> bool:
    if kind.is_param:
        return kind.name in bindings
    return all(_bound(arg, bindings) for arg in kind.args)


def _join(kinds: list[CelType]) -> CelType:
    """The element type of a literal: the common type, else `dyn`."""
    first = kinds[0] if kinds else DYN
    return first if all(kind == first for kind in kinds) else DYN


def _position(node: Any) -> tuple[int, int]:
    if isinstance(node, lark.Token):
        return node.line or 1, node.column or 1
    meta = getattr(node, "meta", None)
    return (getattr(meta, "line", 1) or 1, getattr(meta, "column", 1) or 1)


@dataclass(slots=True)
class CheckedExpression:
    """The result type of an expression and the cost rules of its resolved calls (by id of the node)."""

    result: CelType
    cost_tags: dict[int, str] = field(default_factory=dict)


class _TypeChecker:
    def __init__(self) -> None:
        self.cost_tags: dict[int, str] = {}
        self.decls = declarations()

    def fail(self, node: Any, message: str) -> CelTypeError:
        line, column = _position(node)
        return CelTypeError(message, line, column)

    def resolve(self, node: Any, function: str, args: list[CelType], member: bool) -> CelType:
        table = self.decls.member if member else self.decls.global_
        matches: list[tuple[Overload, dict[str, CelType]]] = []
        for overload in table.get(function, []):
            bindings: dict[str, CelType] = {}
            if len(overload.params) == len(args) and all(
                _bind(p, a, bindings) for p, a in zip(overload.params, args, strict=True)
            ):
                matches.append((overload, bindings))
        if not matches:
            shown = ", ".join(map(str, args))
            raise self.fail(node, f"found no matching overload for '{function}' applied to '({shown})'")
        if len(matches) == 1 and matches[0][0].cost_tag:
            self.cost_tags[id(node)] = matches[0][0].cost_tag
        results = [_substitute(overload.result, bindings) for overload, bindings in matches]
        # cel-go keeps a result only when every matching overload gives exactly that type; one with a
        # free type parameter is never exact
        exact = all(r == results[0] for r in results) and (
            len(matches) == 1 or all(_bound(overload.result, bindings) for overload, bindings in matches)
        )
        return results[0] if exact else DYN

    def check(self, node: Any, scope: dict[str, CelType]) -> CelType:
        handler = getattr(self, f"_{node.data}", None)
        if handler is not None:
            return handler(node, scope)  # type: ignore[no-any-return]
        # precedence levels with a single child
        return self.check(node.children[0], scope)

    # --- operators ----------------------------------------------------------------------------

    def _expr(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0], scope)
        kinds = [self.check(child, scope) for child in node.children]
        return self.resolve(node, "_?_:_", kinds, member=False)

    def _logical(self, node: lark.Tree[Any], scope: dict[str, CelType], function: str) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0], scope)
        kinds = [self.check(child, scope) for child in node.children]
        return self.resolve(node, function, kinds, member=False)

    def _conditionalor(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self._logical(node, scope, "_||_")

    def _conditionaland(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self._logical(node, scope, "_&&_")

    def _binary(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0], scope)
        operator, right = node.children
        kinds = [self.check(operator.children[0], scope), self.check(right, scope)]
        return self.resolve(node, OPERATORS[operator.data], kinds, member=False)

    _relation = _addition = _multiplication = _binary

    def _unary(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        if len(node.children) == 1:
            return self.check(node.children[0], scope)
        operator, operand = node.children
        return self.resolve(node, OPERATORS[operator.data], [self.check(operand, scope)], member=False)

    # --- selection and indexing ---------------------------------------------------------------

    def _select(self, node: Any, operand: CelType, field_name: str, optional: bool) -> CelType:
        if operand.name == "optional":
            return _optional(self._select(node, operand.args[0], field_name, optional=False))
        if operand == DYN:
            found = DYN
        elif operand.name == "map":
            found = operand.args[1]
        else:
            raise self.fail(node, f"type '{operand}' does not support field selection")
        return _optional(found) if optional else found

    def _member_dot(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self._select(node, self.check(node.children[0], scope), str(node.children[1]), optional=False)

    def _member_dot_opt(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self._select(node, self.check(node.children[0], scope), str(node.children[1]), optional=True)

    def _member_index(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        kinds = [self.check(child, scope) for child in node.children]
        return self.resolve(node, "_[_]", kinds, member=False)

    def _member_index_opt(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        kinds = [self.check(child, scope) for child in node.children]
        return self.resolve(node, "_[?_]", kinds, member=False)

    # --- calls and macros ---------------------------------------------------------------------

    def _member_dot_arg(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        receiver, name = node.children[0], str(node.children[1])
        arguments = list(node.children[2].children) if len(node.children) > 2 else []
        if name in _QUANTIFIERS | {"map", "filter"} and len(arguments) in (2, 3):
            return self._comprehension(node, name, self.check(receiver, scope), arguments, scope)
        if name in ("optMap", "optFlatMap") and len(arguments) == 2:
            return self._optional_map(node, name, self.check(receiver, scope), arguments, scope)
        kinds = [self.check(receiver, scope), *(self.check(argument, scope) for argument in arguments)]
        return self.resolve(node, name, kinds, member=True)

    def _ident_arg(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        name = str(node.children[0])
        arguments = list(node.children[1].children) if len(node.children) > 1 else []
        if name == "has":
            selection = arguments[0]
            while isinstance(selection, lark.Tree) and selection.data != "member_dot":
                selection = selection.children[0]
            operand = self.check(selection.children[0], scope)
            if operand != DYN and operand.name != "map":
                raise self.fail(node, f"type '{operand}' does not support field selection")
            return BOOL
        kinds = [self.check(argument, scope) for argument in arguments]
        return self.resolve(node, name, kinds, member=False)

    def _dot_ident_arg(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self._ident_arg(node, {})

    def _variable(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        # comprehension variables (by scope), the cluster and the type names (the earlier name check
        # has refused anything else)
        variable = innermost_name(node)
        if variable in scope:
            return scope[variable]
        return CLUSTER_TYPE if variable not in TYPE_NAMES else CelType("type")

    def _comprehension(
        self, node: Any, macro: str, range_type: CelType, arguments: list[Any], scope: dict[str, CelType]
    ) -> CelType:
        if range_type.name == "list" or range_type.name == "map":
            element = range_type.args[0]
        elif range_type == DYN:
            element = DYN
        else:
            message = f"expression of type '{range_type}' cannot be range of a comprehension"
            raise self.fail(node, message + " (must be list, map, or dynamic)")
        inner = {**scope, innermost_name(arguments[0]): element}
        bodies = [self.check(argument, inner) for argument in arguments[1:]]
        # predicates (of the quantifiers, of filter, the filter of three-argument map) must be bool
        predicates = bodies if macro in _QUANTIFIERS or macro == "filter" else bodies[:-1]
        for predicate, argument in zip(predicates, arguments[1:], strict=False):
            if not _bind(BOOL, predicate, {}):
                raise self.fail(argument, f"expected type 'bool' but found '{predicate}'")
        if macro in _QUANTIFIERS:
            return BOOL
        return _list(element if macro == "filter" else bodies[-1])

    def _optional_map(
        self, node: Any, macro: str, target: CelType, arguments: list[Any], scope: dict[str, CelType]
    ) -> CelType:
        if target != DYN and target.name != "optional":
            raise self.fail(node, f"found no matching overload for 'hasValue' applied to '({target})'")
        inner = {**scope, innermost_name(arguments[0]): target.args[0] if target.args else DYN}
        body = self.check(arguments[1], inner)
        if macro == "optMap":
            return _optional(body)
        if body != DYN and body.name != "optional":
            raise self.fail(node, f"expected type 'optional_type' but found '{body}'")
        return body

    # --- literals -----------------------------------------------------------------------------

    def _primary(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        child = node.children[0]
        if child.data in ("ident", "dot_ident"):
            return self._variable(child, scope if child.data == "ident" else {})
        return self.check(child, scope)

    def _paren_expr(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        return self.check(node.children[0], scope)

    def _literal(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        token = node.children[0]
        assert isinstance(token, lark.Token)
        return CelType(_LITERALS[token.type])

    def _entry(self, node: Any, scope: dict[str, CelType]) -> CelType:
        """An element, key or value; one written `?e` must be optional and contributes its value type."""
        if not (isinstance(node, lark.Tree) and node.data == "opt_entry"):
            return self.check(node, scope)
        kind = self.check(node.children[0], scope)
        if kind == DYN:
            return DYN
        if kind.name != "optional":
            raise self.fail(node, f"expected type 'optional_type' but found '{kind}'")
        return kind.args[0]

    def _list_lit(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        elements = node.children[0].children if node.children else []
        return _list(_join([self._entry(element, scope) for element in elements]))

    def _map_lit(self, node: lark.Tree[Any], scope: dict[str, CelType]) -> CelType:
        entries = node.children[0].children if node.children else []
        keys = [
            self.check(
                key.children[0] if isinstance(key, lark.Tree) and key.data == "opt_entry" else key, scope
            )
            for key in entries[0::2]
        ]
        values = []
        for key, value in zip(entries[0::2], entries[1::2], strict=True):
            kind = self.check(value, scope)
            if isinstance(key, lark.Tree) and key.data == "opt_entry":
                if kind != DYN and kind.name != "optional":
                    raise self.fail(value, f"expected type 'optional_type' but found '{kind}'")
                kind = kind.args[0] if kind.args else DYN
            values.append(kind)
        return CelType("map", (_join(keys), _join(values)))


def check_types(tree: lark.Tree[lark.Token]) -> CheckedExpression:
    """Type-check a parsed expression whose names are known to resolve; raises CelTypeError."""
    checker = _TypeChecker()
    result = checker.check(tree, {})
    return CheckedExpression(result, checker.cost_tags)
