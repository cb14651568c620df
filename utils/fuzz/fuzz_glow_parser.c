/* fuzz_glow_parser.c - libFuzzer target for the graph IR reader: the round
 * trip of fuzz_roundtrip.h on .glow text.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-glow-parser
 * Run:   utils/fuzz/make-corpus.sh corpus && build/bin/fuzz-glow-parser corpus
 */
#include "fuzz_roundtrip.h"
#include "graph/graph.h"

FUZZ_ROUNDTRIP_TARGET("fuzz.glow", module_parse, module_print, module_destroy)
