#!/usr/bin/env python3
"""Generate a month of Amazon S3 server access logs, as S3 delivers them, for the bench.

Usage: gen_access_logs.py OUT_DIR [--requests N] [--month YYYY-MM] [--days D] [--prefix P]
                          [--consumers N] [--seed S] [--gzip] [--truth FILE]
                          [--consumers-toml FILE]

OUT_DIR/<prefix>YYYY-mm-DD-HH-MM-SS-<16 hex> objects, each a few minutes of requests to the
bucket `open-data`, named by their delivery time (minutes to hours after the requests, a few
records later still), with the lines in the field order of AWS's "Amazon S3 server access
log format". 10 M requests over 30 days (the default) make about 126,000 objects (4,200 a
day) and 5.9 GB, about 590 bytes a line (plain text, as S3 writes them; --gzip writes `.gz`
files instead, which S3 does not). One day of that rate (--requests 333333 --days 1) takes
about 30 s here, mostly creating files.

The requests are what remote readers of GeoParquet and FlatGeobuf files do: an open is a HEAD
then 1-10 ranged GETs (206) within seconds (GDAL /vsicurl/, a Parquet reader, DuckDB), some
files are opened again 8-30 minutes later (a second read), a few readers poll one object every
20-50 s for minutes (one long read), and a tenth of the requests are no reads at all (the
producer's PUTs, bucket listings, 403s and 404s, other keys). Principals are assumed-role
session ARNs (`arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`, a session per day), IAM users
and anonymous clients on IPv4 and IPv6. Keys are under datasets/<dataset>/v<version>/, some
with a space (URL-encoded in the log).

--truth FILE writes what a correct scan with `match = "/datasets/{dataset}/v{contract}/**"` and
`same_read_seconds = 60` must count, computed on the requests in time order: requests, counted
requests, reads per dataset and version, reads per consumer of `roads`.
--consumers-toml FILE writes a consumers.toml with each consumer's `identities`.
"""
import argparse
import bisect
import calendar
import gzip
import json
import os
import random
import sys
import time

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
OWNER = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
BUCKET = "open-data"
ACCOUNT_IDS = ["123456789012", "210987654321", "444455556666"]
DATASETS = {
    "roads": ["1.0.0", "1.1.0", "2.0.0"],
    "rivers": ["1.0.0"],
    "buildings": ["1.0.0", "2.0.0"],
    "parcels": ["3.1.0"],
}
USER_AGENTS = [
    "GDAL/3.8.4 (Linux x86_64)",
    "DuckDB/1.1.3 (linux_amd64) aws-sdk-cpp/1.11.201",
    "Boto3/1.34.69 md/Botocore#1.34.69 ua/2.0 os/linux#6.1.0 md/arch#x86_64 lang/python#3.11.8",
    "arrow-rs/53.0.0 object_store/0.11.1",
    "aws-sdk-java/2.25.11 Linux/5.10.213 OpenJDK_64-Bit_Server_VM/17.0.10+7-LTS",
    "QGIS/33403/Ubuntu 24.04 LTS",
]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
HOST_IDS = ["".join(r.choice(B64) for _ in range(76)) + "=" for r in map(random.Random, range(8))]
WINDOW = 60


class Object:
    """One file of a dataset version."""

    def __init__(self, dataset, version, name, size):
        self.dataset, self.version, self.size = dataset, version, size
        self.key = "datasets/%s/v%s/%s" % (dataset, version, name)
        self.encoded = self.key.replace(" ", "%20")


def objects(rnd):
    out = []
    for ds, versions in DATASETS.items():
        for v in versions:
            for p in range(8):
                out.append(Object(ds, v, "part-%05d.parquet" % p, rnd.randrange(20, 400) << 20))
            out.append(Object(ds, v, "%s east.fgb" % ds, rnd.randrange(5, 80) << 20))
    return out


