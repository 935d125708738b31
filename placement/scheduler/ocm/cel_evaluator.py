"""cel-python's interpreter, made to evaluate and cost expressions the way cel-go's planned program does.

upstream: cel-go `interpreter` (the attribute resolution of `attributes.go`, `evalAnd`/`evalOr`,
`evalFold` with the comprehensions `parser/macro.go` expands the macros into, the optional library's
`optMap`/`optFlatMap` macros and its short-circuiting `or`/`orValue`) and the runtime cost of
`runtimecost.go`. What cel-python does differently and this class changes:
- `&&` and `||` stop at the first deciding term instead of evaluating both;
- the comprehension macros fold as cel-go does (`all` stops at the first false, `exists` at the first
  true, errors are absorbed by a later deciding element) and are charged per iteration for the
  accumulator, condition and step cel-go evaluates;
- selections and indexes resolve as attribute qualifiers: after an optional one (`.?f`, `[?k]`) or on an
  optional value the chain yields `optional.none()` where a key is missing;
- `==` and `!=` compare values of different types as unequal (numbers by value), not as an error;
- list and map literals take optional entries (`[?x]`, `{?k: v}`) and trailing commas.
Costs charged here are the structural ones; calls are priced by `cel_cost.call_cost`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import lark
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator

from placement.scheduler.ocm.cel_cost import (
    LIST_CREATE_COST,
    MAP_CREATE_COST,
    SELECT_COST,
    CostTracker,
    call_cost,
)
from placement.scheduler.ocm.cel_library import CelOptional, equals, is_number, native
from placement.scheduler.ocm.cel_syntax import OPERATORS, TYPE_NAMES, innermost_name, unwrap

# parse trees, whose children the grammar makes trees or tokens by position
CelTree = lark.Tree[Any]

_NONE = CelOptional()
_MISSING = object()

_CHAINS = frozenset({"member_dot", "member_dot_opt", "member_index", "member_index_opt"})
_COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})


def _is_attribute(node: Any) -> bool:
    """cel-go plans this expression as an attribute: a variable, a selection chain or a conditional."""
    node = unwrap(node)
    if not isinstance(node, lark.Tree):
        return False
    return (
        node.data in ("ident", "dot_ident")
        or node.data in _CHAINS
        or (node.data == "expr" and len(node.children) == 3)
    )


@dataclass(frozen=True, slots=True)
class CostPlan:
    """What an expression's parse tree costs where cel-go's plan differs from one unit per node, and the
    values of its literals, which are the same on every evaluation.

    `free`: variables and chains whose base costs nothing because a conditional resolves them as its
    branch; `relative`: chains on a computed value, whose base costs one; `attribute_keys`: indexes whose
    key is itself an attribute (cel-go merges its cost); `tags`: call nodes resolved to one overload;
    `literals`: the value of each literal node that converts without an error.
    """

    free: frozenset[int]
    relative: frozenset[int]
    attribute_keys: frozenset[int]
    tags: dict[int, str]
    literals: dict[int, Any]


def _chain_base(node: Any) -> Any:
    """The lowest selection of a chain (the one applied to the chain's root), or the node itself."""
    node = unwrap(node)
    while isinstance(node, lark.Tree) and node.data in _CHAINS:
        receiver = unwrap(node.children[0])
        if not (isinstance(receiver, lark.Tree) and receiver.data in _CHAINS):
            return node
        node = receiver
    return node


def plan_costs(tree: CelTree, tags: dict[int, str]) -> CostPlan:
    free: set[int] = set()
    relative: set[int] = set()
    attribute_keys: set[int] = set()
    literals: dict[int, Any] = {}
    converter = Evaluator(tree, Activation())
    for node in tree.iter_subtrees():
        if node.data == "literal":
            value = converter.literal(node)
            if not isinstance(value, CELEvalError):
                literals[id(node)] = value
        if node.data == "expr" and len(node.children) == 3:
            for branch in node.children[1:]:
                base = _chain_base(branch)
                root = unwrap(base.children[0]) if base.data in _CHAINS else base
                if isinstance(root, lark.Tree) and root.data in ("ident", "dot_ident"):
                    free.add(id(root))
                elif base.data in _CHAINS:
                    free.add(id(base))
        if node.data == "ident" and str(node.children[0]) in TYPE_NAMES:
            free.add(id(node))  # a type name is a constant of cel-go's plan
        if node.data in _CHAINS and not _is_attribute(node.children[0]):
            relative.add(id(node))
        if node.data in ("member_index", "member_index_opt") and _is_attribute(node.children[1]):
            attribute_keys.add(id(node))
    return CostPlan(frozenset(free), frozenset(relative), frozenset(attribute_keys), tags, literals)


# the two booleans, made once: most calls and every `&&`/`||` answer one of them
_TRUE, _FALSE = celtypes.BoolType(True), celtypes.BoolType(False)
_ARITHMETIC = frozenset({"_+_", "_-_", "_*_", "_/_", "_%_"})


def _numeric_kinds_differ(args: list[Any]) -> bool:
    if not all(is_number(arg) for arg in args):
        return False
    return len({"uint" if isinstance(arg, celtypes.UintType) else type(native(arg)) for arg in args}) > 1


def _lookup(container: Any, key: Any) -> Any:
    """The value under `key`, `_MISSING` when absent, or a CEL error when it cannot be qualified."""
    if isinstance(container, dict):
        if isinstance(key, str):
            # what MapType.get does for a string key, without its key-type test
            return dict.get(container, key, _MISSING)
        if not is_number(key):
            return container.get(key, _MISSING) if isinstance(key, bool) else _MISSING
        # numeric keys of different types are the same key when their values are equal
        return next((v for k, v in container.items() if is_number(k) and equals(k, key)), _MISSING)
    if isinstance(container, list):
        if not is_number(key) or (isinstance(key, float) and not key.is_integer()):
            return CELEvalError(f"unsupported index type: {type(key).__name__}")
        index = int(key)
        return container[index] if 0 <= index < len(container) else _MISSING
    return CELEvalError(f"no such overload: qualifying a {type(container).__name__}")


def resolve_function(bound: Mapping[str, Callable[..., Any]], activation: Activation, name: str) -> Any:
    """The function (or type) `name`: one bound to this evaluation, else the activation's; KeyError when
    there is none."""
    return bound[name] if name in bound else activation.resolve_function(name)


def strict_call(
    tracker: CostTracker, tag: str, function: str, args: list[Any], resolve: Callable[[str], Any]
) -> Any:
    """A strict call: an error argument is the result, and the call is charged either way."""
    result: Any
    for arg in args:
        if isinstance(arg, CELEvalError):
            result = arg
            break
    else:
        result = _apply(function, args, resolve)
    tracker.charge(call_cost(function, tag, args, result))
    return result


def _apply(function: str, args: list[Any], resolve: Callable[[str], Any]) -> Any:
    """The result of calling `function` with arguments none of which is an error."""
    if function in _ARITHMETIC and _numeric_kinds_differ(args):
        # cel-go has no mixed int/uint/double arithmetic, not even on dyn values
        return CELEvalError(f"no such overload: {function}")
    if function == "_==_":
        return _TRUE if equals(args[0], args[1]) else _FALSE
    if function == "_!=_":
        return _FALSE if equals(args[0], args[1]) else _TRUE
    try:
        return resolve(function)(*args)
    except KeyError:
        return CELEvalError(f"undeclared reference to '{function}'")
    except (TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        return CELEvalError(f"no such overload: {function}: {exc}")


def decide(values: Iterator[Any], deciding: bool) -> Any:
    """`&&` (deciding false) or `||` (deciding true) of the values, taken until one decides: an error or
    a non-bool is the result only when no term decides."""
    errors = []
    for value in values:
        if isinstance(value, celtypes.BoolType):
            if bool(value) == deciding:
                return _TRUE if deciding else _FALSE
        else:
            errors.append(value if isinstance(value, CELEvalError) else CELEvalError("no such overload"))
    if errors:
        return errors[0]
    return _FALSE if deciding else _TRUE


def qualify(tracker: CostTracker, receiver: Any, key: Any, optional: bool, cost: int) -> Any:
    """`receiver.key` or `receiver[key]` (optional: `.?key`, `[?key]`), charging `cost` when it resolves."""
    if isinstance(receiver, CELEvalError):
        return receiver
    chained = isinstance(receiver, CelOptional)
    if isinstance(receiver, CelOptional):
        if not receiver.present:
            return receiver
        receiver = receiver.value
    found = _lookup(receiver, key)
    if optional or chained:
        # cel-go charges an optional qualifier only when it finds a value
        if found is _MISSING:
            return _NONE
        if isinstance(found, CELEvalError):
            return found
        tracker.charge(cost)
        return CelOptional(found, True)
    tracker.charge(cost)
    return CELEvalError(f"no such key: {key}") if found is _MISSING else found


def has_field(tracker: CostTracker, receiver: Any, field: str) -> Any:
    """`has(receiver.field)`."""
    if isinstance(receiver, CELEvalError):
        return receiver
    tracker.charge(SELECT_COST)
    if isinstance(receiver, dict):
        return celtypes.BoolType(celtypes.StringType(field) in receiver)
    return CELEvalError("invalid type for field selection")


def make_list(tracker: CostTracker, entries: Iterator[tuple[bool, Any]]) -> Any:
    """A list literal of the (optional, value) entries, taken in order after the list is charged."""
    tracker.charge(LIST_CREATE_COST)
    values = []
    for optional, value in entries:
        if isinstance(value, CELEvalError):
            return value
        if optional:
            if not isinstance(value, CelOptional):
                return CELEvalError("cannot initialize optional list element from non-optional value")
            if value.present:
                values.append(value.value)
        else:
            values.append(value)
    return celtypes.ListType(values)


# A comprehension's body evaluated with its variable bound to one element.
BodyRunner = Callable[[Any, Any], Any]


def comprehension(
    macro: str, collection: Any, tracker: CostTracker, bodies: list[Any], run: BodyRunner
) -> Any:
    """The fold cel-go expands macro `macro` into over `collection`; `run(body, item)` is the value of one
    of `bodies` (the condition, then the transform of a three-argument `map`) for one element."""
    if isinstance(collection, CELEvalError):
        return collection
    if not isinstance(collection, list | dict):
        return CELEvalError(f"expression of type {type(collection).__name__} cannot be ranged over")
    charge = tracker.charge
    if macro in ("map", "filter"):
        charge(LIST_CREATE_COST)  # the accumulator starts as []
    accumulator: Any = {"all": _TRUE, "exists": _FALSE}.get(macro)
    if macro == "exists_one":
        accumulator = celtypes.IntType(0)
    elif macro in ("map", "filter"):
        accumulator = []
    for item in list(collection):
        if macro == "all":
            charge(2)  # @not_strictly_false(@result)
            if accumulator is not None and accumulator == _FALSE:
                break
        elif macro == "exists":
            charge(3)  # @not_strictly_false(!@result)
            if accumulator == _TRUE:
                break
        accumulator = _step(macro, accumulator, item, bodies, run, charge)
    if macro == "exists_one":
        charge(2)  # @result == 1
        if isinstance(accumulator, CELEvalError):
            return accumulator
        return celtypes.BoolType(accumulator == 1)
    charge(SELECT_COST)  # the result reads @result
    if isinstance(accumulator, list):
        return celtypes.ListType(accumulator)
    return accumulator


def _step(
    macro: str, accumulator: Any, item: Any, bodies: list[Any], run: BodyRunner, charge: Callable[[int], None]
) -> Any:
    if macro in ("all", "exists"):
        charge(SELECT_COST)  # @result && e / @result || e
        predicate = run(bodies[0], item)
        deciding = macro == "exists"
        if isinstance(predicate, celtypes.BoolType) and bool(predicate) == deciding:
            return predicate
        if isinstance(accumulator, CELEvalError):
            return accumulator
        if not isinstance(predicate, celtypes.BoolType):
            return predicate if isinstance(predicate, CELEvalError) else CELEvalError("no such overload")
        return accumulator
    if macro == "map" and len(bodies) == 1:
        condition: Any = _TRUE
    else:
        condition = run(bodies[0], item)
    if not isinstance(condition, celtypes.BoolType):
        return condition if isinstance(condition, CELEvalError) else CELEvalError("no such overload")
    if macro == "exists_one":
        if condition:
            charge(SELECT_COST + 1)  # @result + 1
            return accumulator if isinstance(accumulator, CELEvalError) else accumulator + 1
        return accumulator
    if not condition:
        return accumulator
    # @result + [element]
    charge(SELECT_COST + LIST_CREATE_COST + 1)
    if macro == "filter":
        charge(SELECT_COST)
        element = item
    else:
        element = run(bodies[-1], item)
    if isinstance(accumulator, CELEvalError):
        return accumulator
    return element if isinstance(element, CELEvalError) else [*accumulator, element]


# Rules that, with one child, are that child's value: `visit` steps through them without a call.
_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
)


class CelEvaluator(Evaluator):
    """Evaluates one compiled expression, charging `tracker` as cel-go's cost tracker would.

    `variables` are the values of the expression's variables (the cluster, and the comprehension
    variables in scope while a macro runs); `bound` the functions bound to this evaluation's input (OCM's
    `scores` of the cluster); any other name is a function or a type of `activation`, which can then be
    shared by every evaluation.
    """

    def __init__(
        self,
        ast: CelTree,
        activation: Activation,
        tracker: CostTracker,
        plan: CostPlan,
        variables: dict[str, Any],
        bound: Mapping[str, Callable[..., Any]],
    ) -> None:
        super().__init__(ast, activation)
        self.tracker = tracker
        self.plan = plan
        self.variables = variables
        self.bound = bound

    def sub_evaluator(self, ast: CelTree) -> Evaluator:
        return CelEvaluator(ast, self.activation, self.tracker, self.plan, self.variables, self.bound)

    def evaluate(self, context: Any = None) -> Any:
        """The expression's value, raising it when it is an error (the variables are given at creation)."""
        value = self.visit(self.ast)
        if isinstance(value, CELEvalError):
            raise value
        return value

    def visit(self, tree: CelTree) -> Any:
        while len(tree.children) == 1 and tree.data in _PASS_THROUGH:
            tree = tree.children[0]
        return getattr(self, tree.data)(tree)

    def visit_children(self, tree: CelTree) -> list[Any]:
        return [self.visit(child) if isinstance(child, lark.Tree) else child for child in tree.children]

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        # as celpy's Activation resolves a name: a variable first, then a function or type of that name
        return self.variables[name] if name in self.variables else self._function(name)

    def _function(self, name: str) -> Any:
        return resolve_function(self.bound, self.activation, name)

    def _with_variable(self, ast: Any, name: str, value: Any) -> Any:
        outer = self.variables
        self.variables = {**outer, name: value}
        try:
            return self.visit(ast)
        finally:
            self.variables = outer

    def _call(self, node: Any, function: str, args: list[Any]) -> Any:
        return strict_call(self.tracker, self.plan.tags.get(id(node), ""), function, args, self._function)

    # --- operators ----------------------------------------------------------------------------

    def _binary(self, tree: CelTree) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        operator, right = tree.children
        assert isinstance(operator, lark.Tree)
        left_value = self.visit(operator.children[0])
        return self._call(tree, OPERATORS[operator.data], [left_value, self.visit(right)])

    relation = addition = multiplication = _binary

    def unary(self, tree: CelTree) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        operator, operand = tree.children
        assert isinstance(operator, lark.Tree)
        return self._call(tree, OPERATORS[operator.data], [self.visit(operand)])

    def _logical(self, tree: CelTree, deciding: bool) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        return decide((self.visit(term) for term in tree.children), deciding)

    def conditionalor(self, tree: CelTree) -> Any:
        return self._logical(tree, deciding=True)

    def conditionaland(self, tree: CelTree) -> Any:
        return self._logical(tree, deciding=False)

    # --- attributes ---------------------------------------------------------------------------

    def _receiver(self, tree: CelTree) -> Any:
        if id(tree) in self.plan.relative and id(tree) not in self.plan.free:
            self.tracker.charge(SELECT_COST)
        return self.visit(tree.children[0])

    def member_dot(self, tree: CelTree) -> Any:
        receiver = self._receiver(tree)
        return qualify(self.tracker, receiver, celtypes.StringType(str(tree.children[1])), False, SELECT_COST)

    def member_dot_opt(self, tree: CelTree) -> Any:
        receiver = self._receiver(tree)
        return qualify(self.tracker, receiver, celtypes.StringType(str(tree.children[1])), True, SELECT_COST)

    def _index(self, tree: CelTree, optional: bool) -> Any:
        receiver = self._receiver(tree)
        if isinstance(receiver, CELEvalError) or (isinstance(receiver, CelOptional) and not receiver.present):
            return receiver
        key = self.visit(tree.children[1])
        if isinstance(key, CELEvalError):
            return key
        cost = 0 if id(tree) in self.plan.attribute_keys else SELECT_COST
        return qualify(self.tracker, receiver, key, optional, cost)

    def member_index(self, tree: CelTree) -> Any:
        return self._index(tree, optional=False)

    def member_index_opt(self, tree: CelTree) -> Any:
        return self._index(tree, optional=True)

    def _has(self, argument: Any) -> Any:
        selection = unwrap(argument)
        return has_field(self.tracker, self._receiver(selection), str(selection.children[1]))

    # --- primaries ----------------------------------------------------------------------------

    def primary(self, tree: CelTree) -> Any:
        child = tree.children[0]
        assert isinstance(child, lark.Tree)
        if child.data in ("ident", "dot_ident"):
            if id(child) not in self.plan.free:
                self.tracker.charge(SELECT_COST)
            return super().primary(tree)
        if child.data in ("ident_arg", "dot_ident_arg"):
            name = str(child.children[0])
            arguments = list(child.children[1].children) if len(child.children) > 1 else []
            if name == "has":
                return self._has(arguments[0])
            values = [self.visit(argument) for argument in arguments]
            if name == "dyn":
                self.tracker.charge(1)
                return values[0]
            return self._call(child, name, values)
        if child.data == "literal" and id(child) in self.plan.literals:
            return self.plan.literals[id(child)]
        if child.data == "list_lit":
            return self._list(child)
        if child.data == "map_lit":
            return self._map(child)
        return super().primary(tree)

    def _entries(self, nodes: list[Any]) -> Iterator[tuple[bool, Any]]:
        for node in nodes:
            optional = isinstance(node, lark.Tree) and node.data == "opt_entry"
            yield optional, self.visit(node.children[0] if optional else node)

    def _list(self, tree: CelTree) -> Any:
        elements = list(tree.children[0].children) if tree.children else []
        return make_list(self.tracker, self._entries(elements))

    def _map(self, tree: CelTree) -> Any:
        self.tracker.charge(MAP_CREATE_COST)
        entries = list(tree.children[0].children) if tree.children else []
        result: dict[Any, Any] = {}
        for (optional, key), value_node in zip(self._entries(entries[0::2]), entries[1::2], strict=True):
            value = self.visit(value_node)
            error = key if isinstance(key, CELEvalError) else value
            if isinstance(error, CELEvalError):
                return error
            if not isinstance(key, str | int) or isinstance(key, float):
                return CELEvalError(f"unsupported key type: {type(key).__name__}")
            if optional:
                if not isinstance(value, CelOptional):
                    return CELEvalError("cannot initialize optional entry from non-optional value")
                if not value.present:
                    continue
                value = value.value
            if any(equals(key, existing) for existing in result):
                return CELEvalError(f"Failed with repeated key: {key}")
            result[key] = value
        return celtypes.MapType(result)

    # --- member calls and macros --------------------------------------------------------------

    def member_dot_arg(self, tree: CelTree) -> Any:
        receiver_node, name = tree.children[0], str(tree.children[1])
        arguments = list(tree.children[2].children) if len(tree.children) > 2 else []
        if name in _COMPREHENSIONS and len(arguments) in ((2, 3) if name == "map" else (2,)):
            return self._comprehension(name, receiver_node, arguments)
        if name in ("optMap", "optFlatMap") and len(arguments) == 2:
            return self._optional_map(name, receiver_node, arguments)
        receiver = self.visit(receiver_node)
        if name in ("or", "orValue") and len(arguments) == 1:
            return self._optional_or(name, receiver, arguments[0])
        return self._call(tree, name, [receiver, *(self.visit(argument) for argument in arguments)])

    def _optional_or(self, name: str, receiver: Any, alternative: Any) -> Any:
        """cel-go evaluates the alternative of `or`/`orValue` only when the receiver is none."""
        if isinstance(receiver, CELEvalError):
            return receiver
        if not isinstance(receiver, CelOptional):
            return CELEvalError(f"no such overload: {name}")
        if receiver.present:
            return receiver.value if name == "orValue" else receiver
        other = self.visit(alternative)
        if name == "or" and not isinstance(other, CelOptional | CELEvalError):
            return CELEvalError("no such overload: or")
        return other

    def _optional_map(self, name: str, receiver_node: Any, arguments: list[Any]) -> Any:
        # cel-go expands `t.optMap(x, e)` to `t.hasValue() ? optional.of([].fold(x = t.value(); e)) :
        # optional.none()`: the target is evaluated twice when it has a value
        before = self.tracker.cost
        target = self.visit(receiver_node)
        target_cost = self.tracker.cost - before
        self.tracker.charge(1)  # hasValue()
        if isinstance(target, CELEvalError):
            return target
        if not isinstance(target, CelOptional):
            return CELEvalError("no such overload: hasValue")
        if not target.present:
            self.tracker.charge(1)  # optional.none()
            return _NONE
        self.tracker.charge(target_cost + 1 + LIST_CREATE_COST)  # target again, value(), the empty range
        value = self._with_variable(arguments[1], innermost_name(arguments[0]), target.value)
        if name == "optFlatMap":
            if not isinstance(value, CelOptional | CELEvalError):
                return CELEvalError("no such overload: optFlatMap")
            return value
        self.tracker.charge(1)  # optional.of()
        return value if isinstance(value, CELEvalError) else CelOptional(value, True)

    def _comprehension(self, macro: str, receiver_node: Any, arguments: list[Any]) -> Any:
        collection = self.visit(receiver_node)
        variable = innermost_name(arguments[0])
        return comprehension(
            macro,
            collection,
            self.tracker,
            arguments[1:],
            lambda body, item: self._with_variable(body, variable, item),
        )
