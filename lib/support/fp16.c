#include "fp16.h"
#include "scalar.h"

uint16_t float_to_half(float f) { return sc_f2h(f); }
float half_to_float(uint16_t h) { return sc_h2f(h); }
uint16_t float_to_bf16(float f) { return sc_f2bf(f); }
float bf16_to_float(uint16_t b) { return sc_bf2f(b); }
