import { describe, expect, it } from 'vitest';
import { readAddresses } from '../../../src/scoring/batches/address-stream.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const limits = { max: 10, bodyLimitBytes: 10_000 };

async function read(pieces: string[], format: 'json' | 'csv', extra: Partial<Parameters<typeof readAddresses>[2]> = {}) {
  const packed = await readAddresses(pieces, format, { ...limits, ...extra });
  return packed.slice(0, packed.count);
}

async function refusal(pieces: string[], format: 'json' | 'csv', extra: Partial<Parameters<typeof readAddresses>[2]> = {}) {
  return read(pieces, format, extra).then(
    () => null,
    (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
  );
}

describe('reading a batch body as it arrives', () => {
  it('reads the same addresses however the JSON body is cut into pieces, escapes and case included', async () => {
    const body = ` { "addresses" : [ "${addressNo(1).toUpperCase().replace('0X', '0x')}", "\\u0030x${addressNo(2).slice(2)}" ] } `;
    for (let cut = 0; cut <= body.length; cut++) {
      expect(await read([body.slice(0, cut), body.slice(cut)], 'json')).toEqual([addressNo(1), addressNo(2)]);
    }
  });

  it('reads a CSV body with a header, CR LF, blank and quoted lines, cut anywhere', async () => {
    const body = `address\r\n${addressNo(1)}\r\n\r\n"${addressNo(2)}"\r\n${addressNo(3)}`;
    for (let cut = 0; cut <= body.length; cut += 7) {
      expect(await read([body.slice(0, cut), body.slice(cut)], 'csv')).toEqual([1, 2, 3].map(addressNo));
    }
  });

  it.each([
    ['a non-string address', 'json', [`{"addresses":["${addressNo(1)}",5]}`], 'invalid_address', 'addresses[1]'],
    ['an overlong string, before its end arrives', 'json', [`{"addresses":["${'0'.repeat(100)}`], 'invalid_address', 'addresses[0]'],
    ['another field', 'json', ['{"addresses":[],"x":1}'], 'invalid_request', 'unknown field'],
    ['the field twice', 'json', [`{"addresses":["${addressNo(1)}"],"addresses":[]}`], 'invalid_request', 'twice'],
    ['broken JSON', 'json', [`{"addresses":["${addressNo(1)}"`], 'invalid_json', 'not valid JSON'],
    ['no address', 'json', ['{"addresses":[]}'], 'invalid_request', 'at least one'],
    ['a bad line', 'csv', [`address\n${addressNo(1)}\nnope\n`], 'invalid_address', 'Line 3'],
    ['an overlong line, before its end arrives', 'csv', [`${addressNo(1)}\n${'x'.repeat(300)}`], 'invalid_address', 'Line 2'],
    ['more than the most addresses', 'csv', [Array.from({ length: 11 }, (_, i) => addressNo(i + 1)).join('\n')], 'invalid_request', 'more than 10'],
  ] as const)('refuses %s', async (_name, format, pieces, code, named) => {
    const refused = await refusal([...pieces], format);
    expect(refused?.code).toBe(code);
    expect(refused?.message).toContain(named);
  });

  it('refuses the address past the quota left, and a body past its byte limit, as they arrive', async () => {
    const quota = { allowed: 2, refusal: (count: number) => Object.assign(new Error(`quota at ${count}`), { code: 'batch_quota_exceeded' }) as never };
    const refused = await refusal([[1, 2, 3].map(addressNo).join('\n')], 'csv', { quota });
    expect(refused).toEqual({ code: 'batch_quota_exceeded', message: 'quota at 3' });
    expect((await refusal(['\n'.repeat(6000), '\n'.repeat(6000)], 'csv'))?.code).toBe('payload_too_large');
  });
});