class Consumer:
    def __init__(self, i, rnd):
        self.name = "consumer-%05d" % i
        account = ACCOUNT_IDS[i % len(ACCOUNT_IDS)]
        r = rnd.random()
        if r < 0.6:
            self.kind, self.role = "role", "%s-reader" % self.name
            self.identity = "arn:aws:sts::%s:assumed-role/%s/*" % (account, self.role)
            self.account = account
        elif r < 0.9:
            self.kind = "user"
            self.identity = "arn:aws:iam::%s:user/%s" % (account, self.name)
        else:
            self.kind, self.identity = "anonymous", None
        self.ip = ("2001:db8:%x::%x" % (i, rnd.randrange(1, 0xffff)) if rnd.random() < 0.3
                   else "198.51.%d.%d" % (i % 250, rnd.randrange(1, 255)))
        self.agent = USER_AGENTS[rnd.randrange(len(USER_AGENTS))]
        # The versions this consumer reads: most stay on one, some move.
        self.favourite = {ds: vs[rnd.randrange(len(vs))] for ds, vs in DATASETS.items()}

    def principal(self, day):
        if self.kind == "role":
            return "arn:aws:sts::%s:assumed-role/%s/session-%s-%02d" % (self.account, self.role, self.name, day)
        if self.kind == "user":
            return self.identity
        return "-"


