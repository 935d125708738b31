"""List editors shared by every app (a cluster's taints, a placement's tolerations): rows and buttons.

An editor is a formset of rows (`RowFormSet`, drawn by `_row_editor.html`: one table row per entry with
its Remove button) and buttons, each a POST with CSRF: `add` a blank row, `remove-<n>` row n, `preview`
what saving would do, `save`. Adding and removing rows are answered by the server (the formset's extra
form and DELETE), so they work without JavaScript; htmx swaps the answer in place, and focus moves to the
new row, or to the row after the removed one. `edit_rows` is that flow once for every editor; the domain
modules judge the rows and name the field they reject (`{"taints[2].key": reason}`), so the page and
the API show the same messages.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages as notices
from django.core.exceptions import PermissionDenied, ValidationError
from django.forms.formsets import DELETION_FIELD_NAME
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from core import listing
from core.requests import HtmxRequest

# A preview writes nothing; said so, because the rows on the page now differ from what is saved.
PREVIEWED = "Preview only: nothing is saved until you press Save."
_ROW_PATH = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\](?:\.(?P<field>\w+))?$")
ADD, REMOVE = "add", "remove-"


class KnownValuesSelect(forms.Select):
    """A select of the values an API accepts that still offers a value outside them (read from a hub or
    posted) as its selected option: saving then sends it back for the domain to name, instead of the
    browser silently replacing it with the first accepted value."""

    def optgroups(self, name: str, value: list[Any], attrs: dict[str, Any] | None = None) -> list[Any]:
        groups = super().optgroups(name, value, attrs)
        known = {str(choice) for choice, _ in self.choices}
        for unknown in (text for text in value if text and text not in known):
            label = f"{unknown} (not accepted)"
            option = self.create_option(name, unknown, label, True, len(groups), attrs=attrs)
            groups.append((None, [option], len(groups)))
        return groups


@dataclass(frozen=True)
class EditorRow:
    """A row the editor shows: its form, its index in the formset (in its ids and its Remove button's
    value) and its number as people count (removed rows left out)."""

    index: int
    number: int
    form: forms.Form


class RowFormSet(forms.BaseFormSet[forms.Form]):
    """The rows of a list editor; `path` is the list's field path in the domain's errors.

    `rows()` are the rows to keep, as the domain takes them: deleted rows and untouched blank rows are
    dropped. `add_path_errors` puts the domain's `{"<path>[2].key": reason}` (counted over the kept
    rows) on that row's field. `shown()` are the rows the editor draws, `hidden()` the removed ones it
    sends again as their DELETE alone, and `focus` says which row takes the focus after Add or Remove.
    """

    path = ""
    # the heading of a read-only column after the inputs showing each form's `note` ("" for none)
    note_heading = ""
    # the Add button takes the focus (the last row was removed)
    focus_add = False

    def removed(self, form: forms.Form) -> bool:
        """Whether the row was removed (its DELETE sent): it stays in the formset, hidden."""
        return self.can_delete and form.is_bound and bool(form[DELETION_FIELD_NAME].value())

    def shown(self) -> list[EditorRow]:
        """The rows that were not removed, numbered from 1."""
        shown = [(index, form) for index, form in enumerate(self.forms) if not self.removed(form)]
        return [EditorRow(index, number, form) for number, (index, form) in enumerate(shown, 1)]

    @property
    def columns(self) -> int:
        """The number of columns of the rows' table: the inputs, the note and Remove."""
        inputs = [name for name in self.empty_form.fields if name != DELETION_FIELD_NAME]
        return len(inputs) + bool(self.note_heading) + 1

    def hidden(self) -> list[forms.Form]:
        """The removed rows, sent again (their DELETE alone) so the formset's indices stay the same."""
        return [form for form in self.forms if self.removed(form)]

    def focus(self, index: int) -> None:
        """Give the focus to row `index`, or after the rows are gone to the Add button: its first input
        gets `autofocus`, which a page load and htmx (after its swap) both honour."""
        rows = self.shown()
        target = next((row.form for row in rows if row.index >= index), rows[-1].form if rows else None)
        if target is None:
            self.focus_add = True
            return
        first = next(name for name in target.fields if name != DELETION_FIELD_NAME)
        target.fields[first].widget.attrs["autofocus"] = True

    def kept_forms(self) -> list[forms.Form]:
        """Call after is_valid(): the rows that are neither deleted nor blank extras."""
        initial = self.initial_form_count()
        return [
            form
            for index, form in enumerate(self.forms)
            if not (self.can_delete and form.cleaned_data.get(DELETION_FIELD_NAME, False))
            and (index < initial or form.has_changed())
        ]

    def row(self, data: dict[str, Any]) -> dict[str, Any]:
        """One kept form's cleaned data as the domain's entry (blank fields left out)."""
        return {
            name: value
            for name, value in data.items()
            if name != DELETION_FIELD_NAME and value not in ("", None)
        }

    def rows(self) -> list[dict[str, Any]]:
        return [self.row(form.cleaned_data) for form in self.kept_forms()]

    def add_path_errors(self, exc: ValidationError) -> None:
        kept = self.kept_forms()
        errors = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        for path, messages in errors.items():
            match = _ROW_PATH.match(path)
            index = int(match["index"]) if match and match["list"] == self.path else len(kept)
            for message in messages:
                if index >= len(kept):
                    self.non_form_errors().append(f"{path}: {message}" if path else message)
                    continue
                form, field = kept[index], match["field"] if match else None
                form.add_error(field if field in form.fields else None, message)

    @classmethod
    def with_new_row(cls, data: QueryDict, prefix: str) -> QueryDict:
        """The submitted rows and one blank row more (the editor's Add button)."""
        data = data.copy()
        total = f"{prefix}-TOTAL_FORMS"
        count = data.get(total, "")
        if count.isdigit():
            data[total] = str(int(count) + 1)
        return data

    @classmethod
    def without_row(cls, data: QueryDict, prefix: str, index: int) -> QueryDict:
        """The submitted rows with row `index` removed (its DELETE on: the editor's Remove button)."""
        data = data.copy()
        data[f"{prefix}-{index}-{DELETION_FIELD_NAME}"] = "on"
        return data


