"""The CEL grammar of cel-python, extended with the optional syntax cel-go parses.

upstream: cel-go's `parser` with `EnableOptionalSyntax`, which `cel.OptionalTypes()` (in OCM's
environment) turns on: `a.?b` and `a[?k]` (optional selection and indexing), `[?x]` list elements,
`{?k: v}` map entries, and trailing commas in list and map literals. cel-python's grammar is read from
the installed package and extended with Lark's `%extend` / `%override`, so the extension is part of the
grammar (string literals, comments and precedence stay the parser's job) rather than a text rewrite.

New parse-tree nodes: `member_dot_opt` (member, IDENT), `member_index_opt` (member, expr), `list_lit`
holding one `listinits`, `map_lit` holding one `mapinits` of alternating keys and values, where an
element or key written with `?` is an `opt_entry` wrapping its expression.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import lark
from celpy.celparser import CELParser

_OPTIONAL_SYNTAX = r"""
%extend member: member_dot_opt | member_index_opt
member_dot_opt: member "." "?" IDENT
member_index_opt: member "[" "?" expr "]"
%override list_lit: "[" [listinits] "]"
%override map_lit: "{" [mapinits] "}"
listinits: optexpr ("," optexpr)* [","]
%override mapinits: optexpr ":" expr ("," optexpr ":" expr)* [","]
?optexpr: expr | opt_entry
opt_entry: "?" expr
"""


@cache
def parser() -> lark.Lark:
    """The parser, built once per process (a quarter of a second): a worker builds it before it takes
    tasks, so that the first CEL placement of a pass does not wait for it."""
    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
    # the options cel-python builds its own parser with, so the trees have the shapes it evaluates
    return lark.Lark(
        grammar + _OPTIONAL_SYNTAX,
        parser="lalr",
        start="expr",
        g_regex_flags=re.M,
        lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
        propagate_positions=True,
        maybe_placeholders=False,
        priority="invert",
    )


def parse(expression: str) -> lark.Tree[lark.Token]:
    """The parse tree of one expression; raises lark's UnexpectedInput for a syntax error.

    The rule names are plain strings: lark makes them Tokens, whose comparisons run Python code, and the
    evaluator compares them at every step.
    """
    tree = parser().parse(expression)
    for node in tree.iter_subtrees():
        node.data = str(node.data)
    return tree


# identifiers that name types: constants, not variables
TYPE_NAMES = frozenset(
    {"bool", "bytes", "double", "int", "list", "map", "null_type", "string", "type", "uint"}
)

# the functions cel-go names the operators with, by the grammar rule that writes them
OPERATORS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
    "addition_add": "_+_", "addition_sub": "_-_",
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
    "unary_not": "!_", "unary_neg": "-_",
}  # fmt: skip

# grammar nodes that only wrap their single child (precedence levels and parentheses, which cel-go's
# parser drops)
_WRAPPERS = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member",
     "primary", "paren_expr"}
)  # fmt: skip


def unwrap(node: Any) -> Any:
    """The node an expression stands for once precedence levels and parentheses are looked through."""
    while isinstance(node, lark.Tree) and node.data in _WRAPPERS and len(node.children) == 1:
        node = node.children[0]
    return node


def innermost_name(node: Any) -> str:
    """The text of the first token under `node`: the name of a macro's variable."""
    while isinstance(node, lark.Tree):
        node = node.children[0]
    return str(node)
