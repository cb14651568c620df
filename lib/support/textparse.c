/* textparse.c - the pieces the .glow and .gir readers share (textparse.h).
 *
 * Everything here is called per token or per message, never per byte of a
 * large payload, except tp_unescape on quoted names; tp_i64, the one call
 * per number token, is inline in the header.
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
	default: return true;
	}
}

bool tp_splat_ok(struct diag *d, struct loc loc, enum elem_kind k, bool is_bool, bool is_int, int64_t i)
{
	if (is_bool && k != EK_BOOL) {
		diag_error(d, loc, "'true'/'false' splat needs element kind bool, not %s", elem_name(k));
		return false;
	}
	if (elem_is_float(k))
		return true;
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

enum { TP_DROP_STEP = 4 << 20, TP_DROP_KEEP = 1 << 20 };

void tp_drop_behind(const struct input *in, size_t *dropped, size_t at)
{
	if (!in || at < *dropped + TP_DROP_STEP + TP_DROP_KEEP)
		return;
	input_drop(in, *dropped, at - TP_DROP_KEEP);
	*dropped = at - TP_DROP_KEEP;
}
