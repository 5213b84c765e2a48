"""dipper's exceptions: dipper.Error and one subclass per DIPPER_* code.

Owns: the class of each code (never renumbered, as the C list), and the
reading of a handle's diagnostics into an exception after a failing call:
code, message, file, line, column, caret length and the rendered text with
its caret (dipper_diag_render), for the first diagnostic and every other.
"""

import ctypes
from dataclasses import dataclass
from typing import List, Optional

from . import _capi
from ._capi import lib


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a failing call: where (1-based line and byte column,
    0 when no place applies) and what, and the compiler-style rendering."""
    code: int
    message: str
    file: Optional[str]
    line: int
    column: int
    length: int
    rendered: str


class Error(Exception):
    """A call into dipper failed.  `code` is the DIPPER_* number, `code_name`
    its name ("SYNTAX"); `message`, `file`, `line`, `column`, `length` and
    `caret` (the rendered text, a caret under the place) come from the first
    diagnostic; `diagnostics` holds every one.  `traceback` is the Python
    traceback of a callback whose exception failed the query, else None."""

    code = -1
    code_name = "ERROR"

    def __init__(self, message, diagnostics=(), traceback=None):
        self.diagnostics: List[Diagnostic] = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else None
        self.message = first.message if first else message
        self.file = first.file if first else None
        self.line = first.line if first else 0
        self.column = first.column if first else 0
        self.length = first.length if first else 0
        self.caret = first.rendered if first else message
        self.traceback = traceback
        text = "\n".join(d.rendered for d in self.diagnostics) or message
        if traceback:
            text += "\nthe Python callback raised:\n" + traceback.rstrip("\n")
        super().__init__(text)


class CompileWarning(UserWarning):
    """A program compiled with a warning (Connection.check issues one per
    warning; its text is the rendered diagnostic)."""


CompileWarning.__module__ = "dipper"


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


# One class per code, named after it: SYNTAX -> dipper.SyntaxError.  Those
# whose names are also builtins' (SyntaxError, NameError, TypeError,
# TimeoutError, InterruptedError) live in the dipper namespace only, as
# asyncio.TimeoutError once did; they derive from dipper.Error, not the builtin.
by_code = {}
for _num, _name in enumerate(_capi.CODES):
    if _num == 0:
        continue
    _cls = type(_camel(_name) + "Error", (Error,),
                {"code": _num, "code_name": _name,
                 "__doc__": "DIPPER_%s: %s." % (_name, _capi.text(lib.dipper_strerror(_num)))})
    _cls.__module__ = "dipper"
    by_code[_num] = _cls
    globals()[_cls.__name__] = _cls
Error.__module__ = "dipper"
del _num, _name, _cls


def diagnostics(db):
    """The diagnostics of the last failing call on handle `db`."""
    out = []
    for i in range(lib.dipper_diag_count(db)):
        d = lib.dipper_diag_get(db, i)
        if not d:
            continue
        d = d.contents
        raw = lib.dipper_diag_render(db, i)
        rendered = ctypes.string_at(raw).decode("utf-8", "replace").rstrip("\n") if raw else ""
        lib.dipper_free(raw)
        out.append(Diagnostic(d.code, _capi.text(d.message) or "", _capi.text(d.file),
                              d.line, d.col, d.length, rendered or _capi.text(d.message) or ""))
    return out


def program_warnings(prog):
    """The warnings of compiled program `prog` (dipper_program_warning*):
    what compiles but deserves a word, such as streaming state that grows
    forever; as Diagnostic, in the order of the program's statements."""
    out = []
    for i in range(lib.dipper_program_warning_count(prog)):
        d = lib.dipper_program_warning(prog, i)
        if not d:
            continue
        d = d.contents
        raw = lib.dipper_program_warning_render(prog, i)
        rendered = ctypes.string_at(raw).decode("utf-8", "replace").rstrip("\n") if raw else ""
        lib.dipper_free(raw)
        out.append(Diagnostic(d.code, _capi.text(d.message) or "", _capi.text(d.file),
                              d.line, d.col, d.length, rendered or _capi.text(d.message) or ""))
    return out


def make(code, db=None, message=None, traceback=None):
    """The exception for `code` returned by a call on `db` (its diagnostics
    read now, before any other call on db)."""
    cls = by_code.get(code, Error)
    diags = diagnostics(db) if db else []
    if message is None:
        message = (_capi.text(lib.dipper_errmsg(db)) if db else "") or \
                  _capi.text(lib.dipper_strerror(code))
    err = cls(message, diags, traceback)
    if cls is Error:
        err.code = code
    return err


def check(code, db=None, traceback=None):
    if code != _capi.OK:
        raise make(code, db, traceback=traceback)
