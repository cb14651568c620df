/* textparse.c - the pieces the .glow and .gir readers share (textparse.h).
 *
 * Everything here is called per token or per message, never per byte of a
 * large payload, except tp_unescape on quoted names and the hex decoders
 * of weights' dense initializers (hex_decode, hex_decode_fast); tp_i64,
 * the one call per number token, is inline in the header.
 */
#include "support/textparse.h"

#include "support/io.h"
#include "support/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tp_f64(const unsigned char *s, const unsigned char *e, double *out)
{
	size_t n = (size_t)(e - s);
	char small[64], *buf = small;
	if (n >= sizeof small)
		buf = xmalloc(n + 1);
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	double v = strtod(buf, NULL);
	int ok = !(errno == ERANGE && isinf(v));
	if (buf != small)
		free(buf);
	*out = v;
	return ok;
}

const char *tp_char_name(unsigned char c, char *buf, size_t size)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "'\\x%02x'", c);
	return buf;
}

int tp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *tp_unescape(char **sb, size_t *sbcap, const char *s, uint32_t len, bool esc)
{
	if ((size_t)len + 1 > *sbcap)
		*sb = xgrow(*sb, sbcap, (size_t)len + 1, 1);
	char *out = *sb, *o = out;
	const char *c = s, *e = s + len;
	if (!esc) {
		memcpy(out, c, len);
		out[len] = 0;
		return out;
	}
	while (c < e) {
		if (*c != '\\') {
			*o++ = *c++;
			continue;
		}
		c++;
		switch (*c) {
		case 'n': *o++ = '\n'; c++; break;
		case 't': *o++ = '\t'; c++; break;
		case '\\':
		case '"': *o++ = *c++; break;
		default:
			*o++ = (char)(tp_hexval(c[0]) << 4 | tp_hexval(c[1]));
			c += 2;
			break;
		}
	}
	*o = 0;
	return out;
}

const char *tp_key(char **sb, size_t *sbcap, const char *s, uint32_t len, bool esc, size_t *klen)
{
	if (!esc || !memchr(s, '\\', len)) {
		*klen = len;
		return s;
	}
	const char *k = tp_unescape(sb, sbcap, s, len, esc);
	*klen = strlen(k);
	return k;
}

int tp_enum_index(const char *vals, const char *s, size_t len)
{
	int i = 0;
	for (const char *c = vals; c; i++) {
		size_t n = strcspn(c, "|");
		if (n == len && memcmp(c, s, len) == 0)
			return i;
		c = c[n] ? c + n + 1 : NULL;
	}
	return -1;
}

const char *tp_name_text(const char *s, uint32_t len, bool esc, char sigil, char *buf, size_t size)
{
	int n = len > 60 ? 60 : (int)len;
	const char *more = len > 60 ? "..." : "";
	if (esc)
		snprintf(buf, size, "%c\"%.*s%s\"", sigil, n, s, more);
	else
		snprintf(buf, size, "%c%.*s%s", sigil, n, s, more);
	return buf;
}

const char *tp_tok_text(const char *s, const char *e, char *buf, size_t size)
{
	int n = (int)(e - s);
	if (n > 40)
		snprintf(buf, size, "'%.40s...'", s);
	else
		snprintf(buf, size, "'%.*s'", n, s);
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
			*c = '?';
	return buf;
}

/* Bison's symbol names are C-string literals for aliases: strip the quotes. */
static void put_symbol(char *buf, size_t size, size_t *len, const char *name)
{
	size_t n = strlen(name);
	if (n >= 2 && name[0] == '"' && name[n - 1] == '"') {
		name++;
		n -= 2;
	}
	if (*len < size)
		*len += (size_t)snprintf(buf + *len, size - *len, "%.*s", (int)n, name);
}

void tp_expected(char *buf, size_t size, const char *const *expected, int nexp)
{
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < nexp; i++) {
		if (i > 0 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s", i == nexp - 1 ? " or " : ", ");
		put_symbol(buf, size, &len, expected[i]);
	}
}

bool tp_int_fits(enum elem_kind k, int64_t v)
{
	switch (k) {
	case EK_QI8: return v >= INT8_MIN && v <= INT8_MAX;
	case EK_QUI8: return v >= 0 && v <= UINT8_MAX;
	case EK_QI16: return v >= INT16_MIN && v <= INT16_MAX;
	case EK_QI32:
	case EK_I32:
	case EK_INDEX32: return v >= INT32_MIN && v <= INT32_MAX;
	case EK_BOOL: return v == 0 || v == 1;
	case EK_I4: return v >= -8 && v <= 7;
	case EK_U4: return v >= 0 && v <= 15;
	default: return true;
	}
}

