"""A long plain text for the memory of indexing one long document (issue 17): paragraphs of six
Open English WordNet definitions joined with spaces, drawn at random (seeded), separated by blank
lines, until the text has at least CHARS characters.

    python -m bench.work_long_text WN_LMF_XML_GZ CHARS [SEED] > onemb.txt

With english-wordnet-2025.xml.gz, 1,000,000 characters and seed 1: 1,000,097 characters in
2,784 paragraphs (bench/ANALYSIS.md, issue 17 sixth pass).
"""

from __future__ import annotations

import gzip
import random
import sys
import xml.etree.ElementTree as ET


def definitions(path: str) -> list[str]:
    """Every Definition of the WN-LMF file, in file order, whitespace collapsed."""
    out = []
    with gzip.open(path) as f:
        for _, el in ET.iterparse(f):
            if el.tag == "Definition" and el.text:
                out.append(" ".join(el.text.split()))
            if el.tag in ("Synset", "LexicalEntry"):
                el.clear()
    return out


def long_text(defs: list[str], chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    paragraphs: list[str] = []
    n = 0
    while n < chars:
        p = " ".join(rng.choice(defs) for _ in range(6))
        paragraphs.append(p)
        n += len(p) + (2 if len(paragraphs) > 1 else 0)
    return "\n\n".join(paragraphs) + "\n"


if __name__ == "__main__":
    text = long_text(definitions(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    sys.stdout.write(text)
