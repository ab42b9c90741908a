"""The heap against the memory limit: -Xmx and the direct memory cap from jvm.* of the chart, RocksDB's
budget from storage.memoryPercent, and the image's own heap share for a run without the chart."""
import re

import yaml

from .manifests import g, mib
from .report import check


def check_heap(r):
    exp, limit = r.exp, g(r.container, "resources", "limits", "memory")
    check("memory limit = %s" % exp["memoryLimit"], limit == exp["memoryLimit"], limit)
    jto = r.val("JAVA_TOOL_OPTIONS") or ""
    xmx = re.findall(r"-Xmx(\d+)([kKmMgG]?)(?=\s|$)", jto)
    check("JAVA_TOOL_OPTIONS has exactly one -Xmx", len(xmx) == 1, jto)
    heap_opts = re.findall(r"-XX:(MaxHeapSize|MaxRAMPercentage|MaxRAM)\b", jto)
    check("no other heap-size option in JAVA_TOOL_OPTIONS", not heap_opts, jto)
    if len(xmx) != 1 or not mib(limit):
        check("memory limit is <n>Mi or <n>Gi", mib(limit), limit)
        return
    n, unit = int(xmx[0][0]), xmx[0][1].lower()
    heap = {"k": n / 1024, "m": n, "g": n * 1024, "": n / (1024 * 1024)}[unit]
    check("-Xmx%s%s = %dMiB (expected)" % (xmx[0][0], xmx[0][1], exp["heapMiB"]), heap == exp["heapMiB"], heap)
    check("heap %dMiB <= 75%% of the %s memory limit" % (heap, limit), heap <= 0.75 * mib(limit),
          "%s / %s" % (heap, mib(limit)))
    direct = re.findall(r"-XX:MaxDirectMemorySize=(\d+)m(?=\s|$)", jto)
    expected_direct = mib(limit) * exp.get("directMemoryPercent", 8) // 100
    check("JAVA_TOOL_OPTIONS caps direct memory once, at %dMiB (jvm.directMemoryPercent of the limit)" % expected_direct,
          len(direct) == 1 and int(direct[0]) == expected_direct, jto)
    check("heap + direct memory <= 80%% of the %s memory limit" % limit,
          len(direct) == 1 and heap + int(direct[0]) <= 0.8 * mib(limit), jto)
    storage = r.val("RINGKV_STORAGE_MEMORY_SIZE") or ""
    expected_storage = mib(limit) * exp.get("storageMemoryPercent", 15) // 100
    check("RINGKV_STORAGE_MEMORY_SIZE = %dMB (storage.memoryPercent of the limit)" % expected_storage,
          storage == "%dMB" % expected_storage, storage)
    check("heap + direct memory + RocksDB <= 85%% of the %s memory limit" % limit,
          len(direct) == 1 and heap + int(direct[0]) + expected_storage <= 0.85 * mib(limit), jto)


def image_heap(dockerfile_path, values_path):
    """The chart's jvm.heapPercent decides the heap; the image, which cannot know the memory limit it
    will run under, gives the heap the same share of it (-XX:MaxRAMPercentage)."""
    with open(values_path) as f:
        percent = g(yaml.safe_load(f), "jvm", "heapPercent")
    with open(dockerfile_path) as f:
        opts = re.findall(r'^ENV JAVA_TOOL_OPTIONS="([^"]*)"', f.read(), re.M)
    shares = re.findall(r"-XX:MaxRAMPercentage=([0-9.]+)(?=\s|$)", opts[0] if len(opts) == 1 else "")
    check("the image's JAVA_TOOL_OPTIONS sizes the heap once, with -XX:MaxRAMPercentage",
          len(opts) == 1 and len(shares) == 1 and not re.search(r"-Xmx|MaxHeapSize|MaxRAM=", opts[0]), opts)
    check("the image's -XX:MaxRAMPercentage = jvm.heapPercent of values.yaml (%s)" % percent,
          len(shares) == 1 and float(shares[0]) == percent, shares)
