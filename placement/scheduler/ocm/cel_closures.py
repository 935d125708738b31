"""CEL expressions compiled once into nested Python closures, for the forms placement predicates use.

The interpreter (`cel_evaluator.CelEvaluator`) walks the parse tree on every evaluation: it steps
through the precedence levels, finds each rule's method by name, and looks up the cost plan by node.
That walk is the same for every cluster, so for one expression over many distinct projections it is
done once here: each node becomes a closure that holds its children's closures, its operator, cost tag
and literal. Each closure computes and charges what the interpreter does for its node, through the same
helpers (`strict_call`, `decide`, `qualify`, `comprehension`), in the same order, so values, errors and
costs (and where the per-call limit stops an evaluation) are the same.

Compiled: literals and list literals, variables, selections and indexes (optional ones too),
operators, `&&` and `||`, `has()`, `dyn()`, calls of global and member functions, and the comprehension
macros. An expression with any other form (a conditional, a map literal, the optional library's
`or`/`orValue`/`optMap`, a leading-dot name, a type name used as a value) is not compiled and the
interpreter evaluates it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import lark
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError

from placement.scheduler.ocm.cel_cost import SELECT_COST, CostTracker
from placement.scheduler.ocm.cel_evaluator import (
    CostPlan,
    comprehension,
    decide,
    has_field,
    make_list,
    qualify,
    resolve_function,
    strict_call,
)
from placement.scheduler.ocm.cel_library import CelOptional
from placement.scheduler.ocm.cel_syntax import OPERATORS, innermost_name, unwrap

# parse trees, whose children the grammar makes trees or tokens by position
CelTree = lark.Tree[Any]

_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
)
_COMPREHENSIONS = {"all": (2,), "exists": (2,), "exists_one": (2,), "filter": (2,), "map": (2, 3)}
_INTERPRETED_MEMBER_CALLS = frozenset({"or", "orValue", "optMap", "optFlatMap"})


@dataclass(slots=True)
class Evaluation:
    """What one evaluation of a compiled expression reads besides its variables: the cost it is charged
    to, and the functions bound to its input (OCM's `scores` of the cluster) before the library's."""

    tracker: CostTracker
    bound: Mapping[str, Callable[..., Any]]
    activation: Activation

    def function(self, name: str) -> Any:
        return resolve_function(self.bound, self.activation, name)


# a compiled node: its value for the variables in scope
Closure = Callable[[dict[str, Any], Evaluation], Any]


class _Interpreted(Exception):
    """The expression has a form only the interpreter evaluates."""


def compile_closure(tree: CelTree, plan: CostPlan, variable: str) -> Closure | None:
    """The checked expression `tree` as one closure over its variables (`variable` and the comprehension
    variables), or None when it has a form left to the interpreter."""
    try:
        return _Compiler(plan).compile(tree, frozenset({variable}))
    except _Interpreted:
        return None


def _operation(tree: CelTree) -> tuple[CelTree, Any]:
    """An operator node's (operator, operand): the operator's tree holds the left operand of a binary one."""
    if len(tree.children) != 2 or not isinstance(tree.children[0], lark.Tree):
        raise _Interpreted
    operator, operand = tree.children
    if operator.data not in OPERATORS:
        raise _Interpreted
    return operator, operand


class _Compiler:
    def __init__(self, plan: CostPlan) -> None:
        self.plan = plan

    def compile(self, tree: Any, scope: frozenset[str]) -> Closure:
        while isinstance(tree, lark.Tree) and len(tree.children) == 1 and tree.data in _PASS_THROUGH:
            tree = tree.children[0]
        if not isinstance(tree, lark.Tree):
            raise _Interpreted
        if tree.data in ("relation", "addition", "multiplication"):
            return self._binary(tree, scope)
        if tree.data in ("conditionalor", "conditionaland"):
            return self._logical(tree, scope, deciding=tree.data == "conditionalor")
        compile_rule = {
            "unary": self._unary,
            "primary": self._primary,
            "member_dot": self._member_dot,
            "member_dot_opt": self._member_dot,
            "member_index": self._member_index,
            "member_index_opt": self._member_index,
            "member_dot_arg": self._member_call,
        }.get(tree.data)
        if compile_rule is None:
            raise _Interpreted
        return compile_rule(tree, scope)

    def _tag(self, node: CelTree) -> str:
        return self.plan.tags.get(id(node), "")

    # --- operators ----------------------------------------------------------------------------

    def _binary(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        operator, right = _operation(tree)
        function, tag = OPERATORS[operator.data], self._tag(tree)
        left_value, right_value = self.compile(operator.children[0], scope), self.compile(right, scope)

        def binary(variables: dict[str, Any], run: Evaluation) -> Any:
            left = left_value(variables, run)
            return strict_call(run.tracker, tag, function, [left, right_value(variables, run)], run.function)

        return binary

    def _unary(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        operator, operand = _operation(tree)
        function, tag = OPERATORS[operator.data], self._tag(tree)
        value = self.compile(operand, scope)

        def unary(variables: dict[str, Any], run: Evaluation) -> Any:
            return strict_call(run.tracker, tag, function, [value(variables, run)], run.function)

        return unary

    def _logical(self, tree: CelTree, scope: frozenset[str], deciding: bool) -> Closure:
        terms = [self.compile(term, scope) for term in tree.children]

        def logical(variables: dict[str, Any], run: Evaluation) -> Any:
            return decide((term(variables, run) for term in terms), deciding)

        return logical

    # --- primaries ----------------------------------------------------------------------------

    def _primary(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        child = tree.children[0]
        if not isinstance(child, lark.Tree):
            raise _Interpreted
        if child.data == "paren_expr":
            return self.compile(child.children[0], scope)
        if child.data == "literal" and id(child) in self.plan.literals:
            literal = self.plan.literals[id(child)]
            return lambda variables, run: literal
        if child.data == "ident" and str(child.children[0]) in scope:
            return self._variable(str(child.children[0]), charged=id(child) not in self.plan.free)
        if child.data == "list_lit":
            return self._list(list(child.children[0].children) if child.children else [], scope)
        if child.data == "ident_arg":
            name = str(child.children[0])
            arguments = list(child.children[1].children) if len(child.children) > 1 else []
            if name in ("has", "dyn") and len(arguments) != 1:
                raise _Interpreted
            if name == "has":
                return self._has(unwrap(arguments[0]), scope)
            values = [self.compile(argument, scope) for argument in arguments]
            return self._dyn(values[0]) if name == "dyn" else self._call(child, name, values)
        raise _Interpreted

    @staticmethod
    def _variable(name: str, charged: bool) -> Closure:
        if not charged:
            return lambda variables, run: variables[name]

        def variable(variables: dict[str, Any], run: Evaluation) -> Any:
            run.tracker.charge(SELECT_COST)
            return variables[name]

        return variable

    def _list(self, elements: list[Any], scope: frozenset[str]) -> Closure:
        optional = [isinstance(node, lark.Tree) and node.data == "opt_entry" for node in elements]
        entries = [
            (is_optional, self.compile(node.children[0] if is_optional else node, scope))
            for is_optional, node in zip(optional, elements, strict=True)
        ]

        def list_literal(variables: dict[str, Any], run: Evaluation) -> Any:
            values = ((is_optional, entry(variables, run)) for is_optional, entry in entries)
            return make_list(run.tracker, values)

        return list_literal

    def _has(self, selection: Any, scope: frozenset[str]) -> Closure:
        if not (isinstance(selection, lark.Tree) and selection.data == "member_dot"):
            raise _Interpreted
        receiver, field = self._receiver(selection, scope), str(selection.children[1])
        return lambda variables, run: has_field(run.tracker, receiver(variables, run), field)

    @staticmethod
    def _dyn(value: Closure) -> Closure:
        def dyn(variables: dict[str, Any], run: Evaluation) -> Any:
            result = value(variables, run)
            run.tracker.charge(1)
            return result

        return dyn

    def _call(self, node: CelTree, function: str, arguments: list[Closure]) -> Closure:
        tag = self._tag(node)

        def call(variables: dict[str, Any], run: Evaluation) -> Any:
            values = [argument(variables, run) for argument in arguments]
            return strict_call(run.tracker, tag, function, values, run.function)

        return call

    # --- attributes ---------------------------------------------------------------------------

    def _receiver(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        """The chain's receiver, with the charge the interpreter makes before it for a computed one."""
        receiver = self.compile(tree.children[0], scope)
        if id(tree) not in self.plan.relative or id(tree) in self.plan.free:
            return receiver

        def relative(variables: dict[str, Any], run: Evaluation) -> Any:
            run.tracker.charge(SELECT_COST)
            return receiver(variables, run)

        return relative

    def _member_dot(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        receiver, optional = self._receiver(tree, scope), tree.data == "member_dot_opt"
        field = celtypes.StringType(str(tree.children[1]))

        def member_dot(variables: dict[str, Any], run: Evaluation) -> Any:
            return qualify(run.tracker, receiver(variables, run), field, optional, SELECT_COST)

        return member_dot

    def _member_index(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        receiver, optional = self._receiver(tree, scope), tree.data == "member_index_opt"
        key_value = self.compile(tree.children[1], scope)
        cost = 0 if id(tree) in self.plan.attribute_keys else SELECT_COST

        def member_index(variables: dict[str, Any], run: Evaluation) -> Any:
            target = receiver(variables, run)
            if isinstance(target, CELEvalError) or (isinstance(target, CelOptional) and not target.present):
                return target
            key = key_value(variables, run)
            if isinstance(key, CELEvalError):
                return key
            return qualify(run.tracker, target, key, optional, cost)

        return member_index

    # --- member calls and macros --------------------------------------------------------------

    def _member_call(self, tree: CelTree, scope: frozenset[str]) -> Closure:
        receiver_node, name = tree.children[0], str(tree.children[1])
        arguments = list(tree.children[2].children) if len(tree.children) > 2 else []
        if name in _COMPREHENSIONS and len(arguments) in _COMPREHENSIONS[name]:
            return self._comprehension(name, self.compile(receiver_node, scope), arguments, scope)
        if name in _INTERPRETED_MEMBER_CALLS:
            raise _Interpreted
        values = [self.compile(receiver_node, scope), *(self.compile(a, scope) for a in arguments)]
        return self._call(tree, name, values)

    def _comprehension(
        self, macro: str, receiver: Closure, arguments: list[Any], scope: frozenset[str]
    ) -> Closure:
        variable = innermost_name(arguments[0])
        bodies = [self.compile(body, scope | {variable}) for body in arguments[1:]]

        def fold(variables: dict[str, Any], run: Evaluation) -> Any:
            def body_value(body: Closure, item: Any) -> Any:
                return body({**variables, variable: item}, run)

            return comprehension(macro, receiver(variables, run), run.tracker, bodies, body_value)

        return fold
