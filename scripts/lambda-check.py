#!/usr/bin/env python3
"""Checks the Lambda zip scripts/lambda-package.sh wrote, as Lambda would run it.

  scripts/lambda-check.py ZIP

1. glibc: the `bootstrap` needs no glibc symbol version newer than Amazon Linux 2023's (2.34),
   read from the ELF's version-needs table. The same check with a ceiling below the newest
   version the binary does need must fail, so the check is seen to bite.
2. runtime API: `bootstrap` started against a local Lambda runtime API (this script serves
   one on 127.0.0.1) takes an invocation and answers it: the relay handler, one SQS message
   it cannot relay (malformed), a response with no batch item failures.

Standard library only; reaches nothing but loopback.
"""
import http.server
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import zipfile

CEILING = (2, 34)
SHT_GNU_VERNEED = 0x6FFFFFFE


def glibc_versions(data):
    """Versions (as tuples) the ELF needs from libc.so.6, from .gnu.version_r."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("bootstrap is not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    found = set()
    for sec in sections:
        if sec[1] != SHT_GNU_VERNEED:
            continue
        strtab = sections[sec[6]]
        def string(off):
            start = strtab[4] + off
            return data[start:data.index(b"\0", start)].decode()
        offset, count = sec[4], sec[7]
        for _ in range(count):
            _, cnt, file_off, aux, nxt = struct.unpack_from("<HHIII", data, offset)
            a = offset + aux
            for _ in range(cnt):
                _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
                version = string(name)
                if string(file_off).startswith("libc.so") and version.startswith("GLIBC_"):
                    found.add(tuple(int(p) for p in version[6:].split(".")))
                a += anext
            if nxt == 0:
                break
            offset += nxt
    return found


def too_new(versions, ceiling):
    return sorted(v for v in versions if v > ceiling)


def show(v):
    return "GLIBC_" + ".".join(map(str, v))


class RuntimeApi(http.server.BaseHTTPRequestHandler):
    event = None
    answer = None
    served = False

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path != "/2018-06-01/runtime/invocation/next" or RuntimeApi.served:
            # A second poll after the answer: hold it until the process is stopped.
            threading.Event().wait(30)
            return
        RuntimeApi.served = True
        body = json.dumps(RuntimeApi.event).encode()
        self.send_response(200)
        self.send_header("Lambda-Runtime-Aws-Request-Id", "req-1")
        self.send_header("Lambda-Runtime-Deadline-Ms", "4102444800000")
        self.send_header("Lambda-Runtime-Invoked-Function-Arn",
                         "arn:aws:lambda:us-east-1:123456789012:function:tpf-relay")
        self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        payload = self.rfile.read(length).decode()
        RuntimeApi.answer = (self.path, payload)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()


def smoke(bootstrap):
    RuntimeApi.event = {"Records": [{
        "messageId": "m-1", "receiptHandle": "r-1", "body": "not an action message",
        "attributes": {}, "messageAttributes": {}, "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:tpf-actions",
        "awsRegion": "us-east-1",
    }]}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RuntimeApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{server.server_address[1]}",
        "_HANDLER": "relay",
        # The relay carries the gateway binding's queue transport: the gateway's numbered
        # version (never invoked here: the one message is malformed).
        "TPF_SFN_GATEWAY_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:1",
        "AWS_LAMBDA_FUNCTION_NAME": "tpf-relay",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/tpf-relay",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
    }
    proc = subprocess.Popen([bootstrap], env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if RuntimeApi.answer or proc.poll() is not None:
                break
            threading.Event().wait(0.1)
    finally:
        proc.kill()
        _, err = proc.communicate()
        server.shutdown()
    if not RuntimeApi.answer:
        raise SystemExit(f"bootstrap answered no invocation; its stderr:\n{err}")
    path, payload = RuntimeApi.answer
    if path != "/2018-06-01/runtime/invocation/req-1/response":
        raise SystemExit(f"bootstrap reported {path}: {payload}\n{err}")
    if json.loads(payload) != {"batchItemFailures": []}:
        raise SystemExit(f"unexpected response {payload}\n{err}")
    return err.strip()


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    with zipfile.ZipFile(sys.argv[1]) as z:
        info = z.getinfo("bootstrap")
        if not (info.external_attr >> 16) & 0o100:
            raise SystemExit("bootstrap is not executable in the zip")
        data = z.read(info)
    versions = glibc_versions(data)
    if not versions:
        raise SystemExit("no glibc symbol versions found: not a dynamically linked glibc binary?")
    newest = max(versions)
    bad = too_new(versions, CEILING)
    if bad:
        raise SystemExit(f"bootstrap needs {', '.join(map(show, bad))}, newer than "
                         f"{show(CEILING)} (provided.al2023)")
    below = (newest[0], newest[1] - 1) if newest[1] > 0 else (newest[0] - 1, 99)
    if not too_new(versions, below):
        raise SystemExit("the glibc check cannot fail: it passed below the newest version needed")
    print(f"glibc: bootstrap needs at most {show(newest)} (ceiling {show(CEILING)}); "
          f"a ceiling of {show(below)} is refused")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bootstrap")
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
        log = smoke(path)
    print(f"runtime API: bootstrap answered an invocation ({log.splitlines()[-1] if log else 'no log'})")


if __name__ == "__main__":
    main()
