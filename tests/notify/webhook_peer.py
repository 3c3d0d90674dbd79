#!/usr/bin/python3
"""A loopback HTTP peer for the notifier's tests: receives webhooks and SMS-gateway requests,
checks each payload's shape for the channel named by the first path segment (/generic, /slack,
/wecom, /dingtalk, /feishu, /sms) and DingTalk's/Feishu's HMAC-SHA256 signatures, answers as
the real service does (errcode/code 0, or an error), and appends one JSON line per request to
--log: {"kind", "ok", "error", "body", "t"}.

Usage: webhook_peer.py --port-file F --log L [--port N] [--dingtalk-secret S] [--feishu-secret S]
                       [--delay-ms N] [--fail-status N]
"""
import argparse, base64, hashlib, hmac, json, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
lock = threading.Lock()


def sign(key, msg):
    return base64.b64encode(hmac.new(key.encode(), msg.encode(), hashlib.sha256).digest()).decode()


def check(kind, query, body):
    """Returns an error string, or '' when the request is what the real service expects."""
    if not isinstance(body, dict):
        return "body is not a JSON object"
    if kind == "generic":
        for k in ("version", "receiver", "status", "groupKey", "groupLabels", "commonLabels", "alerts"):
            if k not in body:
                return "generic: missing " + k
        if body["status"] not in ("firing", "resolved") or not body["alerts"]:
            return "generic: bad status or no alerts"
        for a in body["alerts"]:
            if not {"status", "labels", "annotations", "fingerprint"} <= a.keys() or "summary" not in a["annotations"]:
                return "generic: alert without status/labels/annotations.summary"
            if not {"symbol", "type", "severity", "market", "source"} <= a["labels"].keys():
                return "generic: alert labels incomplete"
    elif kind == "slack":
        if not isinstance(body.get("text"), str) or not body["text"]:
            return "slack: text missing"
    elif kind == "wecom":
        if body.get("msgtype") != "markdown" or not body.get("markdown", {}).get("content"):
            return "wecom: expected msgtype markdown with markdown.content"
        if len(body["markdown"]["content"].encode()) > 4096:
            return "wecom: content longer than 4096 bytes"
    elif kind == "dingtalk":
        md = body.get("markdown", {})
        if body.get("msgtype") != "markdown" or not md.get("title") or not md.get("text"):
            return "dingtalk: expected msgtype markdown with markdown.title and markdown.text"
        if args.dingtalk_secret:
            ts = query.get("timestamp", [""])[0]
            sig = query.get("sign", [""])[0]
            if not ts or not sig:
                return "dingtalk: unsigned URL"
            if abs(int(ts) - time.time() * 1000) > 3600 * 1000:
                return "dingtalk: timestamp more than an hour off"
            if sig != sign(args.dingtalk_secret, ts + "\n" + args.dingtalk_secret):
                return "dingtalk: sign not match"
    elif kind == "feishu":
        if body.get("msg_type") != "text" or not body.get("content", {}).get("text"):
            return "feishu: expected msg_type text with content.text"
        if args.feishu_secret:
            ts = body.get("timestamp", "")
            if not ts or body.get("sign") != sign(ts + "\n" + args.feishu_secret, ""):
                return "feishu: sign not match"
    elif kind == "sms":
        if not isinstance(body.get("to"), str) or not body["to"].startswith("+") or not body.get("text"):
            return "sms: expected to (+number) and text"
    else:
        return "unknown path"
    return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real services

    def log_message(self, *a):
        pass

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        kind = url.path.strip("/").split("/")[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if args.delay_ms:
            time.sleep(args.delay_ms / 1000)
        if args.fail_status:
            return self.reply(args.fail_status, {"error": "failing on purpose"})
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        err = check(kind, urllib.parse.parse_qs(url.query), body) if body is not None else "body is not JSON"
        with lock, open(args.log, "a") as f:
            f.write(json.dumps({"kind": kind, "ok": not err, "error": err, "body": body, "t": time.time()}) + "\n")
        if kind in ("wecom", "dingtalk"):
            return self.reply(200, {"errcode": 310000 if err else 0, "errmsg": err or "ok"})
        if kind == "feishu":
            return self.reply(200, {"code": 19021 if err else 0, "msg": err or "success"})
        self.reply(400 if err else 200, {"error": err} if err else {"ok": True})

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--dingtalk-secret", default="")
    p.add_argument("--feishu-secret", default="")
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--fail-status", type=int, default=0)
    args = p.parse_args()
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