@dataclass(frozen=True)
class EditorPage:
    """What the editor's own page shows above its section (`_editor_page.html`)."""

    title: str
    heading: str
    kind: str
    # (label, url) from the list page down to the editor itself; a blank url is plain text
    crumbs: tuple[tuple[str, str], ...]


def respond(
    request: HtmxRequest, section: str, context: dict[str, Any], status: int, page: EditorPage
) -> HttpResponse:
    """The editor's section alone for htmx; without JavaScript the section on a page of its own."""
    if listing.wants_fragment(request):
        response = render(request, section, context, status=status)
    else:
        context = {**context, "section": section, "editor_page": page}
        response = render(request, "_editor_page.html", context, status=status)
    patch_vary_headers(response, listing.HTMX_HEADERS)
    return response


class EditFailed(Exception):
    """A save the outside world refused (a hub's answer): the status and the sentence to show; the rows
    sent stay in the editor for another try unless `keep_rows` is off (they were reloaded instead)."""

    def __init__(self, status: int, message: str, *, keep_rows: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.keep_rows = keep_rows


# respond(status, formset=None, **context): the editor's answer (its section for htmx, else its page)
Respond = Callable[..., HttpResponse]


@dataclass(frozen=True)
class ListEditor:
    """What one editor plugs into `edit_rows`."""

    prefix: str
    # the formset of the submitted rows (QueryDict) or of the stored ones (None)
    formset: Callable[[QueryDict | None], RowFormSet]
    may_edit: bool
    denied: str
    # the rows -> extra context of the preview answer; raises ValidationError
    preview: Callable[[list[dict[str, Any]]], dict[str, Any]]
    # the rows -> saved; raises PermissionDenied, ValidationError or EditFailed
    save: Callable[[list[dict[str, Any]]], object]
    respond: Respond
    # the answer once saved
    saved: Callable[[], HttpResponse]


def edit_rows(request: HttpRequest, editor: ListEditor) -> HttpResponse:
    """One press of an editor's button. Adding a row and previewing need `may_edit` (403 otherwise);
    saving is authorised (and audited) by the domain's own save."""
    action = request.POST.get("action", "preview")
    if action != "save" and not editor.may_edit:
        return editor.respond(403, error=editor.denied)
    if action == ADD or action.startswith(REMOVE):
        return editor.respond(200, formset=_rows_changed(editor, request.POST, action))
    formset = editor.formset(request.POST)
    if not formset.is_valid():
        return editor.respond(400, formset=formset)
    try:
        if action != "save":
            preview = editor.preview(formset.rows())
            notices.info(request, PREVIEWED)
            return editor.respond(200, formset=formset, **preview)
        editor.save(formset.rows())
    except PermissionDenied:
        return editor.respond(403, error=editor.denied)
    except ValidationError as exc:
        formset.add_path_errors(exc)
        return editor.respond(400, formset=formset)
    except EditFailed as exc:
        kept = {"formset": formset} if exc.keep_rows else {}
        return editor.respond(exc.status, error=exc.message, **kept)
    return editor.saved()


def _rows_changed(editor: ListEditor, data: QueryDict, action: str) -> RowFormSet:
    """The rows after Add (a blank row more, focused) or Remove (focus on the row after it)."""
    if action == ADD:
        formset = editor.formset(RowFormSet.with_new_row(data, editor.prefix))
        formset.focus(formset.total_form_count() - 1)
        return formset
    index = action.removeprefix(REMOVE)
    if not index.isdigit():
        return editor.formset(data)
    formset = editor.formset(RowFormSet.without_row(data, editor.prefix, int(index)))
    formset.focus(int(index))
    return formset
