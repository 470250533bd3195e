#!/usr/bin/env python3
"""Generate a consumption log (JSON Lines) for bench/consumption.sh.

Usage: gen_consumption.py OUT LINES CONSUMERS ROADS_SHARE [SEED]

Each line is one read: {"at": ..., "consumer": ..., "dataset": ..., "contract": ...}, about
95 bytes, so 10 million lines make about 1 GB. A ROADS_SHARE fraction of the lines read the
dataset `roads` (versions 1.0.0, 1.1.0, 2.0.0); the others read one of nine other datasets.
Dates fall in November 2026, so a scan on 2026-11-29 with a 30-day lookback keeps most of them
and ignores those after the 29th.
"""
import random
import sys


def main():
    out, lines, consumers, share = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    rnd = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 42)
    others = ["rivers", "buildings", "railways", "parcels", "landuse", "addresses", "bridges",
              "coastline", "boundaries"]
    roads_versions = ["1.0.0", "1.1.0", "1.1.0", "2.0.0"]
    names = ["consumer-%05d" % i for i in range(consumers)]
    # Precomputed timestamps: formatting a date per line would dominate the generator.
    stamps = ["2026-11-%02dT%02d:%02d:00Z" % (d, h, m)
              for d in range(1, 31) for h in range(0, 24, 3) for m in (0, 17, 41)]
    batch = []
    with open(out, "w", buffering=1 << 22) as f:
        for i in range(lines):
            if rnd.random() < share:
                ds, v = "roads", roads_versions[rnd.randrange(4)]
            else:
                ds, v = others[rnd.randrange(9)], "1.0.0"
            batch.append('{"at":"%s","consumer":"%s","dataset":"%s","contract":"%s"}\n'
                         % (stamps[rnd.randrange(len(stamps))], names[rnd.randrange(consumers)], ds, v))
            if len(batch) == 100000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))


if __name__ == "__main__":
    main()
