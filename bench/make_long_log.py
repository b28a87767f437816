#!/usr/bin/env python3
"""bench/make_long_log.py - a long request log for the streaming trace bench: both bundled Azure 2023 traces
(28,185 requests, about an hour each) repeated with their timestamps shifted by one hour per repetition, until
ROWS requests. Written to OUT (not committed: 10M rows are ~390 MB).

usage: bench/make_long_log.py ROWS OUT [DATA_DIR]
"""
import calendar
import sys
import time


def read_requests(path):
    """(seconds since 1970 as an int, the fraction as written, 'prompt,gen') of each line after the header."""
    out = []
    with open(path, newline="") as f:
        next(f)
        for line in f:
            stamp, prompt, gen = line.strip().split(",")
            whole, _, fraction = stamp.partition(".")
            seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%d %H:%M:%S"))
            out.append((seconds, fraction, f"{prompt},{gen}"))
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    rows, out_path = int(sys.argv[1]), sys.argv[2]
    data = sys.argv[3] if len(sys.argv) == 4 else "data"
    requests = []
    for name in ("AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv"):
        requests += read_requests(f"{data}/azure/{name}")
    requests.sort()
    with open(out_path, "w") as out:
        out.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        written, shift = 0, 0
        while written < rows:
            chunk = []
            for seconds, fraction, tokens in requests[: rows - written]:
                stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds + shift))
                chunk.append(f"{stamp}.{fraction},{tokens}\n")
            out.write("".join(chunk))
            written += len(chunk)
            shift += 3600


if __name__ == "__main__":
    main()
