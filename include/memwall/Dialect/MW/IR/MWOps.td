//===- MWOps.td - Ops of the mw dialect ----------------------*- tablegen -*-===//
//
// The ops of Memwall's graph-level dialect: value semantics on statically
// shaped tensors. Each op verifies its shapes, element types and attribute
// ranges, and reports its cost through CostOpInterface. Shape conventions
// follow NumPy/PyTorch: broadcasting aligns trailing dimensions; matmul treats
// the two trailing dimensions as the matrix and the rest as broadcast batch
// dimensions; axes are non-negative and strictly increasing.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_IR_MWOPS_TD
#define MEMWALL_DIALECT_MW_IR_MWOPS_TD

include "memwall/Dialect/MW/IR/MWBase.td"
include "memwall/Dialect/MW/IR/MWInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"

/// Every operand and result has a static shape (DESIGN.md decision 1).
def MW_StaticShapes : NativeOpTrait<"StaticShapes"> {
  let cppNamespace = "::mlir::mw::OpTrait";
}

/// The op's results may be written into the buffers of its operands.
/// `MW_ElementwiseInPlace`: each result into the first operand of its type
/// (what --mw-form-kernels chooses as the destination, and what the runtime
/// allows); `MW_TiedResults<"0, 2">`: result i into operand i-th of the list;
/// `MW_MayComputeInPlace`: the runtime's kernel tolerates a result that is
/// exactly an operand, but the compiler does not choose it; `MW_ViewOfOperand`:
/// the result may be the operand's own contiguous buffer (reshape).
def MW_ElementwiseInPlaceTrait : NativeOpTrait<"ElementwiseInPlace"> {
  let cppNamespace = "::mlir::mw::OpTrait";
}
def MW_ElementwiseInPlace
    : TraitList<[MW_ElementwiseInPlaceTrait, MW_InPlaceOpInterface]>;
class MW_TiedResultsTrait<string operands>
    : ParamNativeOpTrait<"TiedResults", operands> {
  let cppNamespace = "::mlir::mw::OpTrait";
}
class MW_TiedResults<string operands>
    : TraitList<[MW_TiedResultsTrait<operands>, MW_InPlaceOpInterface]>;
def MW_MayComputeInPlace : NativeOpTrait<"MayComputeInPlace"> {
  let cppNamespace = "::mlir::mw::OpTrait";
}
def MW_ViewOfOperand : NativeOpTrait<"ViewOfOperand"> {
  let cppNamespace = "::mlir::mw::OpTrait";
}

class MW_Op<string mnemonic, list<Trait> traits = []>
    : Op<MW_Dialect, mnemonic,
         !listconcat(traits, [Pure, MW_StaticShapes, MW_CostOpInterface])> {
  /// The runtime kernel that executes the op: run<runtimeKernel> in
  /// runtime/src/cpu, and the CUDA backend's case of the same name. Every op
  /// names one; mw-tblgen -gen-mwrt-op-table writes it into the runtime's op
  /// table (runtime/include/mwrt/op_table.h).
  string runtimeKernel = "";
  /// For an elementwise op: the function of runtime/include/mwrt/formulas.h
  /// that computes one element from one element of each operand and the op's
  /// attributes (in ODS order). The evaluator and both runtime backends call
  /// it through the generated op table, so an elementwise op needs no
  /// hand-written kernel anywhere.
  string formula = "";
}

