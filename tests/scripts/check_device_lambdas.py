#!/usr/bin/env python3
"""check_device_lambdas.py DIR...: no KOKKOS_LAMBDA in a private or protected member function.

nvcc refuses an extended __host__ __device__ lambda whose enclosing function is a private or
protected member ("cannot have private or protected access within its class"), so a CUDA build
breaks where every CPU build compiles. CI has no nvcc run, so this check holds the rule
(core/kokkos_types.hpp states it): it finds each KOKKOS_LAMBDA / KOKKOS_CLASS_LAMBDA, the
function around it, and that function's access, for member functions defined inside their class
and for those defined outside it (Class<T>::name(...) { ... }, looked up in the class's
declaration). Prints each offence as FILE:LINE and exits 1; exits 0 with a count otherwise.
"""
import re
import sys
from pathlib import Path

LAMBDA = re.compile(r"\bKOKKOS_(?:CLASS_)?LAMBDA\b")
ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")
# `enum class X` is not a class; `template <class T>` names no class (no body follows its name).
CLASS_HEAD_ANY = re.compile(r"(\benum\s+)?\b(class|struct)\s+(\w+)(?!\s*[,>=])")
OUT_OF_LINE = re.compile(r"\b(\w+)\s*(?:<[^<>]*(?:<[^<>]*>[^<>]*)*>)?\s*::\s*(~?\w+)\s*\([^{;]*$")
FUNCTION_NAME = re.compile(r"(~?\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)[^()]*$")


def strip(text):
    """Comments and literals blanked out, line structure kept."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def scan(path, text, declared, uses):
    """Records each class's member access (declared[class][name]) and each lambda's context."""
    stack = []  # entries: ("class", name, [access]) or ("block", head text, access or None, line)
    start = 0
    for match in re.finditer(r"[{};]|\b(?:public|private|protected)\s*:(?!:)", text):
        token = match.group(0)
        head = text[start:match.start()]
        line = text.count("\n", 0, match.start()) + 1
        in_class = stack and stack[-1][0] == "class"
        if token not in "{};":  # an access specifier
            if in_class:
                stack[-1][2][0] = token.split()[0].rstrip(":")
            start = match.end()
            continue
        if in_class:  # a member declaration or definition ends or begins here
            name = FUNCTION_NAME.search(head.strip())
            if name:
                declared.setdefault(stack[-1][1], {})[name.group(1)] = stack[-1][2][0]
        for lam in LAMBDA.finditer(head):
            uses.append((path, text.count("\n", 0, start + lam.start()) + 1, list(stack)))
        if token == "{":
            heads = [m for m in CLASS_HEAD_ANY.finditer(head) if not m.group(1)]
            cls = heads[-1] if heads and re.search(r"[^;{()]*$", head[heads[-1].end():]) and \
                "(" not in head[heads[-1].start():] else None
            if cls:
                kind = cls.group(2)
                stack.append(("class", cls.group(3), ["private" if kind == "class" else "public"]))
            else:
                access = stack[-1][2][0] if in_class else None
                stack.append(("block", head, access, line))
        elif token == "}" and stack:
            stack.pop()
        start = match.end()


def offence(stack, declared):
    """The access of the member function a lambda sits in, when it is not public."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] == "class":
            return None  # a lambda in a class body outside any function (an initializer)
        if i > 0 and stack[i - 1][0] == "class":  # a member function defined in its class
            return stack[i][2] if stack[i][2] in ("private", "protected") else None
        for outside in OUT_OF_LINE.finditer(stack[i][1].strip()):  # Class<T>::name(...) {
            members = declared.get(outside.group(1))
            if members is not None:
                access = members.get(outside.group(2))
                return access if access in ("private", "protected") else None
    return None


def main(dirs):
    declared, uses = {}, []
    for d in dirs:
        for path in sorted(Path(d).rglob("*")):
            if path.suffix in (".hpp", ".cpp", ".h"):
                scan(path, strip(path.read_text()), declared, uses)
    bad = [(p, l, a) for p, l, s in uses if (a := offence(s, declared))]
    for path, line, access in bad:
        print(f"{path}:{line}: KOKKOS_LAMBDA in a {access} member function: nvcc refuses it; make "
              "the function public or a free function (core/kokkos_types.hpp)")
    if bad:
        return 1
    print(f"check_device_lambdas: {len(uses)} KOKKOS_LAMBDA, none in a private or protected member")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
