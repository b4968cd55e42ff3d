#!/usr/bin/env python3
"""Reads an indexed dataset as a Megatron user would, with struct and numpy alone, and checks it.

    read_indexed_dataset.py PREFIX FILE...

PREFIX.idx and PREFIX.bin must be Megatron-LM's MMIDIDX format, version 1: the 9-byte magic
"MMIDIDX\\0\\0", <Q version 1, <B token type code, <Q sequence count S, <Q document index count D,
then S int32 sequence lengths, S int64 byte offsets into PREFIX.bin, D int64 document indices
(0 first, S last) and nothing more. Document i must be FILE i's bytes followed by the
end-of-document token 256 (meshslice-data's byte tokenizer). Exit 77 (a skip for ctest) without
numpy.
"""
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("numpy is not installed (Debian: python3-numpy): skipped")
    sys.exit(77)

# Megatron's DType codes (megatron/core/datasets/indexed_dataset.py) of integer token types.
DTYPES = {1: "<u1", 2: "<i1", 3: "<i2", 4: "<i4", 5: "<i8", 8: "<u2"}
END_OF_DOCUMENT = 256


def read_index(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:9] == b"MMIDIDX\x00\x00", f"{path}: magic {data[:9]!r}"
    version, code, sequences, document_indices = struct.unpack_from("<QBQQ", data, 9)
    assert version == 1, f"{path}: version {version}"
    assert code in DTYPES, f"{path}: token type code {code}"
    offset = 34
    lengths = np.frombuffer(data, dtype="<i4", count=sequences, offset=offset)
    offset += 4 * sequences
    pointers = np.frombuffer(data, dtype="<i8", count=sequences, offset=offset)
    offset += 8 * sequences
    documents = np.frombuffer(data, dtype="<i8", count=document_indices, offset=offset)
    offset += 8 * document_indices
    assert offset == len(data), f"{path}: {len(data)} bytes, the header accounts for {offset}"
    assert documents[0] == 0 and documents[-1] == sequences, f"{path}: document indices {documents}"
    assert np.all(np.diff(documents) >= 0), f"{path}: document indices decrease"
    return DTYPES[code], lengths, pointers, documents


def main(prefix, files):
    dtype, lengths, pointers, documents = read_index(prefix + ".idx")
    with open(prefix + ".bin", "rb") as f:
        tokens = f.read()
    itemsize = np.dtype(dtype).itemsize
    assert int(lengths.sum()) * itemsize == len(tokens), "the sequences do not fill the .bin exactly"
    assert len(documents) - 1 == len(files), f"{len(documents) - 1} documents, want {len(files)}"
    for d, name in enumerate(files):
        parts = [np.frombuffer(tokens, dtype=dtype, count=int(lengths[s]), offset=int(pointers[s]))
                 for s in range(documents[d], documents[d + 1])]
        document = np.concatenate(parts).astype(np.int64)
        with open(name, "rb") as f:
            want = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)
        assert document[-1] == END_OF_DOCUMENT, f"document {d} does not end with {END_OF_DOCUMENT}"
        assert np.array_equal(document[:-1], want), f"document {d} is not the bytes of {name}"
    print(f"PASS: {prefix}: {len(files)} documents, {len(tokens) // itemsize} tokens of {dtype}, "
          "each the bytes of its file and an end-of-document token")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
