#!/usr/bin/env python3
"""Generate a consumption log for bench/consumption.sh.

Usage: gen_consumption.py OUT LINES CONSUMERS ROADS_SHARE [SEED] [SHAPE]

Each line is one read. A ROADS_SHARE fraction of the lines read the dataset `roads` (versions
1.0.0, 1.1.0, 2.0.0); the others read one of nine other datasets. Dates fall in November 2026,
so a scan on 2026-11-29 with a 30-day lookback keeps most of them and ignores those after the
29th. The same SEED gives the same reads in every SHAPE, written the way exporters write them:

  d  (default) the project's own layout, about 95 bytes a line:
     {"at":"2026-11-28T03:00:00Z","consumer":"...","dataset":"...","contract":"..."}
  a  Python's json.dumps defaults (", " and ": "), keys consumer/dataset/at/contract,
     `at` in epoch milliseconds, and two extra fields (a string and a number)
  b  keys in another order, the consumer in a nested object, RFC 3339 with milliseconds and
     a +02:00 or -05:00 offset
  c  CSV of 7 columns in another order, `at` in epoch milliseconds
"""
import json
import random
import sys
from datetime import datetime, timedelta, timezone


def main():
    out, lines, consumers, share = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    rnd = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 42)
    shape = sys.argv[6] if len(sys.argv) > 6 else "d"
    others = ["rivers", "buildings", "railways", "parcels", "landuse", "addresses", "bridges",
              "coastline", "boundaries"]
    roads_versions = ["1.0.0", "1.1.0", "1.1.0", "2.0.0"]
    names = ["consumer-%05d" % i for i in range(consumers)]
    agents = ["GDAL/3.8.4", "duckdb/v1.4.4", "python-requests/2.32", "QGIS/3.34"]
    # Precomputed instants: formatting a date per line would dominate the generator.
    base = [datetime(2026, 11, d, h, m, tzinfo=timezone.utc)
            for d in range(1, 31) for h in range(0, 24, 3) for m in (0, 17, 41)]
    stamps = []
    for i, t in enumerate(base):
        ms = (i * 37) % 1000
        t = t + timedelta(milliseconds=ms)
        epoch_ms = int(t.timestamp() * 1000)
        if shape == "d":
            # The project's own layout keeps whole seconds, as before the shapes were added.
            stamps.append(base[i].strftime("%Y-%m-%dT%H:%M:%SZ"))
        elif shape == "b":
            tz = timezone(timedelta(hours=2)) if i % 2 else timezone(timedelta(hours=-5))
            stamps.append(t.astimezone(tz).isoformat(timespec="milliseconds"))
        else:
            stamps.append(epoch_ms)
    batch = []
    with open(out, "w", buffering=1 << 22) as f:
        if shape == "c":
            f.write("status,bytes,contract,agent,ts_ms,dataset,client_id\n")
        for i in range(lines):
            if rnd.random() < share:
                ds, v = "roads", roads_versions[rnd.randrange(4)]
            else:
                ds, v = others[rnd.randrange(9)], "1.0.0"
            at = stamps[rnd.randrange(len(stamps))]
            who = names[rnd.randrange(consumers)]
            if shape == "d":
                batch.append('{"at":"%s","consumer":"%s","dataset":"%s","contract":"%s"}\n'
                             % (at, who, ds, v))
            elif shape == "a":
                batch.append(json.dumps({"consumer": who, "dataset": ds, "at": at, "contract": v,
                                         "agent": agents[i % 4], "bytes": 1000 + i % 50000}) + "\n")
            elif shape == "b":
                batch.append(json.dumps({"contract": v, "client": {"id": who, "ip": "10.0.%d.%d" % (i % 256, i % 199)},
                                         "at": at, "status": 200, "dataset": ds}) + "\n")
            else:
                batch.append("200,%d,%s,%s,%d,%s,%s\n" % (1000 + i % 50000, v, agents[i % 4], at, ds, who))
            if len(batch) == 100000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))


if __name__ == "__main__":
    main()