/* textparse.h: a byte is an i4 value when it sign-extends its low nibble,
 * a u4 value or an f4e2m1 code when its high nibble is clear */
int64_t tp_dense_bad_elem(enum elem_kind k, const uint8_t *data, uint64_t n)
{
	if (k != EK_I4 && k != EK_U4 && k != EK_F4E2M1)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		unsigned hi = data[i] >> 4;
		if (k == EK_I4 ? hi != (data[i] & 8u ? 0xfu : 0u) : hi != 0)
			return (int64_t)i;
	}
	return -1;
}

bool tp_splat_ok(struct diag *d, struct loc loc, enum elem_kind k, bool is_bool, bool is_int, int64_t i)
{
	if (is_bool && k != EK_BOOL) {
		diag_error(d, loc, "'true'/'false' splat needs element kind bool, not %s", elem_name(k));
		return false;
	}
	if (elem_is_float(k))
		return true;
	if (elem_is_float_bits(k)) { /* a decimal would have to say how it rounds: the bytes say it exactly */
		diag_error(d, loc, "a constant of element kind %s cannot be a splat: write it dense (its bytes in hex)",
			   elem_name(k));
		return false;
	}
	if (!is_int) {
		diag_error(d, loc, "splat value of element kind %s must be an integer", elem_name(k));
		return false;
	}
	if (!tp_int_fits(k, i)) {
		diag_error(d, loc, "splat value %lld out of range for element kind %s", (long long)i, elem_name(k));
		return false;
	}
	return true;
}

/* Skips blank space and // comments. */
static size_t skip_blank_comments(const char *buf, size_t len, size_t i)
{
	for (;;) {
		while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
			i++;
		if (i + 1 < len && buf[i] == '/' && buf[i + 1] == '/') {
			const char *nl = memchr(buf + i, '\n', len - i);
			i = nl ? (size_t)(nl - buf) : len;
			continue;
		}
		return i;
	}
}

