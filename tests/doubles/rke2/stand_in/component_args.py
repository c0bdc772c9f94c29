# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A component's command line as RKE2 builds it: its defaults, then `<component>-arg` of the config.

Ported from k3s pkg/util/args.go, GetArgs: an extra `name=value` replaces the default of that name
(a repeated name keeps every value), `name+=value` appends to the default, `name-=value` prepends;
a bare `name` means `name=true`; flags come out sorted by name, repeated ones in their order.
"""


def get_args(defaults: dict, extra: list[str]) -> list[str]:
    initial = {name: str(value) for name, value in defaults.items()}
    multi: dict[str, list[str]] = {}
    for unsplit in extra:
        # A bare name means name=true.
        name, value = (*unsplit.removeprefix("--").split("=", 1), "true")[:2]
        cleaned = name.rstrip("-+")
        earlier = [initial[cleaned]] if cleaned in initial else []
        existing = multi.get(cleaned, [])
        if name.endswith("+"):
            values = [*earlier, *existing, value]
        elif name.endswith("-"):
            values = [value, *earlier, *existing]
        else:
            values = [*existing, value]
        initial.pop(cleaned, None)
        multi[cleaned] = values
    for name, value in initial.items():
        multi[name] = [value]
    return [f"--{name.removeprefix('--')}={value}" for name in sorted(multi) for value in multi[name]]
