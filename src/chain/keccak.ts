/**
 * Keccak-256 (Ethereum's, padding 0x01) as a small WebAssembly module assembled here at start-up.
 *
 * Why not viem's keccak256: it is @noble/hashes in JavaScript, which splits every 64-bit lane into
 * two 32-bit halves; an offchain attestation hashes its ~3 kB of score data twice (the struct
 * hash and the UID), and there that cost alone was most of the signing budget. WebAssembly has
 * 64-bit integers and a rotate instruction, so the same permutation runs about ten times faster,
 * with no native build and no new dependency. Node's OpenSSL has SHA3-256 but not Keccak-256
 * (the two differ in padding, which no input can undo). The module is generated from the
 * permutation's definition below (not a copied binary), and tests compare it with viem's.
 */

const RATE_BYTES = 136; // 1600-bit state, 512-bit capacity
const STATE_BYTES = 200;
const INPUT_OFFSET = 256;
const PAGE_BYTES = 65_536;

// Lane x + 5y is rotated left by ROTATIONS[x + 5y] (the Keccak reference's ρ offsets).
const ROTATIONS = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

/** The 24 ι round constants, from the reference's LFSR rather than a table of literals. */
function roundConstants(): bigint[] {
  const constants: bigint[] = [];
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let constant = 0n;
    for (let j = 0; j < 7; j++) {
      r = ((r << 1) ^ ((r >> 7) * 0x71)) & 0xff;
      if (r & 2) constant ^= 1n << ((1n << BigInt(j)) - 1n);
    }
    constants.push(constant);
  }
  return constants;
}

function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function signedLeb(value: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n;
    if ((value === 0n && (byte & 0x40) === 0) || (value === -1n && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
}

const vector = (items: number[][]) => [...unsignedLeb(items.length), ...items.flat()];
const section = (id: number, contents: number[]) => [id, ...unsignedLeb(contents.length), ...contents];
const name = (text: string) => [...unsignedLeb(text.length), ...Buffer.from(text, 'latin1')];

// Opcodes of the WebAssembly MVP used below.
const op = {
  get: (local: number) => [0x20, ...unsignedLeb(local)],
  set: (local: number) => [0x21, ...unsignedLeb(local)],
  tee: (local: number) => [0x22, ...unsignedLeb(local)],
  i32: (value: number) => [0x41, ...signedLeb(BigInt(value))],
  i64: (value: bigint) => [0x42, ...signedLeb(BigInt.asIntN(64, value))],
  load: (offset: number) => [0x29, 3, ...unsignedLeb(offset)],
  store: (offset: number) => [0x37, 3, ...unsignedLeb(offset)],
  xor: [0x85],
  and: [0x83],
  rotl: [0x89],
  add32: [0x6a],
  sub32: [0x6b],
};

/** `absorb(offset, blocks)`: XORs `blocks` rate-sized blocks at `offset` into the state at 0, permuting after each. */
function absorbFunctionBody(): number[] {
  // Locals: 0 offset, 1 blocks (i32 parameters); then the i64 lanes a, b (after ρ and π), c and d (θ).
  const a = (i: number) => 2 + i;
  const b = (i: number) => 27 + i;
  const c = (i: number) => 52 + i;
  const d = (i: number) => 57 + i;
  const code: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const part of parts) code.push(...part);
  };
  for (let i = 0; i < 25; i++) emit(op.i32(0), op.load(8 * i), op.set(a(i)));
  emit([0x03, 0x40]); // loop
  for (let i = 0; i < RATE_BYTES / 8; i++) emit(op.get(a(i)), op.get(0), op.load(8 * i), op.xor, op.set(a(i)));
  for (const constant of roundConstants()) {
    for (let x = 0; x < 5; x++) emit(op.get(a(x)), op.get(a(x + 5)), op.xor, op.get(a(x + 10)), op.xor, op.get(a(x + 15)), op.xor, op.get(a(x + 20)), op.xor, op.set(c(x)));
    for (let x = 0; x < 5; x++) emit(op.get(c((x + 4) % 5)), op.get(c((x + 1) % 5)), op.i64(1n), op.rotl, op.xor, op.set(d(x)));
    for (let i = 0; i < 25; i++) emit(op.get(a(i)), op.get(d(i % 5)), op.xor, op.set(a(i)));
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        const rotation = ROTATIONS[x + 5 * y] as number;
        emit(op.get(a(x + 5 * y)), rotation === 0 ? [] : [...op.i64(BigInt(rotation)), ...op.rotl], op.set(b(y + 5 * ((2 * x + 3 * y) % 5))));
      }
    }
    for (let y = 0; y < 5; y++) {
      for (let x = 0; x < 5; x++) {
        emit(op.get(b(x + 5 * y)), op.get(b(((x + 1) % 5) + 5 * y)), op.i64(-1n), op.xor, op.get(b(((x + 2) % 5) + 5 * y)), op.and, op.xor, op.set(a(x + 5 * y)));
      }
    }
    emit(op.get(a(0)), op.i64(constant), op.xor, op.set(a(0)));
  }
  emit(op.get(0), op.i32(RATE_BYTES), op.add32, op.set(0));
  emit(op.get(1), op.i32(1), op.sub32, op.tee(1), [0x0d, 0x00]); // br_if to the loop's start
  emit([0x0b]); // end loop
  for (let i = 0; i < 25; i++) emit(op.i32(0), op.get(a(i)), op.store(8 * i));
  emit([0x0b]);
  const locals = vector([[...unsignedLeb(60), 0x7e]]);
  const body = [...locals, ...code];
  return [...unsignedLeb(body.length), ...body];
}

function assemble(): Uint8Array {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, ...vector([[0x7f], [0x7f]]), ...vector([])]])),
    ...section(3, vector([[0x00]])),
    ...section(5, vector([[0x00, 0x01]])),
    ...section(7, vector([[...name('absorb'), 0x00, 0x00], [...name('memory'), 0x02, 0x00]])),
    ...section(10, vector([absorbFunctionBody()])),
  ]);
}

// The project's TypeScript libraries (Node's, no DOM) do not declare the WebAssembly JS API.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { absorb: (offset: number, blocks: number) => void; memory: WasmMemory } };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const { absorb, memory } = new wasm.Instance(new wasm.Module(assemble())).exports;
let heap = new Uint8Array(memory.buffer);

/** Keccak-256 of `data` (a fresh 32-byte array). */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  const blocks = Math.floor(data.length / RATE_BYTES) + 1;
  const end = INPUT_OFFSET + blocks * RATE_BYTES;
  if (end > heap.length) {
    memory.grow(Math.ceil((end - heap.length) / PAGE_BYTES));
    heap = new Uint8Array(memory.buffer);
  }
  heap.fill(0, 0, STATE_BYTES);
  heap.set(data, INPUT_OFFSET);
  heap.fill(0, INPUT_OFFSET + data.length, end);
  heap[INPUT_OFFSET + data.length] = 0x01;
  heap[end - 1] = (heap[end - 1] as number) | 0x80;
  absorb(INPUT_OFFSET, blocks);
  return heap.slice(0, 32);
}
