/* fuzz_gir_parser.c - libFuzzer target for the instruction IR reader: the
 * round trip of fuzz_roundtrip.h on .gir text.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-gir-parser
 * Run:   mkdir corpus; cp test/ir/roundtrip-[a-z]*.gir corpus; build/bin/fuzz-gir-parser corpus
 */
#include "fuzz_roundtrip.h"
#include "ir/ir.h"

FUZZ_ROUNDTRIP_TARGET("fuzz.gir", ir_module_parse, ir_module_print, ir_module_destroy)