/// An elementwise op: FLOPs are a fixed count per result element.
class MW_ElementwiseCost<int flopsPerElement> {
  code costDecl = [{
    int64_t getFlops() {
      return }] # flopsPerElement # [{ *
             ::mlir::mw::detail::numElements(getOperation()->getResult(0).getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def MW_ConstantOp : MW_Op<"constant", [ConstantLike]> {
  let runtimeKernel = "Constant";
  let summary = "a tensor constant";
  let description = [{
    A tensor whose value is given by an elements attribute (dense or
    dense_resource). The result type is the attribute's type.

    ```mlir
    %c = mw.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs MW_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead() { return 0; }
  }];
}

def MW_SplatOp : MW_Op<"splat", []> {
  let runtimeKernel = "Splat";
  let summary = "a tensor filled with one scalar";
  let description = [{
    A tensor of the result type whose every element is `value`. For integer
    element types the value must be integral.

    ```mlir
    %zeros = mw.splat 0.0 : tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops with broadcasting
//===----------------------------------------------------------------------===//

class MW_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : MW_Op<mnemonic, !listconcat(traits, [MW_ElementwiseInPlace, DeclareOpInterfaceMethods<MW_GradientOpInterface>])> {
  let runtimeKernel = "Elementwise";
  let formula = mnemonic;
  let summary = "elementwise " # what # " with NumPy broadcasting";
  let description = [{
    Elementwise }] # what # [{ of two tensors of the same element type.
    Shapes broadcast as in NumPy: trailing dimensions are aligned, and each
    pair must be equal or contain a 1. The result has the broadcast shape.

    ```mlir
    %r = mw.}] # mnemonic # [{ %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$lhs, MW_Tensor:$rhs);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            ::mlir::mw::inferBroadcastType(lhs.getType(), rhs.getType()),
            lhs, rhs);
    }]>
  ];
  let extraClassDeclaration = MW_ElementwiseCost<1>.costDecl;
}

def MW_AddOp : MW_BinaryOp<"add", "addition", [Commutative]>;
def MW_SubOp : MW_BinaryOp<"sub", "subtraction">;
def MW_MulOp : MW_BinaryOp<"mul", "multiplication", [Commutative]>;
def MW_DivOp : MW_BinaryOp<"div", "division (truncating for integers)">;
def MW_MaximumOp : MW_BinaryOp<"maximum", "maximum", [Commutative]>;

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class MW_UnaryOp<string mnemonic, string what, int flops,
                 list<Trait> traits = []>
    : MW_Op<mnemonic, !listconcat(traits, [MW_ElementwiseInPlace, SameOperandsAndResultType, DeclareOpInterfaceMethods<MW_GradientOpInterface>])> {
  let runtimeKernel = "Elementwise";
  let formula = mnemonic;
  let summary = "elementwise " # what;
  let description = [{
    Elementwise }] # what # [{ of a floating-point tensor; the result has the
    operand's type. Cost: }] # flops # [{ FLOP(s) per element.

    ```mlir
    %r = mw.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = MW_ElementwiseCost<flops>.costDecl;
}

def MW_NegOp : MW_UnaryOp<"neg", "negation, -x", 1> {
  let arguments = (ins MW_Tensor:$input);
  let results = (outs MW_Tensor:$result);
}
def MW_ExpOp : MW_UnaryOp<"exp", "exponential, e^x", 1>;
def MW_LogOp : MW_UnaryOp<"log", "natural logarithm, ln(x)", 1>;
def MW_TanhOp : MW_UnaryOp<"tanh", "hyperbolic tangent", 1>;
def MW_SqrtOp : MW_UnaryOp<"sqrt", "square root", 1>;
def MW_RsqrtOp : MW_UnaryOp<"rsqrt", "reciprocal square root, 1/sqrt(x)", 1>;
def MW_ReciprocalOp : MW_UnaryOp<"reciprocal", "reciprocal, 1/x", 1>;
def MW_ReluOp : MW_UnaryOp<"relu", "rectified linear unit, max(x, 0)", 1>;
def MW_SigmoidOp : MW_UnaryOp<"sigmoid", "logistic sigmoid, 1/(1+e^-x)", 3>;
def MW_SiluOp : MW_UnaryOp<"silu", "SiLU (swish), x*sigmoid(x)", 4>;
def MW_ClampOp : MW_UnaryOp<"clamp", "clamping to [min, max]", 2> {
  let description = [{
    `min(max(x, min), max)`, elementwise, as `torch.clamp`: with `min > max`
    every element becomes `max`; a NaN stays NaN. Quantization clamps to the
    target type's range this way. Cost: 2 FLOPs per element.

    ```mlir
    %r = mw.clamp %x {min = -1.0, max = 1.0} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, F64Attr:$min, F64Attr:$max);
}

def MW_GeluOp : MW_Op<"gelu", [MW_ElementwiseInPlace, SameOperandsAndResultType, DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Elementwise";
  let formula = "gelu";
  let summary = "elementwise GELU, exact (erf) or tanh-approximated";
  let description = [{
    `x * Phi(x)`. With `approximate = #mw.gelu_approximation<tanh>` it is
    GPT-2's `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`; the default is
    the exact erf form `0.5 x (1 + erf(x / sqrt(2)))`. Cost: 8 FLOPs per
    element.

    ```mlir
    %r = mw.gelu %x {approximate = #mw.gelu_approximation<tanh>} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input,
                   DefaultValuedAttr<MW_GeluApproximationAttr,
                                     "GeluApproximation::erf">:$approximate);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = MW_ElementwiseCost<8>.costDecl;
}

def MW_CastOp : MW_Op<"cast", [MW_MayComputeInPlace, SameOperandsAndResultShape, DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Cast";
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest even, float to integer truncates toward zero, integer to float
    rounds to nearest. The shape is unchanged.

    ```mlir
    %h = mw.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins MW_Tensor:$input);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def MW_MatmulOp : MW_Op<"matmul", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Matmul";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transposeLhs,
                   CArg<"bool", "false">:$transposeRhs), [{
      build($_builder, $_state,
            ::mlir::mw::inferMatmulType(lhs.getType(), rhs.getType(),
                                        transposeLhs, transposeRhs),
            lhs, rhs, transposeLhs, transposeRhs);
    }]>
  ];
  let summary = "batched matrix multiplication with optional transposes";
  let description = [{
    `result[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n]`, where the two
    trailing dimensions of each operand form the matrix (after swapping them
    when `transpose_lhs` / `transpose_rhs` is set) and the leading batch
    dimensions broadcast as in NumPy. Both operands have rank >= 2 and the same
    element type, which the result also has; f16 and bf16 accumulate in f32.
    Cost: 2*M*N*K FLOPs per batch element.

    ```mlir
    %y = mw.matmul %x, %w {transpose_rhs} : (tensor<8x32x64xbf16>, tensor<256x64xbf16>) -> tensor<8x32x256xbf16>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$lhs, MW_FloatTensor:$rhs,
                   UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class MW_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : MW_Op<mnemonic, !listconcat(traits, [DeclareOpInterfaceMethods<MW_GradientOpInterface>])> {
  let runtimeKernel = "Reduce";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$axes,
                   CArg<"bool", "false">:$keepdims), [{
      build($_builder, $_state,
            ::mlir::mw::inferReduceType(input.getType(), axes, keepdims),
            input, axes, keepdims);
    }]>
  ];
  let summary = what # " over the given axes";
  let description = [{
    The }] # what # [{ of the input over `axes` (non-negative, strictly
    increasing). With `keepdims` the reduced dimensions stay with size 1,
    otherwise they are removed; reducing every axis without `keepdims` gives a
    rank-0 tensor.

    ```mlir
    %s = mw.}] # mnemonic # [{ %x axes = [1] {keepdims} : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return ::mlir::mw::detail::numElements(getInput().getType());
    }
  }];
}

def MW_ReduceSumOp : MW_ReduceOp<"reduce_sum", "sum">;
def MW_ReduceMaxOp : MW_ReduceOp<"reduce_max", "maximum">;
def MW_ReduceMeanOp : MW_ReduceOp<"reduce_mean", "arithmetic mean"> {
  let arguments = (ins MW_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs MW_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Normalizations and activations over an axis
//===----------------------------------------------------------------------===//

class MW_SoftmaxLikeOp<string mnemonic, string what, string expr>
    : MW_Op<mnemonic, [MW_MayComputeInPlace, SameOperandsAndResultType, DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Softmax";
  let summary = what # " along one axis";
  let description = [{
    `}] # expr # [{` along `axis`, computed stably (the maximum is
    subtracted first). Cost: 5 FLOPs per element.

    ```mlir
    %p = mw.}] # mnemonic # [{ %x axis = 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, I64Attr:$axis);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<5>.costDecl;
}

def MW_SoftmaxOp : MW_SoftmaxLikeOp<"softmax", "softmax",
                                    "exp(x_i) / sum_j exp(x_j)">;
def MW_LogSoftmaxOp : MW_SoftmaxLikeOp<"log_softmax", "log-softmax",
                                       "x_i - log(sum_j exp(x_j))">;

def MW_LayerNormOp : MW_Op<"layer_norm", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "LayerNorm";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                   "::mlir::Value":$beta, CArg<"double", "1e-5">:$epsilon), [{
      auto x = ::llvm::cast<::mlir::RankedTensorType>(input.getType());
      auto stats = ::mlir::RankedTensorType::get(x.getShape().drop_back(),
                                                 $_builder.getF32Type());
      build($_builder, $_state, ::mlir::TypeRange{x, stats, stats}, input,
            gamma, beta, $_builder.getF64FloatAttr(epsilon));
    }]>
  ];
  let summary = "layer normalization over the last dimension";
  let description = [{
    `y = (x - mean) * rstd * gamma + beta` over the last dimension D, with
    `rstd = 1 / sqrt(var + epsilon)` (biased variance). `gamma` and `beta`
    have shape [D]. Also returns `mean` and `rstd` (shape of x without its last
    dimension, always f32) for the backward pass. Cost: 8 FLOPs per element.

    ```mlir
    %y, %mean, %rstd = mw.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
        : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$gamma,
                   MW_FloatTensor:$beta,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs MW_FloatTensor:$result, MW_F32Tensor:$mean,
                 MW_F32Tensor:$rstd);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<8>.costDecl;
}

def MW_RmsNormOp : MW_Op<"rms_norm", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "RmsNorm";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                   CArg<"double", "1e-6">:$epsilon), [{
      auto x = ::llvm::cast<::mlir::RankedTensorType>(input.getType());
      auto stats = ::mlir::RankedTensorType::get(x.getShape().drop_back(),
                                                 $_builder.getF32Type());
      build($_builder, $_state, ::mlir::TypeRange{x, stats}, input, gamma,
            $_builder.getF64FloatAttr(epsilon));
    }]>
  ];
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `y = x * rstd * gamma` over the last dimension D, with
    `rstd = 1 / sqrt(mean(x^2) + epsilon)` (Llama's RMSNorm). `gamma` has
    shape [D]. Also returns `rstd` (shape of x without its last dimension,
    always f32) for the backward pass. Cost: 6 FLOPs per element.

    ```mlir
    %y, %rstd = mw.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-6">:$epsilon);
  let results = (outs MW_FloatTensor:$result, MW_F32Tensor:$rstd);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<6>.costDecl;
}

//===----------------------------------------------------------------------===//
// Embedding, loss, attention
//===----------------------------------------------------------------------===//

def MW_EmbeddingOp : MW_Op<"embedding", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Embedding";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$table, "::mlir::Value":$indices), [{
      auto t = ::llvm::cast<::mlir::RankedTensorType>(table.getType());
      auto i = ::llvm::cast<::mlir::RankedTensorType>(indices.getType());
      ::llvm::SmallVector<int64_t> shape(i.getShape());
      shape.push_back(t.getShape()[1]);
      build($_builder, $_state,
            ::mlir::RankedTensorType::get(shape, t.getElementType()), table,
            indices);
    }]>
  ];
  let summary = "row gather from an embedding table";
  let description = [{
    `result[i..., :] = table[indices[i...], :]` for a table of shape [V, D]
    and integer indices of any shape; the result has shape
    `indices.shape + [D]` and the table's element type. Indices outside
    [0, V) are a run-time error in the evaluator and runtimes.

    ```mlir
    %e = mw.embedding %wte, %tokens : (tensor<256x64xf32>, tensor<2x32xi32>) -> tensor<2x32x64xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$table, MW_IndexTensor:$indices);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead();
  }];
}

