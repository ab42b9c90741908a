"""The checker's HTTP client of the public API: one keep-alive connection, and the distinction
a Jepsen-style record needs between a request never sent and one whose fate is unknown.
An https:// base trusts the CA file in $RINGKV_CA_FILE; $RINGKV_TOKEN, when set, is sent as a
Bearer token (the chart's defaults: TLS and tokens on)."""

import http.client
import os
import ssl
import urllib.parse

class NotSent(Exception):
    """The connection could not be opened: the request was not sent."""


class InDoubt(Exception):
    """The request may have been sent, but no HTTP answer came (a timeout, a broken connection)."""


class HttpClient:
    """One keep-alive connection to a base URL; reopened after a failure."""

    def __init__(self, base, timeout):
        url = urllib.parse.urlsplit(base)
        self.host, self.port, self.timeout = url.hostname, url.port or 80, timeout
        self.tls = ssl.create_default_context(cafile=os.environ.get("RINGKV_CA_FILE")) if url.scheme == "https" else None
        token = os.environ.get("RINGKV_TOKEN", "")
        self.headers = {"Authorization": "Bearer " + token} if token else {}
        self.conn = None

    def request(self, method, path, body=None):
        if self.conn is None:
            conn = (http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.tls)
                    if self.tls else http.client.HTTPConnection(self.host, self.port, timeout=self.timeout))
            try:
                conn.connect()
            except OSError as e:
                raise NotSent(type(e).__name__) from e
            self.conn = conn
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            data = response.read()
            if response.will_close:
                self.close()
            return response.status, data
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise InDoubt("timeout" if isinstance(e, TimeoutError) else type(e).__name__) from e

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def entity_path(key, replicas):
    # quote, not urlencode: ringkv reads '+' as a plus, not as a form's space.
    return "/v0/entity?id=%s&replicas=%s" % (urllib.parse.quote(key, safe=""), urllib.parse.quote(replicas, safe="/"))
