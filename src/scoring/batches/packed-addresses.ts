/**
 * Addresses held as their 20 bytes each: a 100,000-address batch is 2 MB while it is read and
 * written, where the body's text and an array of strings of it took several times that. Grows by
 * doubling up to `max` addresses. Read back lower-cased, as batches store them.
 */
export class PackedAddresses {
  #bytes: Buffer;
  #count = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
    this.#bytes = Buffer.allocUnsafe(20 * Math.min(max, 1024));
  }

  static of(addresses: readonly string[]): PackedAddresses {
    const packed = new PackedAddresses(Math.max(1, addresses.length));
    for (const address of addresses) packed.push(address);
    return packed;
  }

  get count(): number {
    return this.#count;
  }

  /** Adds a checked address (0x and 40 hexadecimal digits, any case). */
  push(address: string): void {
    if (this.#count === this.#max) throw new RangeError('PackedAddresses: full');
    if (20 * (this.#count + 1) > this.#bytes.length) {
      const grown = Buffer.allocUnsafe(20 * Math.min(this.#max, this.#count * 2));
      this.#bytes.copy(grown, 0, 0, 20 * this.#count);
      this.#bytes = grown;
    }
    this.#bytes.write(address.slice(2), 20 * this.#count, 20, 'hex');
    this.#count++;
  }

  /** The addresses at positions `from` to `to` (exclusive), `0x` and lower-case hex. */
  slice(from: number, to: number): string[] {
    const out: string[] = [];
    for (let i = from; i < Math.min(to, this.#count); i++) out.push(`0x${this.#bytes.toString('hex', 20 * i, 20 * i + 20)}`);
    return out;
  }
}
