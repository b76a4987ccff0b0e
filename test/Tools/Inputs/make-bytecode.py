#!/usr/bin/env python3
"""Writes small MLIR bytecode files (version 6, MLIR 19's format) that MLIR
19's reader, verifier or printer cannot survive, for test/Tools/
bytecode-nesting.mlir; the layout follows mlir/lib/Bytecode/Writer.

    make-bytecode.py KIND [N] > FILE

KIND:
  ok            one empty module, its location a FusedLoc of one UnknownLoc
  attr-chain N  the module's location a FusedLoc of a FusedLoc of ... N deep
  attr-cycle    the module's location a FusedLoc that contains itself
  regions N     N modules nested in one another
  list-count    the location a FusedLoc whose list claims 2^40 elements
  group-count   an attribute table of 1 entry whose group claims 1000
  text-attr N   beside the module's location, an attribute in text form:
                N nested arrays, `[[...]]`
  float-of-int  the location a FloatAttr whose type is i32: MLIR 19's reader
                refuses it without a diagnostic
  top-args      the top-level block with an argument: MLIR 19's reader
                defines it in a value scope it has not made yet
  wide-int      the location an IntegerAttr of type i128 whose value claims
                2^40 words
  negative-dim  a type tensor<-58x2xf32> beside the module: MLIR 19 builds it
                without its verifier (it printed as text that does not parse)
  dup-names     the module's attributes {t.x = unit, t.x = unit}: MLIR 19
                keeps both (they printed as text that does not parse)
  layout-rank   a type memref<4xf32, strided<[2, 1]>> beside the module
  cut-float     the module's attribute t.x, a FloatAttr of type f64 whose
                value is cut short
  dense-short N the module's attribute t.x, dense<...> : tensor<Nxf32> with
                the data of two elements
"""

import sys

# The builtin dialect's codes (mlir/IR/BuiltinDialectBytecode.td).
BUILTIN_DICTIONARY_ATTR, BUILTIN_STRING_ATTR, BUILTIN_UNIT_ATTR = 1, 2, 7
BUILTIN_INTEGER_ATTR, BUILTIN_FLOAT_ATTR = 8, 9
BUILTIN_FUSED_LOC, BUILTIN_UNKNOWN_LOC = 12, 15
BUILTIN_DENSE_ELEMENTS_ATTR = 18
BUILTIN_INTEGER_TYPE, BUILTIN_F32_TYPE, BUILTIN_F64_TYPE = 0, 5, 6
BUILTIN_MEMREF_TYPE, BUILTIN_RANKED_TENSOR_TYPE = 10, 13
SECTION_STRING, SECTION_DIALECT, SECTION_ATTR_TYPE = 0, 1, 2
SECTION_ATTR_TYPE_OFFSET, SECTION_IR, SECTION_PROPERTIES = 3, 4, 8
HAS_INLINE_REGIONS = 0b00010000


def varint(value):
    """MLIR's prefix varint: the first byte's trailing zeros count the bytes
    that follow."""
    for size in range(1, 9):
        if value < 1 << (7 * size):
            return (((value << 1) | 1) << (size - 1)).to_bytes(size, "little")
    return b"\x00" + value.to_bytes(8, "little")


def section(ident, data):
    return bytes([ident]) + varint(len(data)) + data


def strings_section(strings):
    encoded = [s.encode() + b"\x00" for s in strings]
    sizes = b"".join(varint(len(e)) for e in reversed(encoded))
    return section(SECTION_STRING, varint(len(strings)) + sizes + b"".join(encoded))


def module_file(attributes, ir, attribute_group=None, texts=(), types=(),
                strings=("builtin", "module")):
    """`attributes`: the builtin attributes' encodings, in order, then
    `texts` in their assembly form; `ir`: the IR section's data (ops named
    by index 0: builtin.module)."""
    strings = strings_section(list(strings))
    # One dialect (string 0, no version); one op name, registered (string 1).
    dialects = section(SECTION_DIALECT,
                       varint(1) + varint(0 << 1) + varint(1) +
                       varint(0) + varint(1) + varint((1 << 1) | 1))
    entries = [(a, 1) for a in attributes] + [
        (t.encode() + b"\x00", 0) for t in texts]
    data = b"".join(e for e, _ in entries)
    count = len(entries) if attribute_group is None else attribute_group
    offsets = varint(len(entries)) + varint(len(types)) + varint(0) + varint(count)
    offsets += b"".join(varint((len(e) << 1) | custom) for e, custom in entries)
    if types:
        data += b"".join(types)
        offsets += varint(0) + varint(len(types))
        offsets += b"".join(varint((len(t) << 1) | 1) for t in types)
    return (b"ML\xefR" + varint(6) + b"make-bytecode.py\x00" + strings +
            dialects + section(SECTION_ATTR_TYPE, data) +
            section(SECTION_ATTR_TYPE_OFFSET, offsets) +
            section(SECTION_PROPERTIES, b"") + section(SECTION_IR, ir))


