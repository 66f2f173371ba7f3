"""A saved file — a trace, an evaluation report, a QA set, an index manifest — is untrusted input: a colleague hands it
over, a link names it, a hand may have written it. Every kind is read the same way here, and each kind's schema
(gear.trace.schema, gear.eval.report_file, gear.data.qa_set, gear.index.manifest) says what its fields may hold:

- its size and its nesting are checked before it is parsed, so a 50 MB file or a 50,000-deep array never reaches
  the parser, and every recursive step after it has a bound;
- a number in a saved file is a finite number (Python's json writes and reads NaN and Infinity; every schema refuses
  them, naming the field);
- one typed schema checks every field's type and range (`typed`: a pydantic schema mirrored from a dataclass, strict:
  a number is a number, never a string that looks like one);
- a file is opened only inside the folders it may come from, links resolved first (`inside`).

A file that fails says so in one line: the file, the field (`events[12].k`) and why (`SavedFileError`).
"""

from __future__ import annotations

import dataclasses
import json
import re
import stat
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any, NotRequired, TypeVar, Union

from pydantic import AfterValidator, Field, StrictBool, TypeAdapter, ValidationError
from typing_extensions import TypeAliasType, TypedDict

MAX_DEPTH = 64  # nesting of arrays and objects: the bundled traces and reports nest 8 deep at most
MAX_ITEMS = 100_000  # items in one list or object
MAX_TEXT = 1_000_000  # characters of one string: a passage, a model's raw answer, a triple the model wrote
MAX_NAME = 10_000  # a title, an entity's name, an answer
MAX_WORD = 1_000  # an id, a kind, a method's, a model's or a stage's name
SAFE_INT = 2**53  # an integer a browser's number holds exactly

T = TypeVar("T")


class SavedFileError(ValueError):
    """A saved file that cannot be used, in one line: the file, the field and why."""


