import { isAsciiDigit, trimWhiteSpace } from './dotnet-chars.js';

/**
 * Int32.Parse(s, NumberStyles.Integer) and Double.Parse(s, NumberStyles.Float | AllowThousands) in
 * the invariant culture, as .NET Framework runs them (Number.ParseNumber, then the native
 * NumberToDouble, whose result is not always the correctly rounded double: only the first 18
 * digits count). Checked against Mono, which carries the same code: test/fixtures/dotnet.
 */

export type NumberFailure = 'format' | 'overflow';
export type NumberResult = { ok: true; value: number } | { ok: false; failure: NumberFailure };

interface NumberBuffer {
  /** Significant digits, no leading zeros, no trailing zeros. */
  digits: string;
  /** Decimal exponent: the value is 0.digits × 10^scale. */
  scale: number;
  negative: boolean;
}

const STATE_SIGN = 1;
const STATE_DIGITS = 2;
const STATE_NONZERO = 4;
const STATE_DECIMAL = 8;
/** NumberBuffer.NumberMaxDigits in .NET Framework. */
const MAX_DIGITS = 50;

const isWhite = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/** Number.TryStringToNumber: `float` adds AllowDecimalPoint, AllowExponent and AllowThousands. */
function stringToNumber(s: string, float: boolean): NumberBuffer | null {
  // The native code walks a NUL-terminated buffer: past the end reads as '\0'.
  const at = (i: number): number => (i < s.length ? s.charCodeAt(i) : 0);
  let p = 0;
  let ch = at(p);
  let state = 0;
  let negative = false;
  for (;;) {
    // Leading white space, then at most one sign; no white space after the sign.
    if (!isWhite(ch) || (state & STATE_SIGN) !== 0) {
      if ((state & STATE_SIGN) === 0 && (ch === 0x2b || ch === 0x2d)) {
        state |= STATE_SIGN;
        negative = ch === 0x2d;
      } else break;
    }
    ch = at(++p);
  }
  let digits = '';
  let digEnd = 0;
  let scale = 0;
  for (;;) {
    if (isAsciiDigit(ch)) {
      state |= STATE_DIGITS;
      if (ch !== 0x30 || (state & STATE_NONZERO) !== 0) {
        if (digits.length < MAX_DIGITS) {
          digits += String.fromCharCode(ch);
          if (ch !== 0x30) digEnd = digits.length;
        }
        if ((state & STATE_DECIMAL) === 0) scale++;
        state |= STATE_NONZERO;
      } else if ((state & STATE_DECIMAL) !== 0) scale--;
    } else if (float && ch === 0x2e && (state & STATE_DECIMAL) === 0) {
      state |= STATE_DECIMAL;
    } else if (float && ch === 0x2c && (state & STATE_DIGITS) !== 0 && (state & STATE_DECIMAL) === 0) {
      // Thousands separators: anywhere after the first digit and before the decimal point.
    } else break;
    ch = at(++p);
  }
  if ((state & STATE_DIGITS) === 0) return null;
  if (float && (ch === 0x45 || ch === 0x65)) {
    const mark = p;
    ch = at(++p);
    let negativeExponent = false;
    if (ch === 0x2b) ch = at(++p);
    else if (ch === 0x2d) {
      ch = at(++p);
      negativeExponent = true;
    }
    if (isAsciiDigit(ch)) {
      let exponent = 0;
      do {
        exponent = exponent * 10 + (ch - 0x30);
        ch = at(++p);
        if (exponent > 1000) {
          exponent = 9999;
          while (isAsciiDigit(ch)) ch = at(++p);
        }
      } while (isAsciiDigit(ch));
      scale += negativeExponent ? -exponent : exponent;
    } else {
      p = mark;
      ch = at(p);
    }
  }
  while (isWhite(ch)) ch = at(++p);
  // Whatever follows must be NUL characters only (TrailingZeros).
  for (let i = p; i < s.length; i++) if (s.charCodeAt(i) !== 0) return null;
  if ((state & STATE_NONZERO) === 0) {
    scale = 0;
    if ((state & STATE_DECIMAL) === 0) negative = false;
  }
  return { digits: digits.slice(0, digEnd), scale, negative };
}

