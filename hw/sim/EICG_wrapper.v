// The clock gate rocket-chip instantiates as an external module (the debug module's clock, in
// the debug configs only). Latch-based like a library ICG cell: the enable is captured while
// the clock is low, so the gated clock never glitches.
module EICG_wrapper(
  output out,
  input  en,
  input  test_en,
  input  in
);
  reg en_latched /* verilator clock_enable */;
  always @(*) begin
    if (!in) en_latched = en || test_en;
  end
  assign out = en_latched && in;
endmodule
