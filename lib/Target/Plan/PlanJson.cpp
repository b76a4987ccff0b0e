//===- PlanJson.cpp - A .mwplan as JSON -----------------------------------===//
//
// Prints a verified plan (mwplan::Plan) as indented JSON for people and
// tests: one line per persistent buffer, attribute, operand and result, so a
// diff of two plans reads line by line. Used by `--mw-plan-json`; the format
// is described in docs/mw-translate.md.
//
//===----------------------------------------------------------------------===//

#include "PlanJson.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
namespace fb = flatbuffers;

static const char *dtypeName(mwplan::DType dtype) {
  static const char *names[] = {"f32", "f16", "bf16", "i32",
                                "i64", "i8",  "f8E4M3FN"};
  return names[static_cast<int>(dtype)];
}

static const char *roleName(mwplan::Role role) {
  static const char *names[] = {
      "none", "param", "input", "label", "optimizer_state", "grad", "output",
      "kv_cache"};
  return names[static_cast<int>(role)];
}

static const char *placementName(mwplan::Placement placement) {
  static const char *names[] = {"device", "host", "file"};
  return names[static_cast<int>(placement)];
}

/// Writes the elements of `values` into the array `j` has open.
template <typename T>
static void writeValues(llvm::json::OStream &j, const fb::Vector<T> *values) {
  if (values)
    for (T v : *values)
      j.value(v);
}

/// Writes `fn`'s value on one line inside an indented document.
static void oneLine(llvm::json::OStream &j,
                    llvm::function_ref<void(llvm::json::OStream &)> fn) {
  j.rawValue([&](raw_ostream &os) {
    llvm::json::OStream line(os);
    fn(line);
  });
}

static void writeOperand(llvm::json::OStream &j, const mwplan::Plan &plan,
                         const mwplan::Operand &o) {
  j.object([&] {
    if (o.space() == mwplan::Space::Arena) {
      j.attribute("space", "arena");
      j.attribute("arena_offset", o.arena_offset());
    } else {
      j.attribute("space", "persistent");
      j.attribute("persistent", o.persistent());
      j.attribute("name",
                  plan.persistents()->Get(o.persistent())->name()->str());
    }
    j.attribute("offset", o.offset());
    j.attribute("dtype", dtypeName(o.dtype()));
    j.attributeArray("shape", [&] { writeValues(j, o.shape()); });
    j.attributeArray("strides", [&] { writeValues(j, o.strides()); });
  });
}

static void writeAttr(llvm::json::OStream &j, const mwplan::Attr &a) {
  static const char *kinds[] = {"int",    "float", "bool",
                                "string", "ints",  "floats"};
  j.object([&] {
    j.attribute("name", a.name()->str());
    j.attribute("kind", kinds[static_cast<int>(a.kind())]);
    switch (a.kind()) {
    case mwplan::AttrKind::Int:
      return j.attribute("value", a.i());
    case mwplan::AttrKind::Float:
      return j.attribute("value", a.f());
    case mwplan::AttrKind::Bool:
      return j.attribute("value", a.i() != 0);
    case mwplan::AttrKind::String:
      if (a.bytes())
        return j.attribute(
            "bytes",
            llvm::toHex(ArrayRef<uint8_t>(a.bytes()->data(), a.bytes()->size()),
                        /*LowerCase=*/true));
      return j.attribute("value", a.s() ? a.s()->str() : "");
    case mwplan::AttrKind::Ints:
      return j.attributeArray("value", [&] { writeValues(j, a.ints()); });
    case mwplan::AttrKind::Floats:
      return j.attributeArray("value", [&] { writeValues(j, a.floats()); });
    }
  });
}

/// A value reference of a fused program: "in2" (kernel input 2) or "%3#1"
/// (result 1 of instruction 3).
static std::string valueRef(const mwplan::ValueRef &r) {
  if (r.instruction() < 0)
    return "in" + std::to_string(r.index());
  return "%" + std::to_string(r.instruction()) + "#" +
         std::to_string(r.index());
}

/// A fused kernel's program: one line per instruction.
static void writeProgram(llvm::json::OStream &j,
                         const mwplan::FusedProgram &p) {
  j.attribute("version", p.version());
  j.attributeArray("instructions", [&] {
    if (!p.instructions())
      return;
    for (const mwplan::Instruction *in : *p.instructions())
      oneLine(j, [&](llvm::json::OStream &l) {
        l.object([&] {
          l.attribute("op", in->op()->str());
          l.attributeArray("operands", [&] {
            if (in->operands())
              for (const mwplan::ValueRef *r : *in->operands())
                l.value(valueRef(*r));
          });
          l.attributeArray("results", [&] {
            for (size_t r = 0; in->result_dtypes() &&
                               r < in->result_dtypes()->size();
                 ++r)
              l.object([&] {
                l.attribute("dtype", dtypeName(in->result_dtypes()->Get(r)));
                l.attributeArray("shape", [&] {
                  if (in->result_shapes() && r < in->result_shapes()->size())
                    writeValues(l, in->result_shapes()->Get(r)->dims());
                });
              });
          });
          if (in->attrs() && in->attrs()->size())
            l.attributeArray("attrs", [&] {
              for (const mwplan::Attr *a : *in->attrs())
                writeAttr(l, *a);
            });
        });
      });
  });
  j.attributeArray("yields", [&] {
    if (p.yields())
      for (const mwplan::ValueRef *r : *p.yields())
        j.value(valueRef(*r));
  });
}