/* A protobuf varint at *i (at most 10 bytes); false when cut or too long. */
static bool pb_varint(const unsigned char *b, size_t len, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70 && *i < len; shift += 7) {
		unsigned char c = b[(*i)++];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The top-level fields of a ModelProto: field numbers 1..25 with valid wire
 * types, lengths inside the buffer, ending exactly at its end, one of them
 * the graph (field 7, length-delimited). Text never has a byte below tab,
 * binary protobuf almost always does in its first bytes (tags and lengths
 * below 9): required too, so a text file that happens to walk as protobuf
 * is not taken. */
static bool looks_onnx(const unsigned char *b, size_t len)
{
	bool graph = false, binary = false;
	size_t i = 0;
	while (i < len) {
		uint64_t tag, v;
		if (!pb_varint(b, len, &i, &tag))
			return false;
		uint64_t field = tag >> 3;
		if (field < 1 || field > 25)
			return false;
		switch (tag & 7) {
		case 0:
			if (!pb_varint(b, len, &i, &v))
				return false;
			break;
		case 1:
			if (len - i < 8)
				return false;
			i += 8;
			break;
		case 2:
			if (!pb_varint(b, len, &i, &v) || v > len - i)
				return false;
			i += (size_t)v;
			graph |= field == 7;
			break;
		case 5:
			if (len - i < 4)
				return false;
			i += 4;
			break;
		default: return false;
		}
	}
	/* the first bytes are enough: a text reader maps its input and must not
	 * page in all of it here */
	for (i = 0; i < len && i < 4096 && !binary; i++)
		binary = b[i] < '\t';
	return graph && binary;
}

enum tp_level tp_sniff_level(const char *buf, size_t len, size_t *at)
{
	static const struct {
		const char *kw;
		enum tp_level level;
	} kws[] = {
		{"module", TP_LEVEL_GRAPH},   {"placeholder", TP_LEVEL_GRAPH}, {"constant", TP_LEVEL_GRAPH},
		{"func", TP_LEVEL_GRAPH},     {"function", TP_LEVEL_INSTR},    {"memory", TP_LEVEL_INSTR},
		{"declare", TP_LEVEL_INSTR},  {"program", TP_LEVEL_INSTR},
	};
	*at = 0;
	size_t i = skip_blank_comments(buf, len, 0), n = 0;
	while (i + n < len && ((buf[i + n] >= 'a' && buf[i + n] <= 'z') || buf[i + n] == '_'))
		n++;
	/* a keyword followed by blank space, as both grammars write them */
	if (n > 0 && (i + n == len || buf[i + n] == ' ' || buf[i + n] == '\t' || buf[i + n] == '\n' ||
		      buf[i + n] == '\r'))
		for (size_t k = 0; k < GLOW_ARRAY_SIZE(kws); k++)
			if (strlen(kws[k].kw) == n && memcmp(kws[k].kw, buf + i, n) == 0) {
				*at = i;
				return kws[k].level;
			}
	if (looks_onnx((const unsigned char *)buf, len))
		return TP_LEVEL_ONNX;
	return TP_LEVEL_UNKNOWN;
}

const char *tp_level_hint(enum tp_level l)
{
	switch (l) {
	case TP_LEVEL_GRAPH: return "this is graph IR (.glow): glow-opt and glow-irgen read it";
	case TP_LEVEL_INSTR: return "this is instruction IR (.gir): glow-llc and glow-run read it";
	case TP_LEVEL_ONNX: return "this looks like an ONNX model: import it with glow-import";
	case TP_LEVEL_UNKNOWN: break;
	}
	return NULL;
}

void tp_hint_level(struct diag *d, uint32_t file, const char *buf, size_t len, enum tp_level want)
{
	size_t at;
	enum tp_level l = tp_sniff_level(buf, len, &at);
	if (l == TP_LEVEL_UNKNOWN || l == want)
		return;
	/* binary input: name the file, no line to quote */
	struct loc loc = loc_make(file, l == TP_LEVEL_ONNX ? LOC_FILE_OFF : (uint32_t)at);
	diag_hint_first_error(d, loc, tp_level_hint(l));
}

enum { TP_DROP_STEP = 4 << 20, TP_DROP_KEEP = 1 << 20 };

void tp_drop_behind(const struct input *in, size_t *dropped, size_t at)
{
	if (!in || at < *dropped + TP_DROP_STEP + TP_DROP_KEEP)
		return;
	input_drop(in, *dropped, at - TP_DROP_KEEP);
	*dropped = at - TP_DROP_KEEP;
}

long hex_decode(const char *hex, size_t n, uint8_t *out)
{
	static int8_t val[256];
	static int init;
	if (!init) {
		memset(val, -1, sizeof val);
		for (int i = 0; i < 10; i++)
			val['0' + i] = (int8_t)i;
		for (int i = 0; i < 6; i++) {
			val['a' + i] = (int8_t)(10 + i);
			val['A' + i] = (int8_t)(10 + i);
		}
		init = 1;
	}
	const unsigned char *h = (const unsigned char *)hex;
	for (size_t i = 0; i < n; i++) {
		int a = val[h[2 * i]], b = val[h[2 * i + 1]];
		if ((a | b) < 0)
			return (long)(a < 0 ? 2 * i : 2 * i + 1);
		out[i] = (uint8_t)(a << 4 | b);
	}
	return -1;
}

/* One lookup per output byte: a table of every pair of characters (128 KB,
 * built on first use), -1 where either is not a hex digit. Measured faster
 * than two lookups of single digits and than eight-digit SWAR arithmetic. */
long hex_decode_fast(const char *hex, size_t n, uint8_t *out)
{
	static int16_t pair[1 << 16];
	static int init;
	if (!init) {
		uint8_t one[2];
		for (int a = 0; a < 256; a++)
			for (int b = 0; b < 256; b++) {
				one[0] = (uint8_t)a;
				one[1] = (uint8_t)b;
				int hi = tp_hexval((char)a), lo = tp_hexval((char)b);
				uint16_t k;
				memcpy(&k, one, 2);
				pair[k] = (int16_t)(hi < 0 || lo < 0 ? -1 : hi << 4 | lo);
			}
		init = 1;
	}
	for (size_t i = 0; i < n; i++) {
		uint16_t k;
		memcpy(&k, hex + 2 * i, 2);
		int v = pair[k];
		if (v < 0) {
			long bad = hex_decode(hex + 2 * i, n - i, out + i);
			return bad + (long)(2 * i);
		}
		out[i] = (uint8_t)v;
	}
	return -1;
}
