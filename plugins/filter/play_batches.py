# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters that check a play's batch size and failure threshold (gpuops_serial, gpuops_max_fail_percentage).

The host plays set their serial and max_fail_percentage through these filters. Play keywords are templated in the
controller's main process when the play starts, before any host is contacted: a bad value stops the run there with
what would be valid. That first use of a filter of the collection in the main process also has a cost benefit:
ansible-core 2.19 imports every filter file of a collection to find one of its filters
(lib/ansible/plugins/loader.py, Jinja2Loader.get_with_context), and a task's worker process, forked from the main
process, then finds them imported instead of importing them again.
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError

# ansible-core 2.19 lib/ansible/utils/helpers.py pct_to_int: a percentage is the digits before "%".
_PERCENTAGE = re.compile(r"^([0-9]+)%$")
_WHOLE = re.compile(r"^[0-9]+$")


def _batch_problem(value):
    # Why VALUE is not one batch size of a play's serial; None when it is.
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return None if value >= 1 else "below 1"
    if isinstance(value, str):
        text = value.strip()
        if _WHOLE.match(text):
            return None if int(text) >= 1 else "below 1"
        percentage = _PERCENTAGE.match(text)
        if percentage:
            return None if 1 <= int(percentage.group(1)) <= 100 else "a percentage outside 1% to 100%"
    return "neither a whole number nor a percentage"


def play_serial(value, variable="gpuops_serial"):
    """VALUE unchanged when it is a valid serial: a batch size (hosts, or a percentage) or a list of them."""
    sizes = value if isinstance(value, list) else [value]
    problems = [f"{size!r} is {problem}" for size in sizes if (problem := _batch_problem(size)) is not None]
    if not sizes:
        problems = ["the list is empty"]
    if problems:
        raise AnsibleFilterError(
            f"{variable}={value!r} is invalid: {'; '.join(problems)}. Expected the number of hosts per batch (1 or "
            f"more), a percentage of the play's hosts from 1% to 100% ('20%'), or a list of them for growing "
            f"batches ([1, '25%', '100%']). Set it as an extra variable (-e): a play's batch size is read before "
            f"any host's variables."
        )
    return value


def play_max_fail_percentage(value, variable="gpuops_max_fail_percentage"):
    """VALUE unchanged when it is a valid max_fail_percentage: a number from 0 to 100, with or without '%'."""
    text = str(value).strip().removesuffix("%") if not isinstance(value, bool) else ""
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is None or not 0 <= number <= 100:
        raise AnsibleFilterError(
            f"{variable}={value!r} is invalid: expected the percentage of a batch's hosts that may fail before the "
            f"run stops, a number from 0 to 100 (0: the first failed host stops the batches that follow). Set it as "
            f"an extra variable (-e)."
        )
    return value


class FilterModule:
    """Checks of the play keywords the host stages take from extra variables."""

    def filters(self):
        return {
            "play_serial": play_serial,
            "play_max_fail_percentage": play_max_fail_percentage,
        }
