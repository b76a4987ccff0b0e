// A function whose signature is one line of 633 columns, with a
// parse error at its end (diagnostics.mlir).
func.func @wide(%a0: tensor<4xf32> {mw.role = #mw.role<param>}, %a1: tensor<4xf32> {mw.role = #mw.role<param>}, %a2: tensor<4xf32> {mw.role = #mw.role<param>}, %a3: tensor<4xf32> {mw.role = #mw.role<param>}, %a4: tensor<4xf32> {mw.role = #mw.role<param>}, %a5: tensor<4xf32> {mw.role = #mw.role<param>}, %a6: tensor<4xf32> {mw.role = #mw.role<param>}, %a7: tensor<4xf32> {mw.role = #mw.role<param>}, %a8: tensor<4xf32> {mw.role = #mw.role<param>}, %a9: tensor<4xf32> {mw.role = #mw.role<param>}, %a10: tensor<4xf32> {mw.role = #mw.role<param>}, %a11: tensor<4xf32> {mw.role = #mw.role<param>}, %bad: tensor<4xf33>) -> tensor<4xf32> {
  return %a0 : tensor<4xf32>
}