def MW_CrossEntropyOp : MW_Op<"cross_entropy", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "CrossEntropy";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$logits, "::mlir::Value":$labels,
                   CArg<"int64_t", "-100">:$ignoreIndex), [{
      build($_builder, $_state,
            ::mlir::RankedTensorType::get({}, $_builder.getF32Type()), logits,
            labels, ignoreIndex, /*label_offset=*/nullptr);
    }]>
  ];
  let summary = "mean softmax cross-entropy with integer labels";
  let description = [{
    For logits of shape [..., C] and integer labels of shape [...]:
    `loss = mean over tokens t with labels[t] != ignore_index of
    (logsumexp(logits[t, :]) - logits[t, labels[t]])`, computed in f32 and
    returned as a rank-0 f32 tensor. When every label is ignored the loss is 0.
    Labels other than `ignore_index` must lie in [0, C).

    A chunk of a larger batch (`--mw-chunk-loss`): with `label_offset`, the
    logits are rank 2 ([n, C]), the labels rank 1 ([N], every label of the
    batch) and row t's label is `labels[label_offset + t]`
    (`label_offset + n <= N`). The sum runs over the chunk's rows and the
    mean's denominator counts the labels of the whole batch, so the chunks'
    results add up to the batch's mean.

    ```mlir
    %loss = mw.cross_entropy %logits, %labels : (tensor<64x256xf32>, tensor<64xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$logits, MW_IndexTensor:$labels,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                   OptionalAttr<I64Attr>:$label_offset);
  let results = (outs MW_ScalarF32Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return 5 * ::mlir::mw::detail::numElements(getLogits().getType());
    }
  }];
}

def MW_AttentionOp : MW_Op<"attention", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Attention";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, CArg<"bool", "false">:$causal), [{
      auto q = ::llvm::cast<::mlir::RankedTensorType>(query.getType());
      auto v = ::llvm::cast<::mlir::RankedTensorType>(value.getType());
      ::llvm::ArrayRef<int64_t> qs = q.getShape();
      auto out = ::mlir::RankedTensorType::get(
          {qs[0], qs[1], qs[2], v.getShape()[3]}, q.getElementType());
      auto lse = ::mlir::RankedTensorType::get({qs[0], qs[1], qs[2]},
                                               $_builder.getF32Type());
      build($_builder, $_state, ::mlir::TypeRange{out, lse}, query, key, value,
            causal, /*scale=*/nullptr);
    }]>
  ];
  let summary = "scaled dot-product attention over heads";
  let description = [{
    For query [B, H, S, D], key [B, H, Sk, D] and value [B, H, Sk, Dv]:
    `P = softmax(scale * Q K^T + mask)` and `out = P V` of shape [B, H, S, Dv].
    `scale` defaults to `1/sqrt(D)`. With `causal`, query position i attends to
    key positions j <= i (top-left aligned). Also returns `lse`, the
    log-sum-exp of each scaled score row ([B, H, S], f32), so the backward pass
    needs no S x Sk matrix. Cost: 4*B*H*S*Sk*D (2*B*H*S*Sk*(D+Dv) in general)
    plus 5 per score for the softmax, halved (S*(S+1)/2 scores) when causal and
    S == Sk.

    ```mlir
    %o, %lse = mw.attention %q, %k, %v {causal}
        : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>)
        -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$query, MW_FloatTensor:$key,
                   MW_FloatTensor:$value, UnitAttr:$causal,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs MW_FloatTensor:$result, MW_F32Tensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
    /// The scale applied to Q K^T: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
  }];
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def MW_ReshapeOp : MW_Op<"reshape", [MW_ViewOfOperand, DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Reshape";
  let summary = "reinterpretation of a tensor's shape";
  let description = [{
    The same elements in row-major order under a new static shape with the
    same element count and type. After bufferization it is a view, so its cost
    is zero.

    ```mlir
    %r = mw.reshape %x : tensor<2x32x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead() { return 0; }
    int64_t getBytesWritten() { return 0; }
  }];
}

def MW_TransposeOp : MW_Op<"transpose", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Transpose";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$permutation), [{
      build($_builder, $_state,
            ::mlir::mw::inferTransposeType(input.getType(), permutation),
            input, permutation);
    }]>
  ];
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension d is input dimension `permutation[d]`:
    `result[j] = input[k]` where `k[permutation[d]] = j[d]`.

    ```mlir
    %t = mw.transpose %x permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32> -> tensor<2x4x32x16xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $input `permutation` `=` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

def MW_BroadcastToOp : MW_Op<"broadcast_to", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "BroadcastTo";
  let summary = "NumPy broadcast to a larger shape";
  let description = [{
    Broadcasts the input to the result shape: trailing dimensions are aligned,
    each input dimension equals the result's or is 1, and missing leading
    dimensions are added.

    ```mlir
    %b = mw.broadcast_to %bias : tensor<64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

def MW_SliceOp : MW_Op<"slice", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Slice";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$offsets,
                   "::llvm::ArrayRef<int64_t>":$sizes), [{
      auto t = ::llvm::cast<::mlir::RankedTensorType>(input.getType());
      build($_builder, $_state,
            ::mlir::RankedTensorType::get(sizes, t.getElementType()), input,
            offsets, sizes, /*strides=*/nullptr);
    }]>
  ];
  let summary = "static strided slice";
  let description = [{
    `result[i...] = input[offsets + i * strides]` with result shape `sizes`.
    `strides` defaults to all ones. Every selected index lies inside the input.

    ```mlir
    %q = mw.slice %qkv offsets = [0, 0, 0] sizes = [2, 32, 64] : tensor<2x32x192xf32> -> tensor<2x32x64xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes (`strides` `=` $strides^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead() {
      return ::mlir::mw::detail::sumTensorBytes(getOperation()->getResultTypes());
    }
    /// The strides, or all ones when the attribute is absent.
    ::llvm::SmallVector<int64_t> getStridesOrDefault();
  }];
}

def MW_ConcatOp : MW_Op<"concat", [DeclareOpInterfaceMethods<MW_GradientOpInterface>]> {
  let runtimeKernel = "Concat";
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$inputs, "int64_t":$axis), [{
      auto first = ::llvm::cast<::mlir::RankedTensorType>(inputs.front().getType());
      ::llvm::SmallVector<int64_t> shape(first.getShape());
      shape[axis] = 0;
      for (::mlir::Value in : inputs)
        shape[axis] +=
            ::llvm::cast<::mlir::RankedTensorType>(in.getType()).getShape()[axis];
      build($_builder, $_state,
            ::mlir::RankedTensorType::get(shape, first.getElementType()), inputs,
            axis);
    }]>
  ];
  let summary = "concatenation along one axis";
  let description = [{
    Joins one or more tensors of equal rank and element type along `axis`;
    all other dimensions must agree.

    ```mlir
    %c = mw.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Variadic<MW_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

class MW_ActivationGradOp<string mnemonic, string fwd, int flops>
    : MW_Op<mnemonic, [MW_ElementwiseInPlace, SameOperandsAndResultType]> {
  let runtimeKernel = "Elementwise";
  let formula = fwd # "Grad";
  let summary = "gradient of " # fwd;
  let description = [{
    `grad_input = grad_output * }] # fwd # [{'(input)`, elementwise, given the
    forward op's input. Cost: }] # flops # [{ FLOPs per element.

    ```mlir
    %dx = mw.}] # mnemonic # [{ %x, %dy : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$grad_output);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad_output attr-dict `:` type($input)";
  let extraClassDeclaration = MW_ElementwiseCost<flops>.costDecl;
}

def MW_ReluGradOp : MW_ActivationGradOp<"relu_grad", "relu", 1>;
def MW_SiluGradOp : MW_ActivationGradOp<"silu_grad", "silu", 6>;
def MW_GeluGradOp : MW_ActivationGradOp<"gelu_grad", "gelu", 12> {
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$grad_output,
                   DefaultValuedAttr<MW_GeluApproximationAttr,
                                     "GeluApproximation::erf">:$approximate);
}
def MW_ClampGradOp : MW_ActivationGradOp<"clamp_grad", "clamp", 1> {
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$grad_output,
                   F64Attr:$min, F64Attr:$max);
}

class MW_SoftmaxLikeGradOp<string mnemonic, string fwd, string expr>
    : MW_Op<mnemonic, [MW_MayComputeInPlace, SameOperandsAndResultType]> {
  let runtimeKernel = "SoftmaxGrad";
  let summary = "gradient of " # fwd # " given its output";
  let description = [{
    `}] # expr # [{` along `axis`, where `y` is the forward op's output and
    `dy` the gradient of its output. Cost: 3 FLOPs per element.

    ```mlir
    %dx = mw.}] # mnemonic # [{ %y, %dy axis = 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$output, MW_FloatTensor:$grad_output,
                   I64Attr:$axis);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $output `,` $grad_output `axis` `=` $axis attr-dict `:` type($output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<3>.costDecl;
}

def MW_SoftmaxGradOp : MW_SoftmaxLikeGradOp<"softmax_grad", "softmax",
    "dx = y * (dy - sum(dy * y))">;
def MW_LogSoftmaxGradOp : MW_SoftmaxLikeGradOp<"log_softmax_grad",
    "log_softmax", "dx = dy - exp(y) * sum(dy)">;

def MW_ReduceMaxGradOp : MW_Op<"reduce_max_grad", []> {
  let runtimeKernel = "ReduceMaxGrad";
  let summary = "gradient of reduce_max";
  let description = [{
    Routes `grad_output` to the input elements equal to the maximum of their
    reduction group, split evenly among ties (PyTorch's `amax` rule). `output`
    and `grad_output` have the forward result's shape; `axes` and `keepdims`
    are the forward op's. Cost: 2 FLOPs per input element.

    ```mlir
    %dx = mw.reduce_max_grad %x, %m, %dm axes = [1]
        : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$output,
                   MW_FloatTensor:$grad_output, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output `,` $grad_output `axes` `=` $axes attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<2>.costDecl;
}

