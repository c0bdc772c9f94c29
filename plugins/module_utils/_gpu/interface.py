# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A base for the collection's interfaces whose implementations describe themselves in class attributes.

Here, in the package every other may import, so that the memory-sharing backends (module_utils/_sharing) and the
device plugin's ways of sharing (plugin_utils/_plan) check their implementations the same way.
"""

from __future__ import annotations


class RequiredAttributes:
    """An interface that derives from this one directly annotates the attributes each implementation must set;
    creating an implementation that leaves one unset raises TypeError, naming them, as an abstract method would."""

    def __init__(self):
        interface = next(klass for klass in type(self).__mro__ if RequiredAttributes in klass.__bases__)
        # The interface's own annotations (inspect.get_annotations needs Python 3.10; modules run on 3.9).
        required = vars(interface).get("__annotations__", {})
        missing = [attribute for attribute in required if not hasattr(self, attribute)]
        if missing:
            raise TypeError(f"{type(self).__name__} does not set {', '.join(missing)}")
