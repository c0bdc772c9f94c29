# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Just enough of a Kubernetes API client: GET, POST and merge-PATCH with client certificates."""

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path


class Client:
    def __init__(self, server: str, ca: Path, crt: Path, key: Path) -> None:
        self.server = server.rstrip("/")
        self.context = ssl.create_default_context(cafile=str(ca))
        self.context.load_cert_chain(str(crt), str(key))

    def request(self, method: str, path: str, body=None, content_type="application/json"):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, context=self.context, timeout=10) as response:
            text = response.read().decode()
        return json.loads(text) if text.startswith("{") else text

    def get(self, path: str):
        return self.request("GET", path)

    def exists(self, path: str) -> bool:
        try:
            self.get(path)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return False
            raise
        return True

    def create(self, path: str, body: dict):
        return self.request("POST", path, body)

    def merge_patch(self, path: str, body: dict):
        return self.request("PATCH", path, body, "application/merge-patch+json")