# -- what a field may hold ---------------------------------------------------------------------------------------------
Finite = Annotated[float, Field(allow_inf_nan=False)]
Integer = Annotated[int, Field(ge=-SAFE_INT, le=SAFE_INT)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
Word = Annotated[str, Field(max_length=MAX_WORD)]
Cutoff = Annotated[str, Field(pattern=r"^[0-9]{1,6}$")]  # a recall cut-off as a key: "5", "10"

#: any JSON value, bounded: settings, a report's free-form parts
JSON = TypeAliasType(  # type: ignore[misc]
    "JSON", Union[StrictBool, Integer, Finite, Text,  # noqa: UP007 - a recursive alias needs the Union form
                  Annotated[list["JSON"], Field(max_length=MAX_ITEMS)],  # type: ignore[misc]
                  Annotated[dict[Word, "JSON"], Field(max_length=MAX_ITEMS)], None])  # type: ignore[misc]


def count(most: int) -> Any:
    """An integer from 0 to `most`."""
    return Field(ge=0, le=most)


# -- reading -----------------------------------------------------------------------------------------------------------
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def too_deep(text: str, most: int = MAX_DEPTH) -> bool:
    """Whether JSON text nests arrays and objects deeper than `most`, found without parsing it: the strings are set
    aside (escaped backslashes and quotes first, then every other run between quotes), only the brackets kept, and
    the innermost pairs taken away one level a pass; `most` + 1 openers in a row end it at once. A 50,000-deep file
    costs a few passes of a regular expression, never a stack."""
    outside = "".join(text.replace("\\\\", "").replace('\\"', "").split('"')[0::2])
    rest = _NOT_BRACKET.sub("", outside)
    run = re.compile(rf"[\[{{]{{{most + 1}}}")
    for _ in range(most):
        if run.search(rest):
            return True
        rest, n = _PAIR.subn("", rest)
        if n == 0:
            return False  # nothing left to take away: flat enough (or brackets that do not match: the parser says so)
    return bool(rest)


def parse(text: str, source: str, *, max_bytes: int, error: type[SavedFileError] = SavedFileError) -> Any:
    """JSON text into data, refused in one line (`error`) when it is too large, nests too deep, or is no JSON."""
    if len(text) > max_bytes:
        raise error(f"{source}: {len(text) / 1e6:.1f} MB, more than the {max_bytes / 1e6:.0f} MB a saved file may "
                    "have")
    if too_deep(text):
        raise error(f"{source}: nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)  # NaN and Infinity parse, and every schema refuses them, naming the field
    except json.JSONDecodeError as exc:
        raise error(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits
        raise error(f"{source}: invalid JSON: {' '.join(str(exc).split())[:200]}") from None


def read(path: Path, *, max_bytes: int, error: type[SavedFileError] = SavedFileError) -> Any:
    """A saved file's data: a regular file no larger than `max_bytes` (checked before it is read), UTF-8 JSON;
    `error` (a SavedFileError) in one line when it is not."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: file not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: not a file")
    if info.st_size > max_bytes:
        raise error(f"{path}: {info.st_size / 1e6:.1f} MB, more than the {max_bytes / 1e6:.0f} MB a saved file may "
                    "have")
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc})") from None
    return parse(text, str(path), max_bytes=max_bytes, error=error)


# -- checking ----------------------------------------------------------------------------------------------------------
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,60}$")


def where(loc: Iterable[int | str]) -> str:
    """A field's place as a person writes it: ("events", 12, "k") → events[12].k; a key that is no name is quoted
    and cut short (it is the file's text: `recall['<img…']`), pydantic's "[key]" marks the key itself."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            out += " (its key)"
        elif _FIELD.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part[:24] + '…' if len(part) > 24 else part!r}]"
    return out


_KINDS = {str: "a string", bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "an object",
          type(None): "null"}


def kind_of(value: Any) -> str:
    """What a JSON value is, in words ("a string", "a list"): said of a field that holds the wrong kind."""
    return _KINDS.get(type(value), type(value).__name__)


def why(error: Mapping[str, Any]) -> str:
    """A validation error in words: pydantic's message, and what the file held instead (its kind, never the value)."""
    message = str(error.get("msg", "is wrong")).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    if error.get("type") in ("missing", "union_tag_not_found"):
        return "is missing"
    return f"{message}, not {kind_of(error.get('input'))}" if str(error.get("type")).endswith("_type") else message


def fail(source: str, exc: ValidationError, prefix: Sequence[int | str] = ()) -> SavedFileError:
    """A SavedFileError naming the first field pydantic refused."""
    first = exc.errors(include_url=False)[0]
    field = where([*prefix, *first["loc"]]) or "the file"
    return SavedFileError(f"{source}: {field}: {why(first)}")


def check(adapter: TypeAdapter[T], data: Any, source: str, prefix: Sequence[int | str] = (),
          error: type[SavedFileError] = SavedFileError) -> T:
    """`data` through a schema (strict: a number is a number), or `error` naming the field."""
    try:
        return adapter.validate_python(data, strict=True)
    except ValidationError as exc:
        raise error(str(fail(source, exc, prefix))) from None


# -- schemas mirrored from dataclasses ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Rules:
    """Bounds by a field's name, wherever the field sits in a class: the pydantic Field its integers, floats or
    strings obey (for a list of them, each item), and what its keys are when it is a dict."""

    ints: Mapping[str, Any]
    floats: Mapping[str, Any]
    texts: Mapping[str, Any]
    keys: Mapping[str, Any]
    shapes: Mapping[str, Any]  # a field's whole schema, by its name (a dict whose entries have rules of their own)


def typed(cls: type[T], *, ints: Mapping[str, Any] | None = None, floats: Mapping[str, Any] | None = None,
          texts: Mapping[str, Any] | None = None, keys: Mapping[str, Any] | None = None,
          shapes: Mapping[str, Any] | None = None, objects: bool = True) -> TypeAdapter[Any]:
    """A strict schema for a dataclass as a saved file holds it: every field's type from the class (nested dataclasses,
    lists, dicts, optionals), numbers finite, integers within ±2^53, strings and lists bounded; `ints`, `floats`,
    `texts` and `keys` bound fields by name (a field "k" anywhere in the class obeys ints["k"]); `shapes` give a field
    its whole schema by name. Fields the class does not know are ignored, so a file from a newer version still
    opens. `objects`: the result is the dataclass (else the same fields as plain dicts)."""
    rules = Rules(ints or {}, floats or {}, texts or {}, keys or {}, shapes or {})
    return TypeAdapter(_record(cls, rules, objects, {}))


def _record(cls: type, rules: Rules, objects: bool, made: dict[type, Any]) -> Any:
    if cls in made:
        return made[cls]
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        shape = rules.shapes[f.name] if f.name in rules.shapes else _shape(hints[f.name], f.name, rules, objects, made)
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields[f.name] = shape if required else NotRequired[shape]
    record = TypedDict(f"{cls.__name__}Fields", fields)  # type: ignore[misc]
    shape = Annotated[record, AfterValidator(partial(_build, cls))] if objects else record
    made[cls] = shape
    return shape


def _build(cls: Callable[..., T], fields: dict[str, Any]) -> T:
    return cls(**fields)


def _shape(tp: Any, name: str, rules: Rules, objects: bool, made: dict[type, Any]) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return JSON
    if tp is type(None):
        return None
    if origin in (Union, types.UnionType):
        return Union[tuple(_shape(a, name, rules, objects, made) for a in args)]  # noqa: UP007 - built at run time
    if origin is list:
        return Annotated[list[_shape(args[0], name, rules, objects, made)], Field(max_length=MAX_ITEMS)]  # type: ignore[misc]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return Annotated[tuple[_shape(args[0], name, rules, objects, made), ...],  # type: ignore[misc]
                         Field(max_length=MAX_ITEMS)]
    if origin is dict:
        key = rules.keys.get(name, Word)
        return Annotated[dict[key, _shape(args[1], name, rules, objects, made)],  # type: ignore[misc,valid-type]
                         Field(max_length=MAX_ITEMS)]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp, rules, objects, made)
    if tp is bool:
        return StrictBool
    if tp is int:
        return Annotated[int, rules.ints[name]] if name in rules.ints else Integer
    if tp is float:
        return Annotated[float, Field(allow_inf_nan=False), rules.floats[name]] if name in rules.floats else Finite
    if tp is str:
        return Annotated[str, rules.texts[name]] if name in rules.texts else Text
    raise TypeError(f"no saved-file schema for {tp!r} (field {name})")


# -- where a saved file may be opened ----------------------------------------------------------------------------------
def inside(path: Path, roots: Iterable[Path], what: str, error: type[SavedFileError] = SavedFileError) -> Path:
    """`path` when it lies inside one of `roots` once every link is resolved; else `error` (`what` names the folders
    allowed: "the data folder"). A path that leads out — by a link, by "..", or absolute — is refused before anything
    is read."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise error(f"{path}: cannot follow it ({exc})") from None
    for root in roots:
        try:
            if real.is_relative_to(root.resolve()):
                return path
        except OSError:
            continue
    lead = "a link to a file" if path.is_symlink() else "a file"
    raise error(f"{path}: {lead} outside {what}: not opened")

