/* fp16.h - IEEE binary16 and bfloat16 conversions (round to nearest even). */
#ifndef GLOW_SUPPORT_FP16_H
#define GLOW_SUPPORT_FP16_H

#include <stdint.h>

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t b);

#endif