class Writer:
    def __init__(self, out, prefix, rnd, gz):
        self.dir = os.path.join(out, os.path.dirname(prefix))
        self.base = os.path.basename(prefix)
        os.makedirs(self.dir, exist_ok=True)
        self.rnd, self.gz, self.objects, self.bytes = rnd, gz, 0, 0

    def write(self, delivered, lines):
        name = "%s%s-%016X" % (self.base, delivered, self.rnd.getrandbits(64))
        data = "".join(lines).encode()
        path = os.path.join(self.dir, name)
        if self.gz:
            with gzip.open(path + ".gz", "wb", compresslevel=6) as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        self.objects += 1
        self.bytes += len(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--month", default="2026-11")
    ap.add_argument("--days", type=int, help="only the first DAYS days of the month")
    ap.add_argument("--prefix", default="logs/access/")
    ap.add_argument("--consumers", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--truth")
    ap.add_argument("--consumers-toml")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    year, month = (int(x) for x in a.month.split("-"))
    days = calendar.monthrange(year, month)[1]
    if a.days:
        days = min(days, a.days)
    epoch0 = calendar.timegm((year, month, 1, 0, 0, 0))
    minutes = days * 24 * 60
    files = objects(rnd)
    by_version = {}
    for f in files:
        by_version.setdefault((f.dataset, f.version), []).append(f)
    consumers = [Consumer(i, rnd) for i in range(a.consumers)]
    # A few consumers do most of the reading, as on a real bucket.
    cumulative, total = [], 0.0
    for i in range(a.consumers):
        total += 1.0 / (i + 10)
        cumulative.append(total)
    writer = Writer(a.out, a.prefix, rnd, a.gzip)

    stamps = {}

    def stamp(t):
        s = stamps.get(t)
        if s is None:
            y, mo, d, h, mi, se = time.gmtime(t)[:6]
            s = "[%02d/%s/%04d:%02d:%02d:%02d +0000]" % (d, MONTHS[mo - 1], y, h, mi, se)
            if len(stamps) > 4096:
                stamps.clear()
            stamps[t] = s
        return s

    def line(t, principal, ip, op, key, uri, status, err, sent, size, agent):
        return ("%s %s %s %s %s %016X %s %s \"%s\" %d %s %s %s %d %d \"-\" \"%s\" - %s SigV4 "
                "ECDHE-RSA-AES128-GCM-SHA256 AuthHeader %s.s3.eu-west-1.amazonaws.com TLSv1.3 - -\n"
                % (OWNER, BUCKET, stamp(t), ip, principal, rnd.getrandbits(64), op, key, uri, status,
                   err, sent, size, rnd.randrange(5, 400), rnd.randrange(1, 60), agent,
                   HOST_IDS[t % len(HOST_IDS)], BUCKET))

    buckets = {}  # minute -> [(t, counted key or None, line)]
    made = [0]

    def add(t, counted, text):
        buckets.setdefault((t - epoch0) // 60, []).append((t, counted, text))
        made[0] += 1

    def open_file(t, c, obj, follow):
        """A HEAD and ranged GETs within seconds; maybe a second open later."""
        day = (t - epoch0) // 86400 + 1
        p = c.principal(day)
        key = (p if p != "-" else "a" + c.ip, obj.key)
        uri = "/%s?x-id=GetObject" % obj.encoded
        add(t, key, line(t, p, c.ip, "REST.HEAD.OBJECT", obj.encoded, "HEAD /%s HTTP/1.1" % obj.encoded,
                         200, "-", "-", obj.size, c.agent))
        for _ in range(rnd.randrange(1, 11)):
            t += rnd.randrange(0, 3)
            n = rnd.choice((16384, 65536, 1 << 20, 8 << 20))
            add(t, key, line(t, p, c.ip, "REST.GET.OBJECT", obj.encoded, "GET %s HTTP/1.1" % uri,
                             206, "-", n, obj.size, c.agent))
        if follow and rnd.random() < 0.15:
            later = t + rnd.randrange(8 * 60, 30 * 60)
            if later < epoch0 + minutes * 60:
                open_file(later, c, obj, False)

    def poll(t, c, obj):
        """One reader polling one object for minutes: one long read."""
        day = (t - epoch0) // 86400 + 1
        p = c.principal(day)
        key = (p if p != "-" else "a" + c.ip, obj.key)
        for _ in range(rnd.randrange(6, 30)):
            add(t, key, line(t, p, c.ip, "REST.GET.OBJECT", obj.encoded,
                             "GET /%s?x-id=GetObject HTTP/1.1" % obj.encoded, 206, "-", 65536,
                             obj.size, c.agent))
            t += rnd.randrange(20, 51)

    def noise(t):
        r = rnd.random()
        obj = files[rnd.randrange(len(files))]
        c = consumers[rnd.randrange(len(consumers))]
        p = c.principal((t - epoch0) // 86400 + 1)
        if r < 0.25:
            producer = "arn:aws:sts::%s:assumed-role/publisher/release" % ACCOUNT_IDS[0]
            add(t, None, line(t, producer, "10.0.0.5", "REST.PUT.OBJECT", obj.encoded,
                              "PUT /%s HTTP/1.1" % obj.encoded, 200, "-", "-", obj.size, USER_AGENTS[2]))
        elif r < 0.5:
            add(t, None, line(t, p, c.ip, "REST.GET.BUCKET", "-",
                              "GET /?list-type=2&prefix=datasets%%2F%s%%2F HTTP/1.1" % obj.dataset, 200,
                              "-", 2048, "-", c.agent))
        elif r < 0.7:
            add(t, None, line(t, p, c.ip, "REST.GET.OBJECT", obj.encoded,
                              "GET /%s HTTP/1.1" % obj.encoded, 403, "AccessDenied", 243, "-", c.agent))
        elif r < 0.85:
            add(t, None, line(t, p, c.ip, "REST.GET.OBJECT", obj.encoded + ".aux.xml",
                              "GET /%s.aux.xml HTTP/1.1" % obj.encoded, 404, "NoSuchKey", 312, "-", c.agent))
        else:
            add(t, None, line(t, p, c.ip, "REST.GET.OBJECT", "index.html",
                              "GET /index.html HTTP/1.1", 200, "-", 5120, 5120, c.agent))

    truth_last = {}
    truth = {"requests": 0, "counted": 0, "reads": 0, "by_version": {}, "roads_by_consumer": {}}
    owner_of = {}

    def flush(m):
        reqs = buckets.pop(m, [])
        if not reqs:
            return
        reqs.sort(key=lambda r: r[0])
        for t, counted, _ in reqs:
            truth["requests"] += 1
            if counted is None:
                continue
            truth["counted"] += 1
            last = truth_last.get(counted)
            truth_last[counted] = t
            if last is None or t - last > WINDOW:
                truth["reads"] += 1
                ds, v = counted[1].split("/")[1:3]
                k = "%s %s" % (ds, v[1:])
                truth["by_version"][k] = truth["by_version"].get(k, 0) + 1
                if ds == "roads":
                    who = owner_of.get(counted[0], "anonymous")
                    truth["roads_by_consumer"][who] = truth["roads_by_consumer"].get(who, 0) + 1
        lines = [r[2] for r in reqs]
        # Records within an object are roughly, not strictly, in time order.
        for _ in range(len(lines) // 20):
            i = rnd.randrange(len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        # Several log servers deliver the same minutes; a few records come hours late.
        late = []
        if len(lines) > 1:
            for i in sorted({rnd.randrange(len(lines)) for _ in range(len(lines) // 200)}, reverse=True):
                late.append(lines.pop(i))
        parts = rnd.randrange(1, 4)
        end = epoch0 + (m + 1) * 60
        for k in range(parts):
            chunk = lines[k::parts]
            if chunk:
                d = rnd.random()
                delay = (rnd.randrange(60, 900) if d < 0.7 else
                         rnd.randrange(900, 5400) if d < 0.95 else rnd.randrange(5400, 8 * 3600))
                writer.write(delivered(end + delay), chunk)
        if late:
            writer.write(delivered(end + rnd.randrange(2 * 3600, 5 * 3600)), late)

    def delivered(t):
        y, mo, d, h, mi, se = time.gmtime(t)[:6]
        return "%04d-%02d-%02d-%02d-%02d-%02d" % (y, mo, d, h, mi, se)

    for c in consumers:
        for day in range(1, days + 1):
            owner_of[c.principal(day) if c.kind != "anonymous" else "a" + c.ip] = (
                c.name if c.kind != "anonymous" else "anonymous")

    names = list(DATASETS)
    for m in range(minutes):
        start = epoch0 + m * 60
        # Requests spread evenly over the minutes; follow-ups land in later ones.
        while made[0] < a.requests * (m + 1) // minutes:
            t = start + rnd.randrange(60)
            r = rnd.random()
            # Noise is one request per event, an open about eight: 45 % of the events make
            # about a tenth of the requests.
            if r < 0.45:
                noise(t)
                continue
            c = consumers[bisect.bisect_left(cumulative, rnd.random() * total)]
            ds = names[rnd.randrange(len(names))]
            v = c.favourite[ds] if rnd.random() < 0.9 else rnd.choice(DATASETS[ds])
            candidates = by_version[(ds, v)]
            obj = candidates[rnd.randrange(len(candidates))]
            if r < 0.46:
                poll(t, c, obj)
            else:
                open_file(t, c, obj, True)
        # Nothing starts more than 30 minutes (a second open) plus a poll before a minute.
        if m >= 60:
            flush(m - 60)
    for m in sorted(buckets):
        flush(m)

    print("%d objects, %d requests, %.1f MB, %d reads" % (
        writer.objects, truth["requests"], writer.bytes / 1e6, truth["reads"]), file=sys.stderr)
    if a.truth:
        truth["objects"] = writer.objects
        truth["bytes"] = writer.bytes
        truth["window"] = WINDOW
        with open(a.truth, "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True)
    if a.consumers_toml:
        with open(a.consumers_toml, "w") as f:
            for c in consumers:
                if c.identity:
                    f.write('[consumers.%s]\nteam = "Team %s"\ncontacts = ["%s@example.org"]\n'
                            'identities = ["%s"]\n\n' % (c.name, c.name, c.name, c.identity))


if __name__ == "__main__":
    main()