export function parseDotNetInt32(s: string): NumberResult {
  const n = stringToNumber(s, false);
  if (n === null) return { ok: false, failure: 'format' };
  if (n.scale > 10) return { ok: false, failure: 'overflow' };
  // scale ≤ 10 digits: exact as a double.
  const magnitude = n.digits === '' ? 0 : Number(n.digits.padEnd(n.scale, '0'));
  const value = n.negative ? -magnitude : magnitude;
  if (value < -2147483648 || value > 2147483647) return { ok: false, failure: 'overflow' };
  return { ok: true, value: value === 0 ? 0 : value };
}

export function parseDotNetDouble(s: string): NumberResult {
  const n = stringToNumber(s, true);
  if (n === null) {
    // Double.Parse falls back to the invariant culture's symbols, exact after String.Trim().
    const t = trimWhiteSpace(s);
    if (t === 'Infinity') return { ok: true, value: Infinity };
    if (t === '-Infinity') return { ok: true, value: -Infinity };
    if (t === 'NaN') return { ok: true, value: NaN };
    return { ok: false, failure: 'format' };
  }
  const value = numberToDouble(n);
  return Number.isFinite(value) ? { ok: true, value } : { ok: false, failure: 'overflow' };
}

// Powers of 10 (then of 0.1) normalized to 64 bits, with their binary exponents.
const POW10 = [
  0xa000000000000000n, 0xc800000000000000n, 0xfa00000000000000n, 0x9c40000000000000n, 0xc350000000000000n,
  0xf424000000000000n, 0x9896800000000000n, 0xbebc200000000000n, 0xee6b280000000000n, 0x9502f90000000000n,
  0xba43b74000000000n, 0xe8d4a51000000000n, 0x9184e72a00000000n, 0xb5e620f480000000n, 0xe35fa931a0000000n,
  0xcccccccccccccccdn, 0xa3d70a3d70a3d70bn, 0x83126e978d4fdf3cn, 0xd1b71758e219652en, 0xa7c5ac471b478425n,
  0x8637bd05af6c69b7n, 0xd6bf94d5e57a42ben, 0xabcc77118461ceffn, 0x89705f4136b4a599n, 0xdbe6fecebdedd5c2n,
  0xafebff0bcb24ab02n, 0x8cbccc096f5088cfn, 0xe12e13424bb40e18n, 0xb424dc35095cd813n, 0x901d7cf73ab0acdcn,
];
const POW10_EXP = [4, 7, 10, 14, 17, 20, 24, 27, 30, 34, 37, 40, 44, 47, 50];
// Powers of 10^16 (then of 0.1^16), likewise.
const POW10_16 = [
  0x8e1bc9bf04000000n, 0x9dc5ada82b70b59en, 0xaf298d050e4395d6n, 0xc2781f49ffcfa6d4n, 0xd7e77a8f87daf7fan,
  0xefb3ab16c59b14a0n, 0x850fadc09923329cn, 0x93ba47c980e98cden, 0xa402b9c5a8d3a6e6n, 0xb616a12b7fe617a8n,
  0xca28a291859bbf90n, 0xe070f78d39275566n, 0xf92e0c3537826140n, 0x8a5296ffe33cc92cn, 0x9991a6f3d6bf1762n,
  0xaa7eebfb9df9de8an, 0xbd49d14aa79dbc7en, 0xd226fc195c6a2f88n, 0xe950df20247c83f8n, 0x81842f29f2cce373n,
  0x8fcac257558ee4e2n, 0xe69594bec44de160n, 0xcfb11ead453994c3n, 0xbb127c53b17ec165n, 0xa87fea27a539e9b3n,
  0x97c560ba6b0919b5n, 0x88b402f7fd7553abn, 0xf64335bcf065d3a0n, 0xddd0467c64bce4c4n, 0xc7caba6e7c5382edn,
  0xb3f4e093db73a0b7n, 0xa21727db38cb0053n, 0x91ff83775423cc29n, 0x8380dea93da4bc82n, 0xece53cec4a314f00n,
  0xd5605fcdcf32e217n, 0xc0314325637a1978n, 0xad1c8eab5ee43ba2n, 0x9becce62836ac5b0n, 0x8c71dcd9ba0b495cn,
  0xfd00b89747823938n, 0xe3e27a444d8d991an,
];
const POW10_16_EXP = [54, 107, 160, 213, 266, 319, 373, 426, 479, 532, 585, 638, 691, 745, 798, 851, 904, 957, 1010, 1064, 1117];

