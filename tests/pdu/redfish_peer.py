#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Redfish peer for tests/pdu/redfish_tls.sh: serves a recording
(DIR/redfish/v1/.../index.json) over HTTPS (CERT KEY given) or HTTP, and
misbehaves on /redfish/v1/Chassis/ as QUIRK says (/redfish/v1/Chassis
itself redirects there, as some BMCs do): ok (as recorded), redirect (302
to another host), huge (a 5 MiB body), garbage (not JSON).
usage: redfish_peer.py DIR PORT QUIRK [CERT KEY]"""
import http.server, os, ssl, sys
root, port, quirk = sys.argv[1], int(sys.argv[2]), sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def _send(self, code, body, extra=()):
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        for k, v in extra: self.send_header(k, v)
        self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        p = self.path.split('?')[0].split('#')[0].rstrip('/')
        if p == '/redfish/v1/Chassis' and self.path.endswith('Chassis'):
            # this BMC redirects to the trailing-slash form: followed
            return self._send(301, b'{}', [('Location', '/redfish/v1/Chassis/')])
        if p == '/redfish/v1/Chassis' and quirk == 'redirect':
            return self._send(302, b'{}', [('Location', 'http://other.example/redfish/v1/Chassis')])
        if p == '/redfish/v1/Chassis' and quirk == 'huge':
            return self._send(200, b'{"Members":[' + b' ' * (5 << 20) + b']}')
        if p == '/redfish/v1/Chassis' and quirk == 'garbage':
            return self._send(200, b'{"Members": [ {"@odata.id": ')
        f = os.path.normpath(os.path.join(root, p.lstrip('/'), 'index.json'))
        if not f.startswith(os.path.abspath(root)) or not os.path.isfile(f):
            return self._send(404, b'{"error":{"code":"Base.1.0.ResourceMissingAtURI"}}')
        self._send(200, open(f, 'rb').read())
s = http.server.ThreadingHTTPServer(('127.0.0.1', port), H)
if len(sys.argv) > 5:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    s.socket = ctx.wrap_socket(s.socket, server_side=True)
print('ready', flush=True)
s.serve_forever()
