/**
 * Sets of visitor numbers, kept with each rollup so that the visitors of any
 * union of periods are counted exactly: the size of the union of their sets.
 * A set is stored as its numbers in ascending order, the first zigzag
 * encoded and each next one as its distance from the one before, each
 * number an unsigned LEB128 varint (a few bytes a visitor however large the
 * numbers grow). Numbers are integers within ±2^53.
 */

/** The bytes of a set of numbers (any order, repeats allowed). */
export function encodeSet(numbers: Iterable<number>): Uint8Array {
  const sorted = Float64Array.from(numbers).sort();
  const out: number[] = [];
  const push = (n: number) => {
    while (n >= 0x80) {
      out.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    out.push(n);
  };
  let previous: number | undefined;
  for (const n of sorted) {
    if (previous === undefined) push(n < 0 ? -2 * n - 1 : 2 * n);
    else if (n !== previous) push(n - previous);
    else continue;
    previous = n;
  }
  return Uint8Array.from(out);
}

/** The numbers of a set's bytes, ascending. */
export function decodeSet(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[i++];
      n += (b & 0x7f) * scale;
      if (b < 0x80) break;
      scale *= 0x80;
    }
    out.push(out.length === 0 ? (n % 2 === 0 ? n / 2 : -(n + 1) / 2) : out[out.length - 1] + n);
  }
  return out;
}

/** The widest span of numbers counted with a bitmap (32 MB); wider unions sort. */
const BITMAP_SPAN = 2 ** 28;

/**
 * A union of visitors being counted: visitor numbers, and visitor keys that
 * have no number yet (a visitor first seen since the rollups were built).
 */
export class VisitorUnion {
  #parts: ArrayLike<number>[] = [];
  readonly #unnumbered = new Set<string>();
  /** Visitors taken out of every part, and those put back after (exclude, include). */
  readonly #excluded = new Set<number>();
  readonly #excludedKeys = new Set<string>();
  readonly #included = new Set<number>();
  readonly #includedKeys = new Set<string>();

  /**
   * Takes visitors out of what the union holds so far and will hold: their
   * membership is then only what include() says.
   */
  exclude(numbers: Iterable<number>, keys: Iterable<string>): void {
    for (const n of numbers) this.#excluded.add(n);
    for (const k of keys) this.#excludedKeys.add(k);
  }

  /** Puts a visitor in, whatever was excluded. */
  include(number: number | null, key: string): void {
    if (number === null) this.#includedKeys.add(key);
    else this.#included.add(number);
  }

  addNumbers(numbers: ArrayLike<number>): void {
    this.#decodeEncoded();
    if (numbers.length > 0) this.#parts.push(numbers);
  }

  /** A stored set; `size` says how many it holds, so a union of one set is never decoded. */
  addSet(bytes: Uint8Array, size?: number): void {
    if (size === 0) return;
    if (size !== undefined && this.#parts.length === 0 && this.#encoded.length === 0) {
      this.#encoded.push({ bytes, size });
      return;
    }
    this.#decodeEncoded();
    this.addNumbers(decodeSet(bytes));
  }

  /** Stored sets not decoded yet (at most one: a second decodes both). */
  #encoded: { bytes: Uint8Array; size: number }[] = [];

  #decodeEncoded(): void {
    for (const { bytes } of this.#encoded.splice(0)) this.#parts.push(decodeSet(bytes));
  }

  addKey(key: string): void {
    this.#unnumbered.add(key);
  }

  /** Everything another union holds (unions excluding the same visitors). */
  addUnion(other: VisitorUnion): void {
    this.#decodeEncoded();
    other.#decodeEncoded();
    this.#parts.push(...other.#parts);
    for (const key of other.#unnumbered) this.#unnumbered.add(key);
    for (const n of other.#excluded) this.#excluded.add(n);
    for (const k of other.#excludedKeys) this.#excludedKeys.add(k);
    for (const n of other.#included) this.#included.add(n);
    for (const k of other.#includedKeys) this.#includedKeys.add(k);
  }

  get size(): number {
    if (
      this.#encoded.length === 1 && this.#unnumbered.size === 0 && this.#excluded.size === 0 &&
      this.#included.size === 0 && this.#includedKeys.size === 0
    ) {
      return this.#encoded[0].size;
    }
    this.#decodeEncoded();
    const keys = new Set([...this.#unnumbered].filter((k) => !this.#excludedKeys.has(k)));
    for (const k of this.#includedKeys) keys.add(k);
    if (this.#excluded.size === 0 && this.#included.size === 0) {
      return this.#countNumbers() + keys.size;
    }
    const has = this.#membership();
    let count = 0;
    for (const n of this.#included) if (!has(n) || this.#excluded.has(n)) count++;
    for (const n of this.#excluded) if (has(n)) count--;
    return this.#countNumbers() + count + keys.size;
  }

  /** Whether the parts hold a number. */
  #membership(): (n: number) => boolean {
    return (n) => this.#parts.some((p) => Array.prototype.includes.call(p, n));
  }

  #countNumbers(): number {
    if (this.#parts.length === 0) return 0;
    if (this.#parts.length === 1) return this.#parts[0].length; // a set holds no repeats
    let min = Infinity;
    let max = -Infinity;
    for (const part of this.#parts) {
      for (let i = 0; i < part.length; i++) {
        const n = part[i];
        if (n < min) min = n;
        if (n > max) max = n;
      }
    }
    if (max - min < BITMAP_SPAN) {
      const bits = new Uint8Array(Math.floor((max - min) / 8) + 1);
      let count = 0;
      for (const part of this.#parts) {
        for (let i = 0; i < part.length; i++) {
          const at = part[i] - min;
          const byte = at >>> 3;
          const bit = 1 << (at & 7);
          if ((bits[byte] & bit) === 0) {
            bits[byte] |= bit;
            count++;
          }
        }
      }
      return count;
    }
    const all = new Float64Array(this.#parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of this.#parts) for (let i = 0; i < part.length; i++) all[at++] = part[i];
    all.sort();
    let count = 0;
    for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) count++;
    return count;
  }
}
