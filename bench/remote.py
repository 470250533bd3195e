"""Object storage and the Dask example against the local file, in one run.

    python3 bench/remote.py [SIZE_MB] [RUNS]        (default 200 MB, 5 runs)

Generates (cached in $BENCH_DIR, default /tmp/contracts-bench-remote-SIZE) a GeoParquet of
about SIZE_MB -- small random polygons with six attributes and twelve wide text columns, in
row groups of 100k rows, so a profile needs a small share of the bytes -- its FlatGeobuf, and
the same features as 8 partition files. Starts moto (`python3 -m moto.server`) on a free
loopback port, uploads the files with boto3, then times RUNS runs of each, interleaved:

- `contracts profile FILE` and `contracts profile s3://bucket/FILE` (bytes read from the
  `--verbose` line, against the object size), for GeoParquet and FlatGeobuf;
- boto3 downloading each whole object in-process: the server's own speed, which bounds every
  remote figure (moto is a Python server; a cloud store serves many connections faster);
- `contracts profile PARTS/` (8 partitions in parallel on one machine), and
  examples/dask/profile_release.py on a LocalCluster of 2 worker processes over the same
  partitions (cluster start-up included), checking that its merged profile equals the
  single-machine profile of the unsplit file (apart from `files`).

Prints medians and ratios as a Markdown table. Needs geopandas, pyogrio, pyarrow, boto3,
moto[server], dask, distributed; the binary from $CONTRACTS_BIN (default target/release/contracts).
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = os.environ.get("CONTRACTS_BIN", str(ROOT / "target/release/contracts"))
BUCKET = "bench"
PARTS = 8


def generate(size_mb, out):
    import geopandas as gpd
    import numpy as np
    import shapely

    out.mkdir(parents=True, exist_ok=True)
    if (out / "done").exists():
        return
    # About 700 bytes per feature in Parquet with this schema (measured).
    n = max(10_000, int(size_mb * 1e6 / 700))
    rng = np.random.default_rng(7)
    cx = rng.uniform(-179, 179, n)
    cy = rng.uniform(-85, 85, n)
    r = rng.uniform(0.001, 0.1, n)
    ang = np.sort(rng.uniform(0, 2 * np.pi, (n, 4)), axis=1)[:, ::-1]
    ring = np.stack([cx[:, None] + r[:, None] * np.cos(ang), cy[:, None] + r[:, None] * np.sin(ang)], axis=2)
    ring = np.concatenate([ring, ring[:, :1, :]], axis=1)
    geoms = shapely.polygons(ring)
    cols = {
        "id": np.arange(n, dtype=np.int64),
        "class": rng.choice(["a", "b", "c", "d"], n),
        "value": rng.normal(size=n),
        "count": rng.integers(0, 1000, n).astype(np.int32),
    }
    for i in range(12):
        # Wide text that compresses poorly: the bytes a profile need not read.
        cols[f"note_{i}"] = [f"{x:016x}{y:016x}" for x, y in zip(rng.integers(0, 2**62, n), rng.integers(0, 2**62, n))]
    gdf = gpd.GeoDataFrame(cols, geometry=geoms, crs="EPSG:4326")
    gdf.to_parquet(out / "release.parquet", row_group_size=100_000)
    gdf.to_file(out / "release.fgb", driver="FlatGeobuf")
    (out / "parts").mkdir(exist_ok=True)
    step = (n + PARTS - 1) // PARTS
    for k in range(PARTS):
        gdf.iloc[k * step:(k + 1) * step].to_parquet(out / "parts" / f"part-{k:02}.parquet", row_group_size=100_000)
    (out / "done").write_text(str(n))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr}")
    return dt, p.stdout, p.stderr


def read_bytes(stderr):
    for line in stderr.splitlines():
        if line.startswith("read ") and " objects in " not in line and " object in " not in line:
            w = line.split()
            return int(w[1]), int(w[3]), int(w[-2])
    return None


def main():
    size = float(sys.argv[1]) if len(sys.argv) > 1 else 200
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    out = Path(os.environ.get("BENCH_DIR", f"/tmp/contracts-bench-remote-{int(size)}"))
    generate(size, out)
    port = free_port()
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import boto3
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench-secret")
        for _ in range(100):
            try:
                s3.create_bucket(Bucket=BUCKET)
                break
            except Exception:
                time.sleep(0.2)
        for f in ["release.parquet", "release.fgb"]:
            s3.upload_file(str(out / f), BUCKET, f)
        env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret",
                   AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true")
        cases = [
            ("GeoParquet", "local file", [BIN, "profile", "--format", "json", str(out / "release.parquet")]),
            ("GeoParquet", "moto S3", [BIN, "profile", "--format", "json", "--verbose", f"s3://{BUCKET}/release.parquet"]),
            ("FlatGeobuf", "local file", [BIN, "profile", "--format", "json", str(out / "release.fgb")]),
            ("FlatGeobuf", "moto S3", [BIN, "profile", "--format", "json", "--verbose", f"s3://{BUCKET}/release.fgb"]),
            ("8 partitions", "one machine", [BIN, "profile", "--format", "json", str(out / "parts")]),
            ("8 partitions", "Dask, 2 workers", [sys.executable, str(ROOT / "examples/dask/profile_release.py"),
                                                 "--local-workers", "2", "--contracts", BIN, str(out / "parts")]),
        ]
        times = {i: [] for i in range(len(cases))}
        outputs, reads = {}, {}
        # The server's own speed: boto3 downloading each whole object, in-process (moto is
        # a Python server, so it bounds every remote figure).
        whole = {"GeoParquet": [], "FlatGeobuf": []}

        class Sink:
            def write(self, b):
                return len(b)

        for _ in range(runs):
            for i, (_, _, cmd) in enumerate(cases):
                dt, stdout, stderr = timed(cmd, env)
                times[i].append(dt)
                outputs[i] = json.loads(stdout)
                reads[i] = read_bytes(stderr)
            for what, key in [("GeoParquet", "release.parquet"), ("FlatGeobuf", "release.fgb")]:
                t = time.perf_counter()
                s3.download_fileobj(BUCKET, key, Sink())
                whole[what].append(time.perf_counter() - t)
    finally:
        moto.terminate()
        moto.wait()

    def strip(p):
        return {k: v for k, v in p.items() if k != "files"}

    assert strip(outputs[0]) == strip(outputs[1]), "remote GeoParquet profile differs"
    assert strip(outputs[2]) == strip(outputs[3]), "remote FlatGeobuf profile differs"
    assert strip(outputs[5]) == strip(outputs[0]), "Dask merged profile differs from the local file's"
    assert outputs[5] == outputs[4], "Dask merged profile differs from the one-machine merge"
    n = outputs[0]["feature_count"]
    print(f"{n} features; {runs} runs each, interleaved; medians. Profiles equal: remote = local, Dask = local.\n")
    print("| data | read from | MB | median s | × local | bytes read | of object | requests |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    base = {}
    for i, (what, where, cmd) in enumerate(cases):
        med = statistics.median(times[i])
        base.setdefault(what, med)
        if what == "8 partitions":
            mb = sum(f.stat().st_size for f in (out / "parts").iterdir()) / 1e6
        else:
            mb = (out / ("release.parquet" if what == "GeoParquet" else "release.fgb")).stat().st_size / 1e6
        r = reads.get(i)
        rb = f"{r[0]:,}" if r else "-"
        frac = f"{100 * r[0] / r[1]:.1f}%" if r else "-"
        req = str(r[2]) if r else "-"
        print(f"| {what} | {where} | {mb:.0f} | {med:.2f} | {med / base[what]:.1f} | {rb} | {frac} | {req} |")
        if where == "moto S3":
            w = statistics.median(whole[what])
            print(f"| {what} | moto S3, boto3 download of the whole object | {mb:.0f} | {w:.2f} | {w / base[what]:.1f} | {int(mb * 1e6):,} | 100% | - |")


if __name__ == "__main__":
    main()