def MW_LayerNormGradOp : MW_Op<"layer_norm_grad", []> {
  let runtimeKernel = "LayerNormGrad";
  let summary = "gradient of layer_norm";
  let description = [{
    Given the forward input, `gamma`, the saved `mean` and `rstd`, and the
    gradient of the output, returns the gradients of the input, `gamma` and
    `beta`. Cost: 12 FLOPs per input element.

    ```mlir
    %dx, %dg, %db = mw.layer_norm_grad %x, %g, %mean, %rstd, %dy
        : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
        -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$gamma,
                   MW_F32Tensor:$mean, MW_F32Tensor:$rstd,
                   MW_FloatTensor:$grad_output);
  let results = (outs MW_FloatTensor:$grad_input, MW_FloatTensor:$grad_gamma,
                 MW_FloatTensor:$grad_beta);
  let assemblyFormat = [{
    $input `,` $gamma `,` $mean `,` $rstd `,` $grad_output attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return 12 * ::mlir::mw::detail::numElements(getInput().getType());
    }
  }];
}

def MW_RmsNormGradOp : MW_Op<"rms_norm_grad", []> {
  let runtimeKernel = "RmsNormGrad";
  let summary = "gradient of rms_norm";
  let description = [{
    Given the forward input, `gamma`, the saved `rstd` and the gradient of the
    output, returns the gradients of the input and `gamma`. Cost: 9 FLOPs per
    input element.

    ```mlir
    %dx, %dg = mw.rms_norm_grad %x, %g, %rstd, %dy
        : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4x8xf32>)
        -> (tensor<4x8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$input, MW_FloatTensor:$gamma,
                   MW_F32Tensor:$rstd, MW_FloatTensor:$grad_output);
  let results = (outs MW_FloatTensor:$grad_input, MW_FloatTensor:$grad_gamma);
  let assemblyFormat = [{
    $input `,` $gamma `,` $rstd `,` $grad_output attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return 9 * ::mlir::mw::detail::numElements(getInput().getType());
    }
  }];
}