void mw::writePlanJson(const mwplan::Plan &plan, raw_ostream &os) {
  llvm::json::OStream j(os, /*IndentSize=*/2);
  auto list = [&](StringRef key, const auto *items, auto write) {
    j.attributeArray(key, [&] {
      if (items)
        for (const auto *item : *items)
          write(*item);
    });
  };
  auto operands = [&](StringRef key, const auto *items) {
    list(key, items, [&](const mwplan::Operand &o) {
      oneLine(j, [&](llvm::json::OStream &l) { writeOperand(l, plan, o); });
    });
  };
  j.object([&] {
    j.attribute("version", plan.version());
    j.attribute("function", plan.function() ? plan.function()->str() : "");
    j.attribute("arena_size", plan.arena_size());
    j.attribute("arena_alignment", plan.arena_alignment());
    j.attribute("lower_bound", plan.lower_bound());
    if (plan.peak_budget())
      j.attribute("peak_budget", plan.peak_budget());
    if (plan.ranks() != 1)
      j.attribute("ranks", plan.ranks());
    // --mw-offload's settings, for a plan that streams weights.
    bool offloads = false;
    if (plan.persistents())
      for (const mwplan::Persistent *p : *plan.persistents())
        offloads |= p->placement() != mwplan::Placement::Device;
    if (offloads || plan.offload_prefetch() ||
        (plan.offload_path() && plan.offload_path()->size())) {
      j.attribute("offload_path",
                  plan.offload_path() ? plan.offload_path()->str() : "");
      j.attribute("offload_prefetch", plan.offload_prefetch());
    }
    list("persistents", plan.persistents(), [&](const mwplan::Persistent &p) {
      oneLine(j, [&](llvm::json::OStream &l) {
        l.object([&] {
          l.attribute("name", p.name()->str());
          l.attribute("dtype", dtypeName(p.dtype()));
          l.attributeArray("shape", [&] { writeValues(l, p.shape()); });
          l.attribute("role", roleName(p.role()));
          l.attribute("argument", p.argument());
          if (p.split_batch())
            l.attribute("split_batch", true);
          if (p.placement() != mwplan::Placement::Device)
            l.attribute("placement", placementName(p.placement()));
          if (p.shard() && p.shard()->size())
            l.attributeArray("shard", [&] {
              for (const mwplan::ShardMember *m : *p.shard())
                l.object([&] {
                  l.attribute("source", m->source()->str());
                  l.attributeArray("shape", [&] { writeValues(l, m->shape()); });
                });
            });
        });
      });
    });
    list("kernels", plan.kernels(), [&](const mwplan::Kernel &k) {
      j.object([&] {
        j.attribute("op", k.op()->str());
        j.attribute("loc", k.loc() ? k.loc()->str() : "");
        list("attrs", k.attrs(), [&](const mwplan::Attr &a) {
          oneLine(j, [&](llvm::json::OStream &l) { writeAttr(l, a); });
        });
        operands("ins", k.ins());
        operands("outs", k.outs());
        if (const mwplan::FusedProgram *p = k.program())
          j.attributeObject("program", [&] { writeProgram(j, *p); });
      });
    });
    list("results", plan.results(), [&](const mwplan::Result &r) {
      oneLine(j, [&](llvm::json::OStream &l) {
        l.object([&] {
          l.attribute("name", r.name()->str());
          l.attribute("role", roleName(r.role()));
          l.attributeBegin("value");
          writeOperand(l, plan, *r.value());
          l.attributeEnd();
        });
      });
    });
    // The arena's buffers, by index (operands name them as "buffer").
    if (plan.arena_buffers() && plan.arena_buffers()->size())
      list("arena_buffers", plan.arena_buffers(),
           [&](const mwplan::ArenaBuffer &b) {
             oneLine(j, [&](llvm::json::OStream &l) {
               l.object([&] {
                 l.attribute("offset", static_cast<int64_t>(b.offset()));
                 l.attribute("size", static_cast<int64_t>(b.size()));
               });
             });
           });
  });
  os << "\n";
}
