#!/usr/bin/python3
"""No reference to a file that does not exist (issue 43).

Reads README.md and docs/*.md of the repository ROOT (default: this script's ../) and checks
  - every relative link and image, Markdown's [text](path) and HTML's src="path" / href="path":
    the file exists, relative to the document; a #fragment must name one of the target
    document's headings (GitHub's anchors: lower case, punctuation dropped, spaces as -);
  - every backquoted repository path outside fenced code blocks, such as `core/src/formats/bpe.cpp`,
    `tests/test_*.cpp` or `docs/present-1024x768-step{2,3}.png`: a word that starts with one of
    the repository's top-level folders names something that exists, relative to ROOT (a glob
    matches at least one; {a,b} is expanded; a trailing :LINE is ignored).
Addresses with a scheme (https:, mailto:) and paths outside the tree (/usr/..., ~/...) are not
checked. Prints one line per broken reference, FILE:LINE: what; exit 1 when there is any.
Usage: check_docs_links.py [ROOT]
"""
import glob
import os
import re
import sys

TOP = ("app", "assets", "cmake", "core", "docs", "shaders", "tests", "tools", ".ci")
MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""")
CODE = re.compile(r"(`+)(.+?)\1")
PATH_WORD = re.compile(r"^(?:%s)/[^\s]*$" % "|".join(re.escape(t) for t in TOP))


def anchors(path, cache={}):
    """GitHub's anchors for the headings of a Markdown file."""
    if path not in cache:
        found = set()
        fenced = False
        counts = {}
        for line in open(path, encoding="utf-8"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if fenced or not line.startswith("#"):
                continue
            text = line.lstrip("#").strip()
            text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text)
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
        cache[path] = found
    return cache[path]


def expand_braces(word):
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for part in m.group(1).split(","):
        out += expand_braces(word[: m.start()] + part + word[m.end():])
    return out


def check_link(doc, target):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return None  # an address with a scheme: not a file of this tree
    path, _, fragment = target.partition("#")
    full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
    if not os.path.exists(full):
        return f"link to {target}: {path} does not exist"
    if fragment and full.endswith(".md") and fragment.lower() not in anchors(full):
        return f"link to {target}: {os.path.basename(full)} has no heading #{fragment}"
    return None


def check_path(root, word):
    word = re.sub(r":\d+(-\d+)?$", "", word.rstrip(".,;:)"))
    if "<" in word or "..." in word:
        return f"`{word}` is not a whole path (write it out)"
    for one in expand_braces(word):
        if not glob.glob(os.path.join(root, one)):
            return f"`{one}` does not exist"
    return None


def check(root, doc):
    problems = []
    fenced = False
    for number, line in enumerate(open(doc, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        found = []
        for m in MD_LINK.finditer(line):
            found.append(check_link(doc, m.group(1)))
        for m in HTML_LINK.finditer(line):
            found.append(check_link(doc, m.group(1)))
        if not fenced:
            for m in CODE.finditer(line):
                for word in m.group(2).split():
                    if PATH_WORD.match(word):
                        found.append(check_path(root, word))
        where = os.path.relpath(doc, root)
        problems += [f"{where}:{number}: {p}" for p in found if p]
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    docs = [d for d in docs if os.path.exists(d)]
    problems = [p for d in docs for p in check(root, d)]
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs_links: {len(problems)} broken reference(s) in {len(docs)} documents")
        return 1
    print(f"check_docs_links: every link and repository path in {len(docs)} documents exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
