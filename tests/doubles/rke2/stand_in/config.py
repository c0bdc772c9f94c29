# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RKE2's config.yaml and config.yaml.d/*.yaml, read without PyYAML (hosts need not have it).

RKE2's configuration is flat: each key is a flag name with a scalar or a list of scalars. This reads
that subset of YAML (block and flow lists, quoted and plain scalars, comments) and skips nested
mappings, which no RKE2 flag takes. As in RKE2, files of config.yaml.d are read in name order after
config.yaml, a later value replaces an earlier one, and a key ending in `+` appends to a list.
"""

import json
import re

from stand_in import paths

KEY_LINE = re.compile(r"^([A-Za-z0-9_.+-]+)\s*:(?:\s+(.*))?$")


def _strip_comment(text: str) -> str:
    quote = None
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1].isspace()):
            return text[:index].rstrip()
    return text.rstrip()


def scalar(text: str) -> str:
    text = text.strip()
    if text.startswith('"') and text.endswith('"') and len(text) > 1:
        return json.loads(text)
    if text.startswith("'") and text.endswith("'") and len(text) > 1:
        return text[1:-1].replace("''", "'")
    return text


def _flow_list(text: str) -> list[str]:
    inner = text.strip()[1:-1].strip()
    if not inner:
        return []
    return [scalar(item) for item in re.findall(r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,]+)""", inner)]


def parse(text: str) -> dict:
    """The flat YAML mapping of an RKE2 config file: {key: str | list[str]}."""
    result: dict = {}
    current_list = None
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") or stripped == "-":
            if current_list is not None:
                current_list.append(scalar(stripped[1:]))
            continue
        if raw[:1].isspace():
            continue  # a nested mapping: not an RKE2 flag
        match = KEY_LINE.match(line)
        if not match:
            raise ValueError(f"cannot read this line of the RKE2 configuration: {raw!r}")
        key, value = match.group(1), (match.group(2) or "").strip()
        current_list = None
        if not value:
            current_list = result[key] = []
        elif value.startswith("["):
            result[key] = _flow_list(value)
        elif value.startswith("{"):
            continue
        else:
            result[key] = scalar(value)
    return result


def merge(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if key.endswith("+"):
            name = key[:-1]
            earlier = merged.get(name, [])
            merged[name] = (earlier if isinstance(earlier, list) else [earlier]) + (
                value if isinstance(value, list) else [value]
            )
        else:
            merged[key] = value
    return merged


def load() -> dict:
    settings: dict = {}
    files = [paths.CONFIG_FILE, *sorted((paths.CONFIG_DIR / "config.yaml.d").glob("*.yaml"))]
    for path in files:
        if path.is_file():
            settings = merge(settings, parse(path.read_text()))
    return settings


def as_list(settings: dict, key: str) -> list[str]:
    value = settings.get(key, [])
    return value if isinstance(value, list) else [value]
