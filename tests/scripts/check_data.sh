#!/usr/bin/env bash
# check_data.sh OUT DATA_APP: runs meshslice-data on a small folder of texts made in OUT (files
# in a subfolder, an empty file, a copy of another file's content, a symbolic link to a file)
# and checks its counts, its split, that a second run writes the same bytes, and the dataset
# itself as a Python reader of Megatron's format sees it (read_indexed_dataset.py): each
# distinct file one document, in sorted order, holding its bytes and the end-of-document token.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1 app=$2
rm -rf "$out"
texts=$out/texts
mkdir -p "$texts/sub"
printf 'The quick brown fox jumps over the lazy dog.\n' >"$texts/a.txt"
printf 'caf\xc3\xa9 \x00\xff bytes that are not text\n' >"$texts/bytes.bin"
cp "$texts/a.txt" "$texts/copy-of-a.txt"
: >"$texts/empty.txt"
printf 'Second folder, first file.\nTwo lines.\n' >"$texts/sub/b.txt"
printf 'Last one.' >"$texts/sub/c.txt"
ln -s sub/b.txt "$texts/link-to-b.txt"
ln -s .. "$texts/sub/up"  # a link to a folder: not followed (it would loop)

output=$("$app" --out "$out/dataset/text" --held-out 0.3 --seed 7 "$texts" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 0 ] || fail "meshslice-data exit status $status"
bytes=$(cat "$texts/a.txt" "$texts/bytes.bin" "$texts/sub/b.txt" "$texts/sub/c.txt" | wc -c)
for line in \
  '^meshslice-data: 7 files read: 4 documents. skipped 1 reached again through links, 1 with the content of an earlier file, 1 empty, 1 links to folders' \
  "^documents 4, bytes $bytes, tokens $((bytes + 4)) " \
  '^split .held-out fraction 0.3, seed 7.: train 3 documents, [0-9]+ tokens. held-out 1 document, [0-9]+ tokens$' \
  "^wrote $out/dataset/text.bin .$((2 * (bytes + 4))) bytes, uint16 tokens. and $out/dataset/text.idx .$((34 + 12 * 4 + 8 * 5)) bytes.$"; do
  grep -Eq "$line" <<<"$output" || fail "no line matching '$line'"
done
# The split's tokens add up to the dataset's.
split_tokens=$(sed -nE 's/^split .*: train [0-9]+ documents?, ([0-9]+) tokens. held-out [0-9]+ documents?, ([0-9]+) tokens$/\1 + \2/p' <<<"$output")
[ "$((split_tokens))" -eq "$((bytes + 4))" ] || fail "the split's tokens ($split_tokens) are not the dataset's"
ls "$out/dataset" | grep -q partial && fail "partial files left behind"

"$app" --out "$out/again/text" --held-out 0.3 --seed 7 "$texts" >/dev/null || fail "second run"
cmp -s "$out/dataset/text.bin" "$out/again/text.bin" && cmp -s "$out/dataset/text.idx" "$out/again/text.idx" ||
  fail "a second run wrote other bytes"

# Sorted order: a.txt, bytes.bin, (copy-of-a.txt: a copy), (empty.txt), link-to-b.txt (the
# first path to b.txt), sub/b.txt (the same file again), sub/c.txt.
python3 "$(dirname "${BASH_SOURCE[0]}")/read_indexed_dataset.py" "$out/dataset/text" \
  "$texts/a.txt" "$texts/bytes.bin" "$texts/sub/b.txt" "$texts/sub/c.txt"
status=$?
[ "$status" -eq 77 ] && exit 77
[ "$status" -eq 0 ] || fail "the dataset does not read back as the files"
echo "PASS: meshslice-data"