def nested_modules(depth, location):
    op = b""
    for level in range(depth):
        ops = 1 if level else 0
        region = varint(1) + varint(0) + varint(ops << 1) + op
        op = (varint(0) + bytes([HAS_INLINE_REGIONS]) + varint(location) +
              varint((1 << 1) | 1) + section(SECTION_IR, region))
    return varint(1 << 1) + op  # the top-level block: one op


def module_with_attributes(values, types=()):
    """One builtin.module, its attributes named `t.x` (string 2), one per
    encoding in `values`: attribute 0 is its location (UnknownLoc), 1 the
    name, then the values and the dictionary."""
    name = varint(BUILTIN_STRING_ATTR) + varint(2)
    first = 2
    pairs = b"".join(varint(1) + varint(first + i) for i in range(len(values)))
    dictionary = varint(BUILTIN_DICTIONARY_ATTR) + varint(len(values)) + pairs
    op = (varint(0) + bytes([HAS_INLINE_REGIONS | 1]) + varint(0) +
          varint(first + len(values)) + varint((1 << 1) | 1) +
          section(SECTION_IR, varint(1) + varint(0) + varint(0)))
    return module_file([varint(BUILTIN_UNKNOWN_LOC), name] + list(values) +
                       [dictionary], varint(1 << 1) + op, types=types,
                       strings=("builtin", "module", "t.x"))


def fused(*elements):
    return varint(BUILTIN_FUSED_LOC) + varint(len(elements)) + b"".join(
        varint(e) for e in elements)


def main():
    kind = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    unknown = varint(BUILTIN_UNKNOWN_LOC)
    if kind == "ok":
        out = module_file([fused(1), unknown], nested_modules(1, 0))
    elif kind == "attr-chain":
        chain = [fused(i + 1) for i in range(n)] + [unknown]
        out = module_file(chain, nested_modules(1, 0))
    elif kind == "attr-cycle":
        out = module_file([fused(0)], nested_modules(1, 0))
    elif kind == "regions":
        out = module_file([unknown], nested_modules(n, 0))
    elif kind == "list-count":
        out = module_file([varint(BUILTIN_FUSED_LOC) + varint(1 << 40)],
                          nested_modules(1, 0))
    elif kind == "group-count":
        out = module_file([unknown], nested_modules(1, 0), attribute_group=1000)
    elif kind == "float-of-int":
        i32 = varint(BUILTIN_INTEGER_TYPE) + varint(32 << 2)
        out = module_file([varint(BUILTIN_FLOAT_ATTR) + varint(0) + varint(0)],
                          nested_modules(1, 0), types=[i32])
    elif kind == "wide-int":
        i128 = varint(BUILTIN_INTEGER_TYPE) + varint(128 << 2)
        out = module_file([varint(BUILTIN_INTEGER_ATTR) + varint(0) +
                           varint(1 << 40)],
                          nested_modules(1, 0), types=[i128])
    elif kind == "negative-dim":
        # Sizes are signed varints, zigzag-encoded: -58 is 2 * 58 - 1.
        tensor = (varint(BUILTIN_RANKED_TENSOR_TYPE) + varint(2) +
                  varint(2 * 58 - 1) + varint(4) + varint(1))
        out = module_file([unknown], nested_modules(1, 0),
                          types=[tensor, varint(BUILTIN_F32_TYPE)])
    elif kind == "dup-names":
        unit = varint(BUILTIN_UNIT_ATTR)
        out = module_with_attributes([unit, unit])
    elif kind == "layout-rank":
        memref = (varint(BUILTIN_MEMREF_TYPE) + varint(1) + varint(2 * 4) +
                  varint(1) + varint(1))
        out = module_file([unknown], nested_modules(1, 0),
                          texts=["strided<[2, 1]>"],
                          types=[memref, varint(BUILTIN_F32_TYPE)])
    elif kind == "cut-float":
        # f64: a varint of 9 bytes, of which 7 are there.
        value = varint(BUILTIN_FLOAT_ATTR) + varint(0) + b"\x00" + bytes(7)
        out = module_with_attributes([value], types=[varint(BUILTIN_F64_TYPE)])
    elif kind == "top-args":
        # One op, arguments: one, of type 0 (i32), no location.
        i32 = varint(BUILTIN_INTEGER_TYPE) + varint(32 << 2)
        out = module_file([unknown], varint((1 << 1) | 1) + varint(1) +
                          varint(0 << 1) + b"\x00" +
                          nested_modules(1, 0)[1:], types=[i32])
    elif kind == "dense-short":
        # module attributes {t.x = dense<...> : tensor<Nxf32>}, N = n, with a
        # buffer of 2 elements.
        tensor = (varint(BUILTIN_RANKED_TENSOR_TYPE) + varint(1) +
                  varint(2 * n) + varint(1))
        dense = (varint(BUILTIN_DENSE_ELEMENTS_ATTR) + varint(0) + varint(8) +
                 bytes(range(1, 9)))
        out = module_with_attributes([dense],
                                     types=[tensor, varint(BUILTIN_F32_TYPE)])
    elif kind == "text-attr":
        out = module_file([unknown], nested_modules(1, 0),
                          texts=["[" * n + "]" * n])
    else:
        sys.exit("make-bytecode.py: unknown kind " + kind)
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()
