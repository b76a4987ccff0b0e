// An input that does not verify: a function whose entry block takes an f32
// where its signature says i32.
"func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({
^bb0(%arg0: f32):
  "func.return"() : () -> ()
}) : () -> ()
