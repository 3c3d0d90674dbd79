#!/usr/bin/python3
"""A loopback SMTP peer for the notifier's tests (Debian's python3-aiosmtpd): accepts mail,
optionally requiring AUTH (--user/--password) and STARTTLS (--tls-cert/--tls-key), and appends
one JSON line per message to --log: {"from", "to", "subject", "body", "authenticated", "tls"}.
Writes its port to --port-file once listening."""
import argparse, socket, email, email.header, email.policy, json, os, ssl, time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--user", default="")
    p.add_argument("--password", default="")
    p.add_argument("--tls-cert", default="")
    p.add_argument("--tls-key", default="")
    a = p.parse_args()

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
            rec = {"from": envelope.mail_from, "to": envelope.rcpt_tos, "subject": str(msg["subject"]),
                   "body": msg.get_content(), "authenticated": bool(getattr(session, "authenticated", False)),
                   "tls": session.ssl is not None, "t": time.time()}
            with open(a.log, "a") as f:
                f.write(json.dumps(rec) + "\n")
            return "250 OK"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == a.user and \
            auth_data.password.decode() == a.password
        return AuthResult(success=ok)

    kw = {}
    if a.user:
        kw.update(authenticator=authenticator, auth_required=True, auth_require_tls=bool(a.tls_cert))
    if a.tls_cert:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        kw.update(tls_context=ctx, require_starttls=True)
    # aiosmtpd's Controller cannot listen on port 0 (it connects to itself to check): take a free one.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctl = Controller(Handler(), hostname="127.0.0.1", port=port, **kw)
    ctl.start()
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(a.port_file + ".tmp", a.port_file)
    try:
        while True:
            time.sleep(3600)
    finally:
        ctl.stop()


if __name__ == "__main__":
    main()
