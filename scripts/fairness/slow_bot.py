"""A slow HTTP bot for watching a ladder table from outside: it answers its first legal
move after 0.3 s (so that a table lasts seconds, not milliseconds) and pongs pings.

    python3 scripts/fairness/slow_bot.py PORT
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "legal_moves" in body:
            time.sleep(0.3)
            answer = {"move": body["legal_moves"][0]}
        else:
            answer = {"pong": True}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
