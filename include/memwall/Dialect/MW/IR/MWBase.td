//===- MWBase.td - The mw dialect, its attributes and types --*- tablegen -*-===//
//
// The mw dialect is Memwall's graph-level dialect: ops with value semantics on
// static-shape builtin tensors, like TOSA or StableHLO, covering the forward
// and backward passes of transformers and MLPs and optimizer updates.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWBASE_TD
#define MEMWALL_DIALECT_MW_IR_MWBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def MW_Dialect : Dialect {
  let name = "mw";
  let cppNamespace = "::mlir::mw";
  let summary = "Memwall's graph-level dialect for training and inference steps";
  let description = [{
    Ops with value semantics on statically shaped builtin tensors (f32, f16,
    bf16; i32 and i64 for indices and labels; i8 and f8E4M3FN for quantized
    KV caches, in the cache ops only). A model step is a `func.func`
    whose arguments and results carry a role (`mw.role = #mw.role<param>`) and
    optionally a stable name (`mw.name = "h.0.attn.c_attn.weight"`). An op
    may carry the discardable attribute `mw.layer = "h.0.attn"`, the module
    path of the layer it belongs to (mw-models and `--mw-autodiff` set it;
    passes that need the layer structure read it before the op's location,
    and it survives printing without debug info).

    Every op has a verifier, a cost (`CostOpInterface`: FLOPs and bytes read and
    written), reference semantics in `mw-eval`, and is designed so that
    bufferization can give it a destination-passing form on memrefs.

    ```mlir
    func.func @forward(%w: tensor<64x256xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                       %x: tensor<32x64xf32> {mw.role = #mw.role<input>, mw.name = "x"})
        -> (tensor<32x256xf32> {mw.role = #mw.role<output>, mw.name = "y"}) {
      %y = mw.matmul %x, %w : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
      return %y : tensor<32x256xf32>
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Names of the discardable attributes the dialect verifies on function
    /// arguments and results.
    static constexpr ::llvm::StringLiteral kRoleAttrName = "mw.role";
    static constexpr ::llvm::StringLiteral kNameAttrName = "mw.name";
    /// On a ZeRO step's sharded argument or result (--mw-zero): which
    /// parameters' elements its rank-local piece holds (docs/zero.md).
    static constexpr ::llvm::StringLiteral kShardAttrName = "mw.shard";
    /// On an offloaded parameter (--mw-offload): "cpu" (host memory) or
    /// "nvme" (a weights file); only mw.fetch reads it (docs/offload.md). On
    /// the function: the offload's settings, a dictionary.
    static constexpr ::llvm::StringLiteral kOffloadAttrName = "mw.offload";
  }];
}

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def MW_RoleParam : I32EnumAttrCase<"param", 0>;
def MW_RoleInput : I32EnumAttrCase<"input", 1>;
def MW_RoleLabel : I32EnumAttrCase<"label", 2>;
def MW_RoleOptimizerState : I32EnumAttrCase<"optimizer_state", 3>;
def MW_RoleGrad : I32EnumAttrCase<"grad", 4>;
def MW_RoleOutput : I32EnumAttrCase<"output", 5>;
def MW_RoleKvCache : I32EnumAttrCase<"kv_cache", 6>;

def MW_RoleEnum : I32EnumAttr<"Role",
    "role of a step's argument or result",
    [MW_RoleParam, MW_RoleInput, MW_RoleLabel, MW_RoleOptimizerState,
     MW_RoleGrad, MW_RoleOutput, MW_RoleKvCache]> {
  let cppNamespace = "::mlir::mw";
  let genSpecializedAttr = 0;
}

def MW_RoleAttr : EnumAttr<MW_Dialect, MW_RoleEnum, "role"> {
  let summary = "role of a function argument or result";
  let description = [{
    What a step's argument or result is: `param` (weights, persistent),
    `input` and `label` (the batch), `optimizer_state` (persistent), `grad`
    and `output`. Roles drive ZeRO sharding and persistent-versus-transient
    memory planning. `kv_cache` is an inference step's paged KV cache
    (docs/inference.md): persistent state like `optimizer_state`, allocated
    once and zero-initialized by the runtime, never read from a weights file.
    Arguments may be `param`, `input`, `label`, `optimizer_state`, `grad` or
    `kv_cache`; results may be `output`, `grad`, `param` (an updated
    parameter), `optimizer_state` (updated state) or `kv_cache` (the updated
    cache, named like the cache argument it replaces).
  }];
  let assemblyFormat = "`<` $value `>`";
}

def MW_GeluErf : I32EnumAttrCase<"erf", 0>;
def MW_GeluTanh : I32EnumAttrCase<"tanh", 1>;
def MW_GeluApproximationEnum : I32EnumAttr<"GeluApproximation",
    "form of the GELU function", [MW_GeluErf, MW_GeluTanh]> {
  let cppNamespace = "::mlir::mw";
  let genSpecializedAttr = 0;
}
def MW_GeluApproximationAttr : EnumAttr<MW_Dialect, MW_GeluApproximationEnum,
                                        "gelu_approximation"> {
  let summary = "erf (exact) or tanh (GPT-2's approximation) form of GELU";
  let assemblyFormat = "`<` $value `>`";
}

def MW_FusionLoop : I32EnumAttrCase<"loop", 0>;
def MW_FusionRow : I32EnumAttrCase<"row", 1>;
def MW_FusionMatmul : I32EnumAttrCase<"matmul", 2>;
def MW_FusionHorizontal : I32EnumAttrCase<"horizontal", 3>;
def MW_FusionKindEnum : I32EnumAttr<"FusionKind",
    "the kind of fused kernel an mw.fusion is",
    [MW_FusionLoop, MW_FusionRow, MW_FusionMatmul, MW_FusionHorizontal]> {
  let cppNamespace = "::mlir::mw";
  let genSpecializedAttr = 0;
}
def MW_FusionKindAttr : EnumAttr<MW_Dialect, MW_FusionKindEnum, "fusion_kind"> {
  let summary = "loop, row, matmul or horizontal (docs/fusion.md)";
  // `#mw.fusion_kind<row>` on its own (the generic form, bytecode's text
  // entries); mw.fusion prints the bare keyword (custom<FusionKind>).
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def MW_FloatElement : AnyTypeOf<[F32, F16, BF16]>;
def MW_IntElement : AnyTypeOf<[I32, I64]>;

def MW_Tensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;
/// The element types of a KV cache (mw.kv_cache_write, mw.paged_attention):
/// the float types, and the quantized i8 and f8E4M3FN, which only these ops
/// and mw.kernel accept.
def MW_KvCacheTensor : RankedTensorOf<[F32, F16, BF16, I8, F8E4M3FN]>;
/// Any tensor an mw op takes, KV caches included (mw.kernel, mw.yield).
def MW_AnyTensor : RankedTensorOf<[F32, F16, BF16, I32, I64, I8, F8E4M3FN]>;
def MW_I32Tensor : RankedTensorOf<[I32]>;
def MW_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def MW_IndexTensor : RankedTensorOf<[I32, I64]>;
def MW_F32Tensor : RankedTensorOf<[F32]>;
def MW_ScalarF32Tensor : 0DTensorOf<[F32]>;
def MW_ScalarI64Tensor : 0DTensorOf<[I64]>;
def MW_StepTensor : 0DTensorOf<[F32, I32, I64]>;
/// An operand of mw.kernel: a tensor before bufferization, a memref after.
def MW_TensorOrMemRef : AnyTypeOf<[MW_AnyTensor,
    MemRefOf<[F32, F16, BF16, I32, I64, I8, F8E4M3FN]>]>;

#endif // MEMWALL_DIALECT_MW_IR_MWBASE_TD