def MW_EmbeddingGradOp : MW_Op<"embedding_grad", []> {
  let runtimeKernel = "EmbeddingGrad";
  let summary = "gradient of embedding: scatter-add of rows";
  let description = [{
    `result[v, :] = sum over i with indices[i] == v of grad_output[i, :]`, a
    [V, D] tensor (V comes from the result type) that is zero in rows no index
    selects. Cost: 1 FLOP per element of `grad_output`.

    ```mlir
    %dwte = mw.embedding_grad %tokens, %de : (tensor<2x32xi32>, tensor<2x32x64xf32>) -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins MW_IndexTensor:$indices, MW_FloatTensor:$grad_output);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $grad_output attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return ::mlir::mw::detail::numElements(getGradOutput().getType());
    }
  }];
}

def MW_CrossEntropyGradOp : MW_Op<"cross_entropy_grad", [MW_TiedResults<"0">]> {
  let runtimeKernel = "CrossEntropy";
  let summary = "gradient of cross_entropy with respect to the logits";
  let description = [{
    `grad_logits[t, :] = grad_loss * (softmax(logits[t, :]) - onehot(labels[t])) / N`
    for tokens whose label is not `ignore_index` (N of them), and zero rows for
    ignored tokens. `grad_loss` is the rank-0 f32 gradient of the loss. With
    `label_offset`, the logits are a chunk of a larger batch whose labels
    are all given, as for `mw.cross_entropy`: N counts the whole batch's
    labels, so each row is the unchunked op's row bit for bit. Cost:
    5 FLOPs per logit. The result may be written into the logits' buffer
    (a training step's logits die here): every kernel reads a row's logits
    before writing that row. `--mw-form-kernels` chooses it when the logits'
    last use is this op.

    ```mlir
    %dlogits = mw.cross_entropy_grad %logits, %labels, %dloss
        : (tensor<64x256xf32>, tensor<64xi32>, tensor<f32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$logits, MW_IndexTensor:$labels,
                   MW_ScalarF32Tensor:$grad_loss,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                   OptionalAttr<I64Attr>:$label_offset);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad_loss attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = MW_ElementwiseCost<5>.costDecl;
}

def MW_AttentionGradOp : MW_Op<"attention_grad", []> {
  let runtimeKernel = "AttentionGrad";
  let summary = "gradient of attention";
  let description = [{
    Given the forward query, key, value, output and `lse`, and the gradient of
    the output, returns the gradients of query, key and value (FlashAttention's
    backward: the probabilities are recomputed from `lse`). `causal` and
    `scale` must match the forward op. Cost: 2.5x the forward matmul FLOPs
    plus the recomputed scores.

    ```mlir
    %dq, %dk, %dv = mw.attention_grad %q, %k, %v, %o, %lse, %do {causal}
        : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>,
           tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4x32x16xf32>)
        -> (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$query, MW_FloatTensor:$key,
                   MW_FloatTensor:$value, MW_FloatTensor:$output,
                   MW_F32Tensor:$lse, MW_FloatTensor:$grad_output,
                   UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs MW_FloatTensor:$grad_query, MW_FloatTensor:$grad_key,
                 MW_FloatTensor:$grad_value);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $lse `,` $grad_output attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
  }];
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def MW_AdamWOp : MW_Op<"adamw", [MW_TiedResults<"0, 2, 3">]> {
  let runtimeKernel = "AdamW";
  let summary = "AdamW update (PyTorch semantics)";
  let description = [{
    One AdamW step with decoupled weight decay and bias correction, as
    `torch.optim.AdamW`: with t = `step` (the 1-based count of this update),
    ```
    p  = p * (1 - lr * weight_decay)
    m  = beta1 * m + (1 - beta1) * g
    v  = beta2 * v + (1 - beta2) * g^2
    p  = p - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
    ```
    The parameter and both moments have one type (f32 master weights in mixed
    precision); the gradient has the same shape and any float type, and is
    read in f32. Returns the new parameter, first and second moments.
    Cost: 14 FLOPs per element.

    ```mlir
    %p1, %m1, %v1 = mw.adamw %p, %g, %m, %v, %t {lr = 1.0e-03 : f64}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i64>)
        -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$param, MW_FloatTensor:$grad,
                   MW_FloatTensor:$exp_avg, MW_FloatTensor:$exp_avg_sq,
                   MW_StepTensor:$step,
                   DefaultValuedAttr<F64Attr, "1e-3">:$lr,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                   DefaultValuedAttr<F64Attr, "1e-2">:$weight_decay);
  let results = (outs MW_FloatTensor:$new_param, MW_FloatTensor:$new_exp_avg,
                 MW_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() {
      return 14 * ::mlir::mw::detail::numElements(getParam().getType());
    }
  }];
}

def MW_SgdOp : MW_Op<"sgd", [MW_TiedResults<"0, 2">]> {
  let runtimeKernel = "Sgd";
  let summary = "SGD update with optional momentum (PyTorch semantics)";
  let description = [{
    One step of `torch.optim.SGD`: `g = grad + weight_decay * p`; with
    `momentum` != 0, `buf = momentum * buf + (1 - dampening) * g` and
    `g = nesterov ? g + momentum * buf : buf`; then `p = p - lr * g`.
    The momentum buffer is an operand and a result exactly when `momentum` is
    non-zero. On the first step PyTorch initializes the buffer to `g`; pass a
    zero buffer and `dampening = 0` to get the same result.
    Cost: 2 FLOPs per element, plus 2 for weight decay and 3 for momentum.

    ```mlir
    %p1, %b1 = mw.sgd %p, %g, %b {lr = 1.0e-02 : f64, momentum = 9.0e-01 : f64}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MW_FloatTensor:$param, MW_FloatTensor:$grad,
                   Optional<MW_FloatTensor>:$momentum_buffer,
                   F64Attr:$lr,
                   DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   UnitAttr:$nesterov);
  let results = (outs MW_FloatTensor:$new_param,
                 Optional<MW_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad (`,` $momentum_buffer^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
  }];
}

//===----------------------------------------------------------------------===//
// Mixed precision: overflow checks and dynamic loss scaling
//===----------------------------------------------------------------------===//

def MW_FoundInfOp : MW_Op<"found_inf", []> {
  let runtimeKernel = "FoundInf";
  let summary = "whether any element of the operands is inf or NaN";
  let description = [{
    A rank-0 f32 flag: 1.0 when some element of some operand is +inf, -inf
    or NaN, else 0.0. Takes one or more floating-point tensors of any shapes
    and float types. fp16 training checks the unscaled gradients with it:
    an overflowing step is skipped (`mw.select`) and the loss scale adapts
    (`mw.loss_scale_update`). Cost: 1 FLOP per input element.

    ```mlir
    %overflow = mw.found_inf %gw, %gb : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<MW_FloatTensor>:$inputs);
  let results = (outs MW_ScalarF32Tensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
  }];
}

def MW_SelectOp : MW_Op<"select", [MW_ElementwiseInPlace]> {
  let runtimeKernel = "Select";
  let summary = "one of two tensors, chosen by a scalar flag";
  let description = [{
    `condition != 0 ? true_value : false_value`, choosing whole tensors (not
    elementwise): the condition is a rank-0 f32 tensor such as the result of
    `mw.found_inf` (NaN counts as true, being != 0). The two values and the
    result have one type, any mw tensor type, integers included. fp16
    training uses it to keep the parameters and optimizer state of an
    overflowing step. Cost: 0 FLOPs.

    ```mlir
    %p2 = mw.select %overflow, %p, %p1 : (tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    ```
  }];
  let arguments = (ins MW_ScalarF32Tensor:$condition, MW_Tensor:$true_value,
                   MW_Tensor:$false_value);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
  }];
}