const U32 = 0xffffffffn;
const TOP_BIT = 0x8000000000000000n;
const U64 = 0xffffffffffffffffn;

/** High 64 bits of a × b, missing the low×low term (Mul64Lossy), renormalized. */
function mul64Lossy(a: bigint, b: bigint, exp: { v: number }): bigint {
  let val = (a >> 32n) * (b >> 32n) + (((a >> 32n) * (b & U32)) >> 32n) + (((a & U32) * (b >> 32n)) >> 32n);
  if ((val & TOP_BIT) === 0n) {
    val = (val << 1n) & U64;
    exp.v -= 1;
  }
  return val;
}

/** NumberToDouble, then NumberBufferToDouble's "-0 is 0". Infinity means overflow. */
function numberToDouble(n: NumberBuffer): number {
  const total = n.digits.length;
  if (total === 0) return 0;
  let remaining = total;
  const count = Math.min(remaining, 9);
  remaining -= count;
  let val = BigInt(n.digits.slice(0, count));
  if (remaining > 0) {
    const more = Math.min(remaining, 9);
    remaining -= more;
    val = val * 10n ** BigInt(more) + BigInt(n.digits.slice(9, 9 + more));
  }
  const scale = n.scale - (total - remaining);
  const absScale = Math.abs(scale);
  let bits: bigint;
  if (absScale >= 22 * 16) {
    bits = scale > 0 ? 0x7ff0000000000000n : 0n;
  } else {
    const exp = { v: 64 };
    for (const shift of [32, 16, 8, 4, 2, 1]) {
      if (val >> BigInt(64 - shift) === 0n) {
        val = (val << BigInt(shift)) & U64;
        exp.v -= shift;
      }
    }
    let index = absScale & 15;
    if (index !== 0) {
      const multExp = POW10_EXP[index - 1]!;
      exp.v += scale < 0 ? -multExp + 1 : multExp;
      val = mul64Lossy(val, POW10[index + (scale < 0 ? 15 : 0) - 1]!, exp);
    }
    index = absScale >> 4;
    if (index !== 0) {
      const multExp = POW10_16_EXP[index - 1]!;
      exp.v += scale < 0 ? -multExp + 1 : multExp;
      val = mul64Lossy(val, POW10_16[index + (scale < 0 ? 21 : 0) - 1]!, exp);
    }
    if ((val & (1n << 10n)) !== 0n) {
      // Round half to even on the 53rd bit, carrying into the exponent.
      let tmp = val + 1023n + ((val >> 11n) & 1n);
      if (tmp > U64) {
        tmp = ((tmp & U64) >> 1n) | TOP_BIT;
        exp.v += 1;
      }
      val = tmp;
    }
    const biased = exp.v + 0x3fe;
    if (biased <= 0) {
      // 0x8000000000000058: values in [Epsilon/2, Epsilon) round up to Epsilon.
      if (biased === -52 && val >= 0x8000000000000058n) bits = 1n;
      else if (biased <= -52) bits = 0n;
      else bits = val >> BigInt(-biased + 12);
    } else if (biased >= 0x7ff) bits = 0x7ff0000000000000n;
    else bits = (BigInt(biased) << 52n) + ((val >> 11n) & 0xfffffffffffffn);
  }
  if (bits === 0n) return 0;
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, n.negative ? bits | TOP_BIT : bits);
  return view.getFloat64(0);
}
