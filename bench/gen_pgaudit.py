#!/usr/bin/env python3
"""A PostgreSQL server log with pgaudit entries, shaped as a real server writes one, in two
twins: `csvlog` (PostgreSQL 15's 26 columns) and `stderr` (log_line_prefix '%m [%p] %q%u@%d ').

The shape follows what a server with `pgaudit.log = 'read'`, `pgaudit.log_relation = on` and
object auditing of the views wrote in tests/test_pgaudit.rs: for a consumer's SELECT on a view
per line (roads_v1, roads_v2), an OBJECT entry for the view, a SESSION entry for it and a
SESSION entry for the table behind it; some statements over several lines (stderr continues
them with a tab, csvlog quotes them); other classes (WRITE by the publisher), statements on
other tables, `SELECT 1`, and the server's own lines (connections, checkpoints).

Usage: gen_pgaudit.py OUT_DIR [--entries N] [--roles N] [--seed S]
Writes OUT_DIR/postgresql.csv and OUT_DIR/postgresql.log, and prints the number of lines of
each and, per role, its newest read of roads as JSON on stdout (the answer to compare with).
"""
import argparse
import json
import os
import random
from datetime import datetime, timedelta, timezone


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--roles", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=39)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    csv_path = os.path.join(a.out, "postgresql.csv")
    log_path = os.path.join(a.out, "postgresql.log")
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    span = 28 * 86400
    roles = [f"team_{i:04d}" for i in range(a.roles)]
    line_of = {r: (1 if rnd.random() < 0.4 else 2) for r in roles}
    newest = {}
    csv_lines = log_lines = 0
    with open(csv_path, "w") as c, open(log_path, "w") as s:
        n = 0
        t = 0.0
        step = span / a.entries
        pid = 10000
        while n < a.entries:
            t += step * rnd.uniform(0.5, 1.5)
            at = start + timedelta(seconds=t)
            stamp = at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d} UTC"
            pid += 1
            kind = rnd.random()
            role = rnd.choice(roles)
            session = f"{int(at.timestamp()):x}.{pid:x}"
            entries = []
            if kind < 0.80:
                view = f"roads_v{line_of[role]}"
                multi = rnd.random() < 0.1
                stmt = (f"SELECT id, name,\n       geom\n  FROM public.{view} WHERE name <> 'x'"
                        if multi else f"SELECT id, name, geom FROM public.{view}")
                entries = [
                    ("OBJECT", "READ", "SELECT", "VIEW", f"public.{view}", stmt),
                    ("SESSION", "READ", "SELECT", "VIEW", f"public.{view}", stmt),
                    ("SESSION", "READ", "SELECT", "TABLE", "public.roads_data", stmt),
                ]
                newest[role] = (stamp, line_of[role])
            elif kind < 0.88:
                stmt = "SELECT * FROM public.parcels"
                entries = [("SESSION", "READ", "SELECT", "TABLE", "public.parcels", stmt)]
            elif kind < 0.93:
                role = "publisher"
                stmt = "INSERT INTO public.roads_data VALUES (1)"
                entries = [("SESSION", "WRITE", "INSERT", "TABLE", "public.roads_data", stmt)]
            elif kind < 0.96:
                entries = [("SESSION", "READ", "SELECT", "", "", "SELECT 1")]
            for (typ, cls, cmd, otype, oname, stmt) in entries:
                quoted = '"' + stmt.replace('"', '""') + '"' if ("," in stmt or "\n" in stmt) else stmt
                msg = f"AUDIT: {typ},1,1,{cls},{cmd},{otype},{oname},{quoted},<not logged>"
                csv_msg = '"' + msg.replace('"', '""') + '"'
                c.write(f'{stamp},"{role}","gis",{pid},"10.0.0.7:5{pid % 10000:04d}",{session},1,"{cmd}",'
                        f'{stamp},3/{pid},0,LOG,00000,{csv_msg},,,,,,,,,"psql","client backend",,0\n')
                csv_lines += 1 + stmt.count("\n")
                s.write(f"{stamp} [{pid}] {role}@gis LOG:  {msg.replace(chr(10), chr(10) + chr(9))}\n")
                log_lines += 1 + stmt.count("\n")
                n += 1
            if not entries:
                msg = "checkpoint starting: time"
                c.write(f'{stamp},,,{pid},,{session},1,,{stamp},,0,LOG,00000,"{msg}",,,,,,,,,"","checkpointer",,\n')
                s.write(f"{stamp} [{pid}] LOG:  {msg}\n")
                csv_lines += 1
                log_lines += 1
                n += 1
    print(json.dumps({
        "csv_lines": csv_lines,
        "log_lines": log_lines,
        "consumers": len(newest),
        "on_line_1": sum(1 for _, (_, line) in newest.items() if line == 1),
    }))


if __name__ == "__main__":
    main()
