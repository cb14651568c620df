/* parse_type.c - decoding of the .gir reader's TYPE token (an element kind,
 * quantization parameters, dimensions) into an interned type, reporting at
 * the offending character.
 */
#include "gir.tab.h"
#include "ir/ir.h"
#include "ir/parse.h"
#include "support/textparse.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_blank(const char *c, const char *e)
{
	while (c < e && (*c == ' ' || *c == '\t'))
		c++;
	return c;
}

/* Decodes a TYPE token: elem ('[' scale ':' offset ']')? '<' (dim ('x' dim)*)? '>'.
 * The lexer matched the brackets; everything inside is checked here. */
const struct type *gir_p_type(struct gir_parser *p, const struct tp_span *sp)
{
	const char *s = sp->s, *e = sp->s + sp->len, *c = s;
	while (c < e && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
		c++;
	int ek = elem_lookup(s, (size_t)(c - s));
	char t[64];
	if (ek < 0) {
		gir_p_error(p, gir_p_loc_at(p, s), "unknown element kind %s", tp_tok_text(s, c, t, sizeof t));
		return NULL;
	}
	enum elem_kind k = (enum elem_kind)ek;
	bool quant = elem_is_quantized(k);
	float scale = 0;
	int32_t offset = 0;
	c = skip_blank(c, e);
	if (*c == '[') {
		const char *q = c;
		if (!quant) {
			gir_p_error(p, gir_p_loc_at(p, q), "quantization parameters on non-quantized element kind '%s'",
				    elem_name(k));
			return NULL;
		}
		char num[64];
		const char *colon = memchr(c, ':', (size_t)(e - c)), *close = memchr(c, ']', (size_t)(e - c));
		if (!colon || !close || colon > close || (size_t)(close - c) >= sizeof num) {
			gir_p_error(p, gir_p_loc_at(p, q), "expected [scale:offset] after '%s'", elem_name(k));
			return NULL;
		}
		memcpy(num, c + 1, (size_t)(colon - c - 1));
		num[colon - c - 1] = 0;
		char *end;
		errno = 0;
		double sc = strtod(num, &end);
		if (end == num || *skip_blank(end, end + strlen(end)) || !(sc > 0) || isinf((float)sc)) {
			gir_p_error(p, gir_p_loc_at(p, c + 1), "quantization scale must be a positive finite number");
			return NULL;
		}
		memcpy(num, colon + 1, (size_t)(close - colon - 1));
		num[close - colon - 1] = 0;
		long long off = strtoll(num, &end, 10);
		if (end == num || *skip_blank(end, end + strlen(end)) || off < INT32_MIN || off > INT32_MAX) {
			gir_p_error(p, gir_p_loc_at(p, colon + 1), "quantization offset must be a 32-bit integer");
			return NULL;
		}
		scale = (float)sc;
		offset = (int32_t)off;
		c = skip_blank(close + 1, e);
	} else if (quant) {
		gir_p_error(p, gir_p_loc_at(p, c), "quantized element kind '%s' needs a scale and an offset: %s[scale:offset]<...>",
			    elem_name(k), elem_name(k));
		return NULL;
	}
	/* c is at '<' (the lexer guarantees it) */
	c = skip_blank(c + 1, e);
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = 0;
	if (*c != '>') {
		for (;;) {
			c = skip_blank(c, e);
			if (!(*c >= '0' && *c <= '9')) {
				gir_p_error(p, gir_p_loc_at(p, c), "expected a dimension");
				return NULL;
			}
			const char *d0 = c;
			uint64_t v = 0;
			while (*c >= '0' && *c <= '9') {
				if (v > (UINT64_MAX - 9) / 10) {
					gir_p_error(p, gir_p_loc_at(p, d0), "dimension out of range");
					return NULL;
				}
				v = v * 10 + (uint64_t)(*c++ - '0');
			}
			if (rank == GLOW_MAX_RANK) {
				gir_p_error(p, gir_p_loc_at(p, d0), "tensor rank exceeds the maximum of %d", GLOW_MAX_RANK);
				return NULL;
			}
			dims[rank++] = v;
			c = skip_blank(c, e);
			if (*c == '>')
				break;
			if (*c != 'x') {
				gir_p_error(p, gir_p_loc_at(p, c), "expected 'x' or '>' in type");
				return NULL;
			}
			c++;
		}
	}
	if (!type_shape_ok(k, dims, rank)) {
		gir_p_error(p, gir_p_loc_at(p, s), "tensor type too large (more than 2^48 bytes)");
		return NULL;
	}
	return quant ? type_get_q(p->types, k, dims, rank, scale, offset) : type_get(p->types, k, dims, rank);
}