def MW_LossScaleUpdateOp : MW_Op<"loss_scale_update", [MW_TiedResults<"1, 2, 3, 4">]> {
  let runtimeKernel = "LossScaleUpdate";
  let summary = "one step of dynamic loss scaling (DeepSpeed's rules)";
  let description = [{
    Advances the state of dynamic loss scaling by one training step, given
    whether that step overflowed (`overflow` != 0, e.g. the result of
    `mw.found_inf`). With attributes `window` W, `hysteresis` H, `min_scale`
    and `factor`, exactly DeepSpeed's `DynamicLossScaler.update_scale` with
    `consecutive_hysteresis=False`:
    ```
    if overflow:
      if H == 1 or cur_hysteresis == 1:
        scale = max(scale / factor, min_scale)
      else:
        cur_hysteresis = cur_hysteresis - 1
      last_overflow = iter
    else if (iter - last_overflow) mod W == 0:
      cur_hysteresis = H
      scale = scale * factor
    iter = iter + 1
    ```
    and returns the new `scale`, `iter`, `last_overflow` and
    `cur_hysteresis`. A fresh state is `scale` = the initial scale
    (DeepSpeed's 2^16), `iter` = 0, `last_overflow` = -1 and
    `cur_hysteresis` = H. So with H = 2 the first overflow only uses up the
    hysteresis and the second halves the scale; every W-th consecutive step
    without overflow multiplies it by `factor` and restores the hysteresis.

    The scale is computed in f64 (as DeepSpeed's Python float) and rounded
    to f32, saturating at the largest finite f32 rather than becoming inf,
    which no later halving could undo. The counters are i64. Defaults are
    DeepSpeed's: W = 1000, H = 2, `min_scale` = 1, `factor` = 2; W and H
    are >= 1, `min_scale` > 0 and `factor` > 1. Cost: 4 FLOPs.

    ```mlir
    %scale1, %iter1, %last1, %hyst1 = mw.loss_scale_update %overflow, %scale, %iter, %last, %hyst {window = 100 : i64}
        : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
        -> (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i64>)
    ```
  }];
  let arguments = (ins MW_ScalarF32Tensor:$overflow, MW_ScalarF32Tensor:$scale,
                   MW_ScalarI64Tensor:$iter, MW_ScalarI64Tensor:$last_overflow,
                   MW_ScalarI64Tensor:$cur_hysteresis,
                   DefaultValuedAttr<I64Attr, "1000">:$window,
                   DefaultValuedAttr<I64Attr, "2">:$hysteresis,
                   DefaultValuedAttr<F64Attr, "1.0">:$min_scale,
                   DefaultValuedAttr<F64Attr, "2.0">:$factor);
  let results = (outs MW_ScalarF32Tensor:$new_scale,
                 MW_ScalarI64Tensor:$new_iter,
                 MW_ScalarI64Tensor:$new_last_overflow,
                 MW_ScalarI64Tensor:$new_hysteresis);
  let assemblyFormat = [{
    $overflow `,` $scale `,` $iter `,` $last_overflow `,` $cur_hysteresis
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 4; }
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def MW_WaitOp : MW_Op<"wait", [MW_ElementwiseInPlace,
                                AllTypesMatch<["input", "result"]>]> {
  let runtimeKernel = "Wait";
  let summary = "waits for an asynchronous collective or weight fetch";
  let description = [{
    The collectives of a ZeRO step are upstream `mesh` ops (`mesh.all_reduce`,
    `mesh.reduce_scatter`, `mesh.all_gather`) on tensors. When --mw-zero lets
    one overlap the compute that follows it (`overlap=on`), the collective is
    the start and `mw.wait` the completion: the result is the collective's
    result, available from here on. The collective's only use is the wait,
    so its buffer is live (in flight) from the collective to the wait and the
    static arena holds it there; the runtime starts the collective where it
    stands and blocks at the wait. Bufferized, the wait is in place: its
    result is the collective's buffer. No gradient: collectives are
    introduced after --mw-autodiff. Cost: 0 FLOPs, no bytes.

    The wait also completes an `mw.fetch` (--mw-offload, docs/offload.md):
    the copy of an offloaded weight into device memory, issued where the
    fetch stands; the wait stands right before the weight's first use.

    A collective in flight also still reads its operands (the engine sends
    them while the step goes on), so they are the wait's `reading` operands:
    they stay live, and their memory unreused, until the wait. Without them
    the arena could place the next buffers over a bucket being sent.

    ```mlir
    %g = mesh.all_gather %p on @dp mesh_axes = [0] gather_axis = 0
        : tensor<256xbf16> -> tensor<1024xbf16>
    // ... compute that does not need %g ...
    %w = mw.wait %g reading %p : tensor<1024xbf16>, tensor<256xbf16>
    ```
  }];
  let arguments = (ins MW_Tensor:$input, Variadic<MW_Tensor>:$reading);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = [{
    $input (`reading` $reading^)? attr-dict `:` type($input)
    (`,` type($reading)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead() { return 0; }
    int64_t getBytesWritten() { return 0; }
  }];
}

def MW_FetchOp : MW_Op<"fetch", [AllTypesMatch<["input", "result"]>]> {
  let runtimeKernel = "Fetch";
  let summary = "copies an offloaded weight from host memory or a file into device memory";
  let description = [{
    ZeRO-Inference weight offload (--mw-offload, docs/offload.md). `input`
    is a parameter whose storage is host memory (`mw.offload = "cpu"`) or a
    weights file (`mw.offload = "nvme"`), never device memory: the function
    argument carries `mw.offload`, and only `mw.fetch` may read it. The
    result is a copy of it in device memory (an arena slot after
    --mw-static-arena), the same type and the same values.

    The fetch is the start of the copy and `mw.wait` its completion, as for
    an asynchronous collective: the runtime issues the copy where the fetch
    stands and blocks at the wait, so the compute between them (the layers
    before the one the weight belongs to) hides it. The fetch's only uses are
    waits, so nothing reads the slot before the copy completes. `layer` is
    the layer the weight belongs to (the first all-digit component of its
    `mw.name`), for reports and the runtime's statistics.

    Bufferized (--mw-form-kernels), the fetch writes a buffer of its own and
    the wait is in place on it, so the buffer is live from the fetch to the
    weight's last use: with prefetch depth K the arena holds K+1 layers'
    weights at once.

    Cost: 0 FLOPs; 0 bytes read, because the source is host memory or a
    file, not the device memory the roofline's bytes measure; the tensor's
    bytes written (the device copy). No gradient: --mw-offload runs on
    inference steps (forward, prefill, decode), after --mw-autodiff would
    have run, and refuses training steps.

    ```mlir
    func.func @decode(%w: tensor<768x2304xf32> {mw.role = #mw.role<param>,
                                                mw.name = "h.3.attn.c_attn.weight",
                                                mw.offload = "cpu"}, ...) {
      %f = mw.fetch %w {layer = 3 : i64} : tensor<768x2304xf32>
      // ... layers 1 and 2 compute ...
      %x = mw.wait %f : tensor<768x2304xf32>
    ```
  }];
  let arguments = (ins MW_Tensor:$input, I64Attr:$layer);
  let results = (outs MW_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops() { return 0; }
    int64_t getBytesRead() { return 0; }
    int64_t getBytesWritten() {
      return ::mlir::mw::detail::tensorBytes(getResult().getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Inference: the paged KV cache (docs/inference.md)
//===----------------------------------------------------------------------===//

def MW_KvCacheWriteOp : MW_Op<"kv_cache_write", [MW_TiedResults<"0">,
    AllTypesMatch<["cache", "result"]>]> {
  let runtimeKernel = "KvCacheWrite";
  let summary = "scatters new tokens' keys or values into a paged KV cache";
  let description = [{
    One layer's key (or value) cache is `cache` [NB, BS, H, D]: NB blocks of
    BS token slots, H key/value heads of D elements. Slot `s` is token
    `s mod BS` of block `s / BS`. For each new token n of `values` [N, H, D]
    with `slot_mapping[n]` = s (i32, [N]):
    ```
    s == -1:              skipped (padding)
    0 <= s < NB * BS:     result[s / BS, s mod BS, h, d] = q(values[n, h, d])
    otherwise:            a run-time error naming n and s
    ```
    and every other slot keeps its value. Tokens are written in order n =
    0, 1, ..., so of two tokens with one slot the later wins. `q` stores in
    the cache's element type: a float cache (f32, f16, bf16) rounds to it
    (nearest even); an i8 cache stores `clamp(round(x / scale[h]), -127,
    127)` (ties to even; NaN as 0) and an f8E4M3FN cache `x / scale[h]`
    rounded to f8E4M3FN, saturating at +-448 (mwrt/formulas.h). `scale` is
    given exactly for the quantized caches: one positive finite f32 per head
    (size H) or one for the whole tensor (size 1); mw.paged_attention must
    dequantize with the same scales.

    The op updates the cache in place: the result is tied to `cache`
    (bufferization writes into the cache's buffer; a step returns it under
    the cache argument's `mw.name` with role `kv_cache`). The number of
    blocks NB enters only the bounds check, so a pass may resize the cache.
    No gradient: inference only (the cache is state, not a function of the
    parameters that training differentiates). Cost: 1 FLOP per element
    written into a quantized cache (the division), 0 otherwise; it reads
    `values` and `slot_mapping` and writes N*H*D cache elements, never the
    whole cache.

    ```mlir
    %k1 = mw.kv_cache_write %kcache, %k, %slots {scale = array<f32: 0.03, 0.05>}
        : (tensor<64x16x2x32xi8>, tensor<8x2x32xf32>, tensor<8xi32>) -> tensor<64x16x2x32xi8>
    ```
  }];
  let arguments = (ins MW_KvCacheTensor:$cache, MW_FloatTensor:$values,
                   MW_I32Tensor:$slot_mapping,
                   OptionalAttr<DenseF32ArrayAttr>:$scale);
  let results = (outs MW_KvCacheTensor:$result);
  let assemblyFormat = [{
    $cache `,` $values `,` $slot_mapping attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
    int64_t getBytesRead();
    int64_t getBytesWritten();
  }];
}

def MW_PagedAttentionOp : MW_Op<"paged_attention", [
    AllTypesMatch<["query", "result"]>, AllTypesMatch<["key_cache", "value_cache"]>]> {
  let runtimeKernel = "PagedAttention";
  let summary = "causal attention over keys and values in a paged KV cache";
  let description = [{
    Multi-head, grouped-query, causal attention of T new tokens per sequence
    to the sequence's whole context, read from the paged cache through its
    block table (vLLM's PagedAttention). `query` is [B, Hq, T, D]; the caches
    are [NB, BS, Hkv, D] (as mw.kv_cache_write writes them) with Hkv
    dividing Hq; `block_tables` [B, MB] and `context_lens` [B] are i32.

    Sequence b holds L = `context_lens[b]` tokens, the T new ones included
    (they are written into the cache first), 0 <= L <= MB*BS. Its token j
    lives in block `block_tables[b, j / BS]`, slot `j mod BS`. Query t is
    the token at position p = L - T + t and attends to positions 0..p:
    ```
    out[b, h, t, :] = sum_j softmax_j(scale * q[b,h,t,:] . K[b,g,j,:]) V[b,g,j,:]
    ```
    with g = h / (Hq / Hkv) and `scale` (default 1/sqrt(D)). A query with
    p < 0 (a left-padded prompt token, or a batch slot with L = 0) has
    nothing to attend to and gets zeros. The same op serves prefill (T = the
    padded prompt length, prompts left-padded so that the last token is
    query T - 1) and decode (T = 1). A block table entry that a position
    below L needs and that lies outside [0, NB), or L outside [0, MB*BS], is
    a run-time error; entries past the context are never read (they may be
    -1). NB enters only those checks.

    Quantized caches (i8, f8E4M3FN) are dequantized inside the op:
    `k = code * k_scale[g]` (`k_scale` of size Hkv or 1, as written), and
    the same for values with `v_scale`; float caches take no scales. Scores,
    softmax and the weighted sum are f32; the result is rounded to the
    query's type. No gradient: inference only (training uses
    mw.attention). Cost, at the largest context MB*BS (an upper bound; the
    real work follows the context lengths): 4*B*Hq*T*MB*BS*D FLOPs plus 5
    per score, reading the query, the tables and B*MB*BS tokens of each
    cache (at most the whole cache).

    ```mlir
    %o = mw.paged_attention %q, %kc, %vc, %tables, %lens
        : (tensor<4x8x1x32xf32>, tensor<64x16x2x32xf32>, tensor<64x16x2x32xf32>,
           tensor<4x8xi32>, tensor<4xi32>) -> tensor<4x8x1x32xf32>
    ```
  }];
  let arguments = (ins MW_FloatTensor:$query, MW_KvCacheTensor:$key_cache,
                   MW_KvCacheTensor:$value_cache, MW_I32Tensor:$block_tables,
                   MW_I32Tensor:$context_lens,
                   OptionalAttr<F64Attr>:$scale,
                   OptionalAttr<DenseF32ArrayAttr>:$k_scale,
                   OptionalAttr<DenseF32ArrayAttr>:$v_scale);
  let results = (outs MW_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache `,` $block_tables `,` $context_lens
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getFlops();
    int64_t getBytesRead();
    /// The scale applied to q . k: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
  }];
}

//===----------------------------------------------------------------------===//
// Kernels: destination-passing form for bufferization
//===----------------------------------------------------------------------===//

def MW_KernelOp : Op<MW_Dialect, "kernel", [
    AttrSizedOperandSegments, IsolatedFromAbove, SingleBlock,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<MW_CostOpInterface,
                              ["getBytesRead", "getBytesWritten"]>]> {
  let summary = "one kernel in destination-passing style: mw ops computing "
                "its outputs into destination operands";
  let description = [{
    The unit the runtime launches, and the form in which mw programs meet
    bufferization (DESIGN.md decision 4). The body is one block of mw ops on
    tensors whose arguments are the values of `ins`; its `mw.yield` gives one
    tensor per `outs` operand, of that operand's shape and element type.

    - Tensor form: `ins` and `outs` are tensors and the kernel returns one
      tensor per `outs` operand (DestinationStyleOpInterface: result `i` is
      tied to `outs` operand `i`). Only the shape of an `outs` operand
      matters, never its contents, so a destination may be any tensor of the
      right type: `tensor.empty`, or an input the kernel may overwrite.
    - Memref form (after One-Shot Bufferize): `ins` and `outs` are memrefs and
      the kernel has no results; it reads every `ins` buffer and writes every
      `outs` buffer. A destination may be the same buffer as an input only
      when the body is one elementwise op (`mw.add`, `mw.adamw`, ...), where
      element `i` is read before it is written, or a fused loop, row or
      horizontal kernel that reads that input only at the output's own
      index (`readsInputAtOutputIndex`; a row kernel's row ops read it at
      the index of each element of the row, whole rows before the row is
      written).

    A body of several ops (from an `mw.fusion`, `--mw-fuse`) is a *fused
    kernel*: only its `ins` and `outs` are buffers; its other values stay
    inside the kernel.

    `--mw-form-kernels` wraps each mw op into a kernel and chooses its
    destinations; `--mw-bufferize` follows it with One-Shot Bufferize.

    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %r = mw.kernel ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
                   outs(%e : tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = mw.add %x, %y : tensor<4xf32>
      mw.yield %s : tensor<4xf32>
    }
    // after bufferization
    mw.kernel ins(%A, %B : memref<4xf32>, memref<4xf32>)
              outs(%R : memref<4xf32>) {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = mw.add %x, %y : tensor<4xf32>
      mw.yield %s : tensor<4xf32>
    }
    ```
    Cost: the sum of the body's ops' FLOPs; bytes read and written are the
    body op's own figures when it has one op, else those of `ins` and `outs`
    (what the kernel moves, intermediates excluded).
  }];
  let arguments = (ins Variadic<MW_TensorOrMemRef>:$ins,
                   Variadic<MW_TensorOrMemRef>:$outs);
  let results = (outs Variadic<MW_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $ins^ `:` type($ins) `)`)?
    `outs` `(` $outs `:` type($outs) `)`
    (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutsMutable();
    }
    /// Whether operands are memrefs (after bufferization).
    bool hasBufferSemantics() {
      return ::llvm::all_of(getOperandTypes(), [](::mlir::Type t) {
        return ::llvm::isa<::mlir::MemRefType>(t);
      });
    }
    /// The terminator of the body.
    ::mlir::Operation *getYield() { return getBody().front().getTerminator(); }
    /// The single op the body computes, when it has exactly one besides
    /// the terminator; null otherwise.
    ::mlir::Operation *getSingleOp();
    /// Whether every output element depends only on the input elements at
    /// the same index (one elementwise mw op, an optimizer update or a
    /// scalar op), so that a destination may share an input's buffer.
    bool isElementwise();
    /// Whether every element of input `index` that the kernel reads is read
    /// while computing the output element at the same index: true for a
    /// fused loop kernel whose ops on that input (and on everything computed
    /// from it) are elementwise at the iteration shape, for each input of a
    /// horizontal optimizer kernel, and for a fused row kernel whose ops on
    /// that input are elementwise at the iteration shape up to row ops over
    /// its last axis, which read it at the index of each element of a row
    /// (the runtime reads whole rows before writing them; docs/fusion.md,
    /// destinations). A destination may then be that input's buffer.
    bool readsInputAtOutputIndex(unsigned index);
  }];
}

def MW_FusionOp : Op<MW_Dialect, "fusion", [
    IsolatedFromAbove, SingleBlock, Pure, MW_StaticShapes,
    DeclareOpInterfaceMethods<MW_CostOpInterface,
                              ["getBytesRead", "getBytesWritten"]>]> {
  let summary = "a group of mw ops that runs as one fused kernel";
  let description = [{
    The unit `--mw-fuse` forms (the design of XLA's fusion instruction and
    IREE's dispatch regions, on mw ops): value semantics, one block whose
    arguments are the values of `inputs` (same types, in order), and an
    `mw.yield` that gives the results. Only the inputs and the results reach
    memory; every other value of the body stays inside the kernel.
    `--mw-form-kernels` turns the fusion into one `mw.kernel` whose body is
    this body. `kind` says which kind of fused kernel it is, and the verifier
    holds the body to that kind's rules (docs/fusion.md):

    - `loop`: every body op is pointwise (elementwise unary and binary ops,
      `mw.cast`, `mw.select`, `mw.gelu`, the activation gradients,
      `mw.splat`, `mw.constant`, `mw.broadcast_to`, `mw.reshape`,
      `mw.transpose`, `mw.slice`); every result has the iteration shape (the
      first result's), or is a column reduction (`mw.reduce_sum` over every
      axis but the last of a body value of the iteration shape: a bias
      gradient), which nothing in the body uses.
    - `row`: pointwise ops plus ops that reduce or normalize over the last
      axis of the iteration shape (`mw.softmax`, `mw.log_softmax`,
      `mw.softmax_grad`, `mw.log_softmax_grad`, `mw.layer_norm`,
      `mw.rms_norm`, `mw.reduce_sum` / `reduce_max` / `reduce_mean` over the
      last axis); results have the iteration shape or the row shape (the
      iteration shape without its last axis, or with it as 1).
    - `matmul`: the first body op is the only `mw.matmul`; every other op is
      pointwise (its epilogue) or a column reduction; results have the
      matmul's result shape (the iteration shape) or are column reductions.
    - `horizontal`: independent `mw.adamw` or `mw.sgd` ops (not both) whose
      operands are all block arguments: an optimizer step of many
      parameters in one launch.

    Cost: the sum of the body's FLOPs; bytes read are the inputs' and bytes
    written the results' (what the fused kernel moves, intermediates
    excluded).

    ```mlir
    %h, %y, %mean, %rstd = mw.fusion row ins(%x, %r, %g, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%x0: tensor<4x8xf32>, %r0: tensor<4x8xf32>, %g0: tensor<8xf32>, %b0: tensor<8xf32>):
      %s = mw.add %x0, %r0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %n, %m, %v = mw.layer_norm %s, %g0, %b0 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
      mw.yield %s, %n, %m, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins MW_FusionKindAttr:$kind, Variadic<MW_Tensor>:$inputs);
  let results = (outs Variadic<MW_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<FusionKind>($kind) (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `->` `(` type($results) `)` attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The terminator of the body.
    ::mlir::Operation *getYield() { return getBody().front().getTerminator(); }
    /// The iteration shape: the shape of the first result (for `matmul`,
    /// the matmul's result shape).
    ::llvm::ArrayRef<int64_t> getIterationShape();
  }];
}

def MW_YieldOp : Op<MW_Dialect, "yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["KernelOp", "FusionOp"]>]> {
  let summary = "the outputs of an mw.kernel or mw.fusion";
  let description = [{
    Terminates an `mw.kernel` body with one tensor per `outs` operand, or an
    `mw.fusion` body with one tensor per result.

    ```mlir
    mw.yield %s : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<MW_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // MEMWALL_DIALECT_MW_IR_MWOPS_TD
