#!/usr/bin/env python3
"""Reads meshslice-train's event files with TensorBoard's own reader, checks them against train.csv.

    check_tensorboard.py OUT_DIR

Every event file in OUT_DIR/tensorboard/ must be read to its end by TensorBoard's reader (no
torn or corrupt record left behind). Every numeric cell of OUT_DIR/train.csv (header
step,loss,eval_loss,...; an empty cell is no value) must be the scalar tagged with its column at
its step, to float32's precision, and the event files may hold no other value of those tags;
no (tag, step) may have two values; a text tagged "deck" must be there. Exit 77 (a skip for
ctest) without the tensorboard package, which works without TensorFlow.
"""
import csv
import glob
import math
import os
import sys
from collections import Counter, defaultdict

try:
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.util import tensor_util
except ImportError:
    print("SKIP: the tensorboard Python package is not installed (python3 -m venv DIR && "
          "DIR/bin/pip install tensorboard; run with DIR/bin/python)")
    sys.exit(77)

RELATIVE_TOLERANCE = 1e-6  # simple_value is a float32
TFRECORD_OVERHEAD = 16  # length, its CRC and the data's CRC around each record's data


def read_events(path):
    """(tag, step, plugin, value) of every summary value, as TensorBoard's data layer sees it."""
    # The raw records only to see that the reader reached the end: it stops quietly at a torn
    # or corrupt record, as TensorBoard does while a run is still writing.
    raw = list(event_file_loader.RawEventFileLoader(path).Load())
    size = os.path.getsize(path)
    read = sum(len(record) + TFRECORD_OVERHEAD for record in raw)
    assert read == size, f"{path}: TensorBoard reads {read} of its {size} bytes"
    values = []
    events = list(event_file_loader.EventFileLoader(path).Load())
    assert events and events[0].file_version.startswith("brain.Event:"), \
        f"{path}: the first event is not a file_version: {events[:1]}"
    for event in events:
        for value in event.summary.value:
            plugin = value.metadata.plugin_data.plugin_name
            # data_compat has turned a simple_value into a "scalars" tensor, and the text
            # plugin's value is a string tensor.
            array = tensor_util.make_ndarray(value.tensor)
            values.append((value.tag, event.step, plugin, array.item()))
    return len(raw), values


def read_csv(path):
    """{column: {step: value}} of train.csv's numeric cells."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows and rows[0] and rows[0][0] == "step", f"{path}: header {rows[:1]}"
    header = rows[0]
    columns = {name: {} for name in header[1:]}
    for number, row in enumerate(rows[1:], start=2):
        assert len(row) <= len(header), f"{path}:{number}: {len(row)} cells, {len(header)} columns"
        step = int(row[0])
        for name, cell in zip(header[1:], row[1:]):
            if cell != "":
                columns[name][step] = float(cell)
    return columns


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-38)


def main(out_dir):
    files = sorted(glob.glob(os.path.join(out_dir, "tensorboard", "*tfevents*")))
    assert files, f"no event file in {out_dir}/tensorboard/"
    records = 0
    values = []
    for path in files:
        count, file_values = read_events(path)
        records += count
        values += file_values
    problems = []

    per_key = Counter((tag, step) for tag, step, _, _ in values)
    problems += [f"{tag} has {n} values at step {step}"
                 for (tag, step), n in per_key.items() if n > 1]

    scalars = defaultdict(dict)  # tag -> step -> value
    texts = defaultdict(dict)
    for tag, step, plugin, value in values:
        if plugin == "scalars":
            scalars[tag][step] = float(value)
        elif plugin == "text":
            texts[tag][step] = value.decode("utf-8") if isinstance(value, bytes) else str(value)
        else:
            problems.append(f"{tag} at step {step}: unexpected plugin {plugin!r}")

    columns = read_csv(os.path.join(out_dir, "train.csv"))
    for name, cells in columns.items():
        events = scalars.get(name, {})
        for step, want in sorted(cells.items()):
            if step not in events:
                problems.append(f"{name} at step {step}: {want} in train.csv, no scalar")
            elif not close(events[step], want):
                problems.append(f"{name} at step {step}: scalar {events[step]}, train.csv {want}")
        problems += [f"{name} at step {step}: scalar {value}, no value in train.csv"
                     for step, value in sorted(events.items()) if step not in cells]

    if not any(text.strip() for text in texts.get("deck", {}).values()):
        problems.append("no text tagged 'deck'")

    if problems:
        print(f"check_tensorboard: {len(problems)} problems in {out_dir}/tensorboard/:")
        for problem in problems[:30]:
            print("  " + problem)
        sys.exit(1)
    print(f"check_tensorboard: {len(files)} event file(s), {records} records, "
          f"every train.csv value at its step once")
    for tag in sorted(scalars):
        where = "train.csv column" if tag in columns else "not in train.csv"
        steps = sorted(scalars[tag])
        print(f"  scalar {tag}: {len(steps)} steps {steps[0]}..{steps[-1]} ({where})")
    for tag in sorted(texts):
        print(f"  text {tag}: {len(texts[tag])} (steps {sorted(texts[tag])})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
